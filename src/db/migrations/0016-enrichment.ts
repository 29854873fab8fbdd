import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { columnTypes } from './column-types.js';

/**
 * Enrichment jobs: one row per form submission (its id is the key, so enqueueing twice is one
 * job), snapshotting what the enricher needs. The row is its own queue entry: `available_at` is
 * the retry time while `queued` and the end of the worker's lease while `processing`.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const t = columnTypes(engine);

  await db.schema
    .createTable('enrichment_jobs')
    .addColumn('form_submission_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('page_id', 'text', (c) => c.notNull())
    .addColumn('audience_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('company', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('lease_token', 'text')
    .addColumn('available_at', t.timestamp, (c) => c.notNull())
    .addColumn('provider', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('completed_at', t.timestamp)
    .execute();
  // Only unfinished jobs are ever looked for by the worker; finished ones stay out of the index.
  await db.schema
    .createIndex('enrichment_jobs_runnable')
    .on('enrichment_jobs')
    .columns(['available_at'])
    .where(sql.ref('status'), 'in', sql`('queued', 'processing')`)
    .execute();
  await db.schema
    .createIndex('enrichment_jobs_person')
    .on('enrichment_jobs')
    .columns(['tenant_id', 'person_id'])
    .execute();
}
