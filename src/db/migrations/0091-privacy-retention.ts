import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

/**
 * Retention of form submissions and finished enrichment jobs (issue 26, docs/privacy.md): the
 * indexes the hourly pruning walks, oldest first, across tenants.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.createIndex('form_submissions_created').on('form_submissions').column('created_at').execute();
  await db.schema
    .createIndex('enrichment_jobs_completed')
    .on('enrichment_jobs')
    .column('completed_at')
    .where(sql.ref('completed_at'), 'is not', null)
    .execute();
}
