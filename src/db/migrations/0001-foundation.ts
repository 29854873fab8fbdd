import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes, createSubstringIndex, idColumns } from './column-types.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  const n = t.names;

  if (engine === 'postgres') await sql`create extension if not exists pg_trgm`.execute(db);

  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('revoked_at', t.timestamp)
    .execute();
  await db.schema.createIndex('api_keys_tenant').on('api_keys').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('service_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  await sql
    .raw(
      `create table pages (
        ${idColumns(engine, true)},
        tenant_id text not null references tenants(id),
        name text not null,
        title text not null,
        page_context text not null,
        page_type text not null,
        status text not null,
        brand_id text not null,
        actions ${n.json} not null,
        action_card_widgets ${n.json} not null,
        footer_links ${n.json} not null,
        scripts ${n.json} not null,
        header_action_id text,
        metadata ${n.json} not null,
        audiences_count integer not null default 0,
        created_at ${n.timestamp} not null,
        updated_at ${n.timestamp} not null,
        archived_at ${n.timestamp},
        deleted_at ${n.timestamp}
      )`,
    )
    .execute(db);
  // Partial: every API read filters on deleted_at is null, so listing and the exact count walk this
  // index alone instead of reading each page row to check deleted_at.
  await db.schema
    .createIndex('pages_tenant_visible')
    .on('pages')
    .columns(['tenant_id', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await createSubstringIndex(db, engine, 'pages', ['name']);

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_tenant').on('events').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['tenant_id', 'operation', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
}
