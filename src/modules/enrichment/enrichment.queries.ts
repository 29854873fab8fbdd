import { sql, type Insertable, type Kysely, type SqlBool, type Updateable } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { forUpdate, forUpdateSkipLocked } from '../../db/dialect.js';
import type { DB, EnrichmentJobsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

export type JobRow = Awaited<ReturnType<typeof findJob>> & {};

/** Inserts the job unless the submission already has one; returns whether it did. */
export async function insertJobIfNew(scope: TenantScope, row: Omit<Insertable<EnrichmentJobsTable>, 'tenant_id'>) {
  const inserted = await scope
    .insertInto('enrichment_jobs', row)
    .onConflict((oc) => oc.column('form_submission_id').doNothing())
    .returning('enrichment_jobs.form_submission_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * The next job due (queued and its time has come, or processing and its lease has run out), over
 * all tenants; on PostgreSQL locked and skipped by concurrent workers. Worker code only.
 */
export async function nextRunnableJob(db: Kysely<DB>, engine: Engine, now: string) {
  const query = db
    .selectFrom('enrichment_jobs')
    .select(['form_submission_id', 'tenant_id'])
    // Literals, so that SQLite uses the partial index enrichment_jobs_runnable.
    .where(sql<SqlBool>`status in ('queued', 'processing')`)
    .where('available_at', '<=', now)
    .orderBy('available_at')
    .limit(1);
  return forUpdateSkipLocked(engine, query).executeTakeFirst();
}

export async function findJob(scope: TenantScope, formSubmissionId: string, options: { lock?: boolean } = {}) {
  const query = scope
    .selectFrom('enrichment_jobs')
    .selectAll()
    .where('enrichment_jobs.form_submission_id', '=', formSubmissionId);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
}

/**
 * Changes a job only while `expected` still holds (its status and, when given, the lease token
 * of the worker that changes it); returns whether it did. This is what makes a worker whose lease
 * was taken over unable to finish the job a second time.
 */
export async function updateJob(
  scope: TenantScope,
  formSubmissionId: string,
  expected: { status: EnrichmentJobsTable['status']; leaseToken?: string | null },
  changes: Updateable<EnrichmentJobsTable>,
) {
  let query = scope
    .updateTable('enrichment_jobs')
    .set(changes)
    .where('enrichment_jobs.form_submission_id', '=', formSubmissionId)
    .where('enrichment_jobs.status', '=', expected.status);
  if (expected.leaseToken !== undefined) {
    query =
      expected.leaseToken === null
        ? query.where('enrichment_jobs.lease_token', 'is', null)
        : query.where('enrichment_jobs.lease_token', '=', expected.leaseToken);
  }
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
