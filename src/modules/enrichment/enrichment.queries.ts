import type { Insertable, Updateable } from 'kysely';
import type { EnrichmentJobsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

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
 * Writes a job's final status, which ends its lease (the job runner has checked, under lock, that
 * the lease was still held).
 */
export async function finishJob(
  scope: TenantScope,
  formSubmissionId: string,
  now: string,
  changes: Pick<Updateable<EnrichmentJobsTable>, 'status' | 'provider' | 'failure_reason' | 'last_error'>,
) {
  await scope
    .updateTable('enrichment_jobs')
    .set({ ...changes, lease_token: null, updated_at: now, completed_at: now })
    .where('enrichment_jobs.form_submission_id', '=', formSubmissionId)
    .execute();
}
