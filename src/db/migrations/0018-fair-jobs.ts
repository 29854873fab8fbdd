import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

/**
 * Issue 22, one leased-job runner: versions to generate and enrichment jobs are claimed the way
 * webhook deliveries are, fairly across tenants (workers/fair-claim.ts), which steps from one
 * tenant with runnable jobs to the next and reads each one's earliest due time with index seeks:
 * (tenant_id, available_at) over the runnable rows (the same predicate as the claim's). They
 * replace the indexes by due time alone, which served the single global queue of before.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createIndex('audience_versions_tenant_due')
    .on('audience_versions')
    .columns(['tenant_id', 'available_at'])
    .where(sql.ref('status'), 'in', ['queued', 'pending', 'processing'])
    .execute();
  await db.schema.dropIndex('audience_versions_runnable').execute();
  await db.schema
    .createIndex('enrichment_jobs_tenant_due')
    .on('enrichment_jobs')
    .columns(['tenant_id', 'available_at'])
    .where(sql.ref('status'), 'in', ['queued', 'processing'])
    .execute();
  await db.schema.dropIndex('enrichment_jobs_runnable').execute();
}
