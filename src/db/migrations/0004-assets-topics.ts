import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/** Files (uploaded image bytes and their previews), image assets, topics and topic entries. */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  const blob = sql.raw(engine === 'sqlite' ? 'blob' : 'bytea');

  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('declared_content_type', 'text', (c) => c.notNull())
    .addColumn('declared_size', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull()) // pending | completed
    .addColumn('upload_expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('content_type', 'text') // sniffed from the bytes, set on completion
    .addColumn('size', 'integer')
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('storage_key', 'text')
    .addColumn('preview_status', 'text') // pending | ready | failed, once completed
    .addColumn('preview_key', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('completed_at', t.timestamp)
    .execute();
  await db.schema.createIndex('files_tenant').on('files').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('files_status').on('files').columns(['status', 'upload_expires_at']).execute();
  await db.schema.createIndex('files_preview').on('files').columns(['preview_status', 'id']).execute();

  // The shared blob store of multi-node deployments (FILE_STORAGE=database): keyed by storage key.
  await db.schema
    .createTable('file_blobs')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('bytes', blob, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('assets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('asset_type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('file_id', 'text', (c) => c.notNull().references('files.id'))
    .addColumn('parent_asset_id', 'text', (c) => c.references('assets.id'))
    .addColumn('hidden', t.boolean, (c) => c.notNull())
    .addColumn('tags', t.json, (c) => c.notNull())
    .addColumn('ai_description', 'text')
    .addColumn('described_at', t.timestamp) // when an image describer (if configured) handled it
    .addColumn('lifecycle_state', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('trashed_at', t.timestamp)
    .addColumn('deleted_at', t.timestamp)
    .execute();
  await db.schema.createIndex('assets_tenant').on('assets').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('assets_file').on('assets').column('file_id').execute();
  await db.schema.createIndex('assets_parent').on('assets').column('parent_asset_id').execute();
  await sql`create index assets_undescribed on assets (id) where described_at is null`.execute(db);

  await db.schema
    .createTable('topics')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text')
    .addColumn('sort_order', t.bigint, (c) => c.notNull())
    .addColumn('is_default', t.boolean, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('topics_tenant').on('topics').columns(['tenant_id', 'sort_order', 'id']).execute();
  // At most one default topic per tenant, whatever the interleaving of first requests.
  await sql`create unique index topics_one_default on topics (tenant_id) where is_default`.execute(db);

  await db.schema
    .createTable('topic_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('topic_id', 'text', (c) => c.notNull().references('topics.id'))
    .addColumn('sort_order', t.bigint, (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('topic_entries_topic')
    .on('topic_entries')
    .columns(['topic_id', 'sort_order', 'id'])
    .execute();
}
