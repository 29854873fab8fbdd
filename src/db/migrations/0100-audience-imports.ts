import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Imports the console starts (issue 28): one row per uploaded CSV, which is also its leased job
 * (`available_at`: when it is due while `queued`, the end of the worker's lease while `running`).
 * The row holds the file until the import ends (then `csv` is cleared) and its progress: rows in
 * the file, rows dealt with (`items_done`: rows run through the batch service, for resuming),
 * created, existing, failed, and the refused rows (`errors`, the first 1,000).
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);
  await db.schema
    .createTable('audience_imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('console_users.id'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('csv', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('lease_token', 'text')
    .addColumn('available_at', t.timestamp)
    .addColumn('rows', 'integer')
    .addColumn('rows_done', 'integer', (c) => c.notNull())
    .addColumn('items_done', 'integer', (c) => c.notNull())
    .addColumn('created', 'integer', (c) => c.notNull())
    .addColumn('existing', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('errors', t.json, (c) => c.notNull())
    .addColumn('failure', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('finished_at', t.timestamp)
    .execute();
  // The claim's loose index scan (workers/fair-claim.ts), over the rows still to run.
  await db.schema
    .createIndex('audience_imports_tenant_due')
    .on('audience_imports')
    .columns(['tenant_id', 'available_at'])
    .where(sql.ref('status'), 'in', ['queued', 'running'])
    .execute();
}
