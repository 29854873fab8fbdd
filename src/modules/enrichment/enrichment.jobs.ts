import type { EnrichmentJobsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { isoNow, systemClock, type Clock } from '../../lib/clock.js';
import { failureText } from '../../lib/limits.js';
import { appendEvent } from '../../outbox/events.js';
import type { LeasedRow } from '../../workers/leased-jobs.js';
import { recordAccountActivity } from '../account-activity/index.js';
import { ensureAccount, findAccountByDomain, getAccount } from '../accounts/index.js';
import { findPerson, getPerson, patchPerson } from '../persons/index.js';
import type { EnrichmentFindings, FailureReason } from './enrichment.enricher.js';
import * as q from './enrichment.queries.js';

/**
 * The enrichment job of a form submission: queued in the submission's transaction, and run by the
 * leased-job runner (enrichment.worker.ts). Finishing appends exactly one of `form.enriched` or
 * `form.enrichment_failed`, in the same transaction as the job's final status.
 */

/** The channel that wakes the enrichment worker once a job is queued. */
export const ENRICHMENT_CHANNEL = 'enrichment';

export interface EnrichmentRequest {
  formSubmissionId: string;
  personId: string;
  email: string;
  name: string | null;
  company: string | null;
  pageId: string;
  audienceId: string;
  /** The submission created the person: its empty domain and name may be filled (docs/forms.md#identity). */
  personCreated: boolean;
}

/**
 * Queues the enrichment of a form submission, in the caller's transaction (the submission's), so
 * the job exists if and only if the submission does. Idempotent: a submission has one job; a
 * second call for it changes nothing. The commit wakes the enrichment worker.
 */
export async function enqueueEnrichment(
  scope: TenantScope,
  request: EnrichmentRequest,
  clock: Clock = systemClock,
): Promise<void> {
  const now = isoNow(clock);
  const inserted = await q.insertJobIfNew(scope, {
    form_submission_id: request.formSubmissionId,
    person_id: request.personId,
    page_id: request.pageId,
    audience_id: request.audienceId,
    email: request.email,
    name: request.name,
    company: request.company,
    person_created: request.personCreated,
    status: 'queued',
    attempts: 0,
    lease_token: null,
    available_at: now,
    provider: null,
    failure_reason: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  });
  if (inserted) scope.afterCommit(ENRICHMENT_CHANNEL);
}

/** What the job runner reads of a job for the enrichment's functions. */
export type EnrichmentJob = LeasedRow &
  Pick<
    EnrichmentJobsTable,
    'form_submission_id' | 'person_id' | 'email' | 'name' | 'company' | 'created_at' | 'person_created'
  >;

/** What a successful run found. */
export interface Enrichment {
  provider: string;
  domain: string;
  findings: EnrichmentFindings;
}

/** Why a run failed (the last one's is the job's `form.enrichment_failed`). */
export interface EnrichmentFailure {
  provider: string;
  reason: FailureReason;
  detail: string;
}

/** Ends a job as failed, with its one `form.enrichment_failed` event. */
export async function failEnrichment(tx: TenantScope, clock: Clock, job: EnrichmentJob, failure: EnrichmentFailure) {
  await q.finishJob(tx, job.form_submission_id, isoNow(clock), {
    status: 'failed',
    provider: failure.provider,
    failure_reason: failure.reason,
    last_error: failureText(failure.detail),
  });
  await appendEvent(tx, clock, 'form.enrichment_failed', {
    formSubmissionId: job.form_submission_id,
    person: await personShown(tx, job.person_id),
    failure: { reason: failure.reason, attempts: job.attempts, provider: failure.provider },
  });
}

/**
 * The account of the email's domain (found or created, its name filled if it has none), the
 * person's empty fields filled (through the persons module, so the account link follows), the
 * account's latestActivityAt moved to the submission's time. Never overwrites what the tenant set.
 */
export async function completeEnrichment(
  tx: TenantScope,
  clock: Clock,
  job: EnrichmentJob,
  outcome: Enrichment,
  options: { createsAccounts: boolean },
) {
  await q.finishJob(tx, job.form_submission_id, isoNow(clock), {
    status: 'enriched',
    provider: outcome.provider,
    last_error: null,
  });

  const fieldsFilled: string[] = [];
  // A visitor's email creates an account only where the tenant opted in (FORM_CREATES_ACCOUNTS).
  let accountId: string | null = null;
  if (options.createsAccounts) {
    const ensured = await ensureAccount(tx, clock, outcome.domain, outcome.findings.companyName);
    if (ensured.created) fieldsFilled.push('account');
    if (ensured.nameFilled || (ensured.created && ensured.account.name !== null)) fieldsFilled.push('account.name');
    accountId = ensured.account.accountId;
  } else {
    accountId = (await findAccountByDomain(tx, outcome.domain))?.id ?? null;
  }

  // Only a person this submission created is filled in: a visitor never changes an existing person.
  const person = job.person_created ? await findPerson(tx, job.person_id) : undefined;
  if (person !== undefined) {
    const patch: { domain?: string; name?: string } = {};
    if (person.domain === null) patch.domain = outcome.domain;
    const personName = outcome.findings.personName;
    if (personName !== null && hasPlaceholderName(person) && personName !== person.name) patch.name = personName;
    if (patch.domain !== undefined) fieldsFilled.push('person.domain');
    if (patch.name !== undefined) fieldsFilled.push('person.name');
    if (Object.keys(patch).length > 0) await patchPerson(tx, clock, job.person_id, patch);
  }
  // The submission is activity of the company, whether or not the person links to it (opted in only:
  // otherwise a visitor could make any company look interested).
  if (options.createsAccounts) await recordAccountActivity(tx, outcome.domain, job.created_at);

  await appendEvent(tx, clock, 'form.enriched', {
    formSubmissionId: job.form_submission_id,
    person: await personShown(tx, job.person_id),
    account: accountId === null ? null : await getAccount(tx, accountId),
    enrichment: { provider: outcome.provider, fieldsFilled },
  });
}

/**
 * A person's name is required, so a person first known by an identity only was named after it
 * (docs/api.md, endpoint 11). Such a name stands for "no name" and may be replaced by a real one;
 * any other name was given by someone and stays.
 */
function hasPlaceholderName(person: {
  name: string;
  email: string | null;
  phone_number: string | null;
  social_profile_url: string | null;
}): boolean {
  return (
    person.name === person.email || person.name === person.phone_number || person.name === person.social_profile_url
  );
}

async function personShown(tx: TenantScope, personId: string) {
  return (await findPerson(tx, personId)) === undefined ? null : getPerson(tx, personId);
}
