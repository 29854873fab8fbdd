import type { Selectable } from 'kysely';
import type { FormSubmissionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

export type NewFormSubmission = Omit<Selectable<FormSubmissionsTable>, 'tenant_id'>;

/**
 * Inserts the submission unless its dedupe key is taken (then nothing: the caller reads the
 * holder). On PostgreSQL a concurrent insert of the same key waits for the other transaction and
 * then does nothing; on SQLite writers are serialized.
 */
export async function insertSubmissionIfNew(tx: TenantScope, row: NewFormSubmission): Promise<boolean> {
  const inserted = await tx
    .insertInto('form_submissions', row)
    .onConflict((oc) => oc.columns(['tenant_id', 'dedupe_key']).doNothing())
    .returning('id')
    .execute();
  return inserted.length === 1;
}

export async function findByDedupeKey(scope: TenantScope, dedupeKey: string) {
  return scope
    .selectFrom('form_submissions')
    .selectAll('form_submissions')
    .where('form_submissions.dedupe_key', '=', dedupeKey)
    .executeTakeFirst();
}

/** The newest identical submission since `since` (submissions without a token). */
export async function findRecentIdentical(scope: TenantScope, contentHash: string, since: string) {
  return scope
    .selectFrom('form_submissions')
    .selectAll('form_submissions')
    .where('form_submissions.content_hash', '=', contentHash)
    .where('form_submissions.created_at', '>=', since)
    .orderBy('form_submissions.created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The page and audience a submission names, for the event (titles and names as the API shows them). */
export async function findPageAndAudience(scope: TenantScope, pageId: string, audienceId: string) {
  return scope
    .selectFrom('audiences')
    .innerJoin('pages', (join) =>
      join.onRef('pages.id', '=', 'audiences.page_id').onRef('pages.tenant_id', '=', 'audiences.tenant_id'),
    )
    .select([
      'pages.id as page_id',
      'pages.title as page_title',
      'audiences.id as audience_id',
      'audiences.computed_name',
      'audiences.custom_name',
    ])
    .where('audiences.id', '=', audienceId)
    .where('pages.id', '=', pageId)
    .executeTakeFirst();
}
