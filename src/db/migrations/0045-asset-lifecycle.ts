import { sql, type Kysely } from 'kysely';

/**
 * Issue 23, assets: lists filter by lifecycle state (newest first within it), and the purge of
 * deleted assets' bytes finds them by `deleted_at` without reading the live ones.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('assets_tenant_state')
    .on('assets')
    .columns(['tenant_id', 'lifecycle_state', 'id'])
    .execute();
  await sql`create index assets_deleted on assets (deleted_at) where deleted_at is not null`.execute(db);
}
