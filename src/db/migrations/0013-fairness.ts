import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';

/**
 * Issue 10, one tenant must not starve the others:
 * - the delivery queue by tenant (`status, tenant_id, next_attempt_at`), so the fair claim can
 *   step from one tenant with pending deliveries to the next with index seeks, and take each
 *   tenant's oldest due rows, however large another tenant's backlog is;
 * - `files.upload_attempts`: how many `PUT`s an upload URL has had (it allows only a few).
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_tenant_due')
    .on('webhook_deliveries')
    .columns(['status', 'tenant_id', 'next_attempt_at'])
    .execute();
  await db.schema
    .alterTable('files')
    .addColumn('upload_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
