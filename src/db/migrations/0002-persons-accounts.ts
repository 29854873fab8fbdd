import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes, createSubstringIndex, idColumns } from './column-types.js';

/**
 * Persons, their log entries and accounts. A person's identities (normalized email, phone
 * number, normalized social profile URL) and its slug are unique per tenant in the database, so
 * concurrent writes that resolve the same new identity create one person, not two. NULLs never
 * collide in a unique index on either engine, so a person may lack any of them.
 *
 * Persons link to accounts by `account_domain` (derived from the person's domain or email; see
 * persons.service.ts), so linked-person counts are read from an index, never maintained.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const n = columnTypes(engine).names;

  await sql
    .raw(
      `create table persons (
        ${idColumns(engine, true)},
        tenant_id text not null references tenants(id),
        name text not null,
        email text,
        email_normalized text,
        domain text,
        phone_number text,
        social_profile_url text,
        social_profile_normalized text,
        slug text not null,
        account_domain text,
        created_at ${n.timestamp} not null,
        updated_at ${n.timestamp} not null
      )`,
    )
    .execute(db);
  await db.schema.createIndex('persons_tenant').on('persons').columns(['tenant_id', 'id']).execute();
  await db.schema
    .createIndex('persons_email_unique')
    .on('persons')
    .columns(['tenant_id', 'email_normalized'])
    .unique()
    .execute();
  await db.schema
    .createIndex('persons_phone_unique')
    .on('persons')
    .columns(['tenant_id', 'phone_number'])
    .unique()
    .execute();
  await db.schema
    .createIndex('persons_social_unique')
    .on('persons')
    .columns(['tenant_id', 'social_profile_normalized'])
    .unique()
    .execute();
  await db.schema.createIndex('persons_slug_unique').on('persons').columns(['tenant_id', 'slug']).unique().execute();
  await db.schema.createIndex('persons_account').on('persons').columns(['tenant_id', 'account_domain', 'id']).execute();
  await createSubstringIndex(db, engine, 'persons', ['name', 'email', 'domain', 'phone_number']);

  await sql
    .raw(
      `create table person_logs (
        id text primary key,
        tenant_id text not null references tenants(id),
        person_id text not null references persons(id),
        source text not null,
        type text not null,
        payload ${n.json} not null,
        created_at ${n.timestamp} not null
      )`,
    )
    .execute(db);
  await db.schema
    .createIndex('person_logs_person')
    .on('person_logs')
    .columns(['tenant_id', 'person_id', 'created_at'])
    .execute();

  await sql
    .raw(
      `create table accounts (
        ${idColumns(engine, true)},
        tenant_id text not null references tenants(id),
        domain text not null,
        name text,
        created_at ${n.timestamp} not null,
        updated_at ${n.timestamp} not null,
        latest_activity_at ${n.timestamp}
      )`,
    )
    .execute(db);
  await db.schema.createIndex('accounts_tenant').on('accounts').columns(['tenant_id', 'id']).execute();
  await db.schema
    .createIndex('accounts_domain_unique')
    .on('accounts')
    .columns(['tenant_id', 'domain'])
    .unique()
    .execute();
  await createSubstringIndex(db, engine, 'accounts', ['domain', 'name']);
}
