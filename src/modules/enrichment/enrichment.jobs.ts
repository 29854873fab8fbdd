import { randomUUID } from 'node:crypto';
import type { TenantScope } from '../../db/tenant-scope.js';
import { isoNow, systemClock, type Clock } from '../../lib/clock.js';
import { appendEvent } from '../../outbox/events.js';
import { recordAccountActivity } from '../account-activity/index.js';
import { ensureAccount, getAccount } from '../accounts/index.js';
import { findPerson, getPerson, patchPerson } from '../persons/index.js';
import type { EnrichmentFindings, FailureReason } from './enrichment.enricher.js';
import * as q from './enrichment.queries.js';

/**
 * The enrichment job of a form submission: queued in the submission's transaction, claimed by a
 * worker (a lease), run outside any transaction, and finished in a transaction that only succeeds
 * while the lease is still the worker's. Finishing appends exactly one of `form.enriched` or
 * `form.enrichment_failed`, in the same transaction as the job's final status.
 */

/** The worker wakes on this channel: notify it after committing a transaction that enqueued. */
export const ENRICHMENT_CHANNEL = 'enrichment';
/** Runs a job gets (including ones lost to a crash) before it fails for good. */
const MAX_ENRICHMENT_ATTEMPTS = 5;
/** Wait before run n+1 after a retryable failure of run n: 2 s, 10 s, 1 min, 5 min. */
export const ENRICHMENT_RETRY_DELAYS_MS = [2_000, 10_000, 60_000, 300_000];
/** The longest `Retry-After` honoured; a provider asking for more gets this. */
const ENRICHMENT_RETRY_AFTER_MAX_MS = 15 * 60_000;

export interface EnrichmentRequest {
  formSubmissionId: string;
  personId: string;
  email: string;
  name: string | null;
  company: string | null;
  pageId: string;
  audienceId: string;
}

/**
 * Queues the enrichment of a form submission, in the caller's transaction (the submission's), so
 * the job exists if and only if the submission does. Idempotent: a submission has one job; a
 * second call for it changes nothing. Notify ENRICHMENT_CHANNEL after the commit.
 */
export async function enqueueEnrichment(
  scope: TenantScope,
  request: EnrichmentRequest,
  clock: Clock = systemClock,
): Promise<void> {
  const now = isoNow(clock);
  await q.insertJobIfNew(scope, {
    form_submission_id: request.formSubmissionId,
    person_id: request.personId,
    page_id: request.pageId,
    audience_id: request.audienceId,
    email: request.email,
    name: request.name,
    company: request.company,
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
}

export interface ClaimedJob {
  token: string;
  job: q.JobRow;
}

/**
 * Takes a due job: a new lease (token, expiry) and one more attempt. A job still `processing`
 * whose lease ran out was held by a worker that died; once such losses used every attempt, the
 * job fails (`enrichment_interrupted`) instead of being run again. Returns null when the job is
 * not runnable any more.
 */
export async function claimJob(
  tx: TenantScope,
  clock: Clock,
  formSubmissionId: string,
  leaseMs: number,
  maxAttempts = MAX_ENRICHMENT_ATTEMPTS,
  provider = 'domain',
): Promise<ClaimedJob | null> {
  const job = await q.findJob(tx, formSubmissionId, { lock: true });
  if (job === undefined || (job.status !== 'queued' && job.status !== 'processing')) return null;
  const now = clock.now();
  if (job.available_at > now.toISOString()) return null;
  if (job.status === 'processing' && job.attempts >= maxAttempts) {
    await finishFailed(tx, clock, job, job.lease_token, {
      provider,
      reason: 'enrichment_interrupted',
      detail: `the worker's lease expired on all ${job.attempts} attempts`,
    });
    return null;
  }
  const token = randomUUID();
  const moved = await q.updateJob(
    tx,
    formSubmissionId,
    { status: job.status, leaseToken: job.lease_token },
    {
      status: 'processing',
      attempts: job.attempts + 1,
      lease_token: token,
      available_at: new Date(now.getTime() + leaseMs).toISOString(),
      updated_at: now.toISOString(),
    },
  );
  return moved
    ? { token, job: { ...job, status: 'processing', attempts: job.attempts + 1, lease_token: token } }
    : null;
}

/** What one run of a job came to. */
export type RunOutcome =
  | { kind: 'enriched'; provider: string; domain: string; findings: EnrichmentFindings }
  | { kind: 'failed'; provider: string; reason: FailureReason; detail: string; retryAfterMs?: number };

export type CompletionResult = 'enriched' | 'failed' | 'retry' | 'stale';

/**
 * Records a run's outcome if the lease is still `token`'s (a job taken over meanwhile is left
 * alone: 'stale'). A failure with `retryAfterMs` waits for another run unless the attempts are
 * used up; every other outcome is final and appends the job's one event.
 */
export async function completeJob(
  tx: TenantScope,
  clock: Clock,
  formSubmissionId: string,
  token: string,
  outcome: RunOutcome,
  options: { maxAttempts?: number; retryDelaysMs?: readonly number[] } = {},
): Promise<CompletionResult> {
  const maxAttempts = options.maxAttempts ?? MAX_ENRICHMENT_ATTEMPTS;
  const delays = options.retryDelaysMs ?? ENRICHMENT_RETRY_DELAYS_MS;
  const job = await q.findJob(tx, formSubmissionId, { lock: true });
  if (job === undefined || job.status !== 'processing' || job.lease_token !== token) return 'stale';

  if (outcome.kind === 'failed') {
    if (outcome.retryAfterMs !== undefined && job.attempts < maxAttempts) {
      const base = delays[Math.min(job.attempts, delays.length) - 1] ?? 0;
      const delay = Math.max(base, Math.min(outcome.retryAfterMs, ENRICHMENT_RETRY_AFTER_MAX_MS));
      const now = clock.now();
      await q.updateJob(
        tx,
        formSubmissionId,
        { status: 'processing', leaseToken: token },
        {
          status: 'queued',
          lease_token: null,
          provider: outcome.provider,
          last_error: outcome.detail.slice(0, 2000),
          available_at: new Date(now.getTime() + delay).toISOString(),
          updated_at: now.toISOString(),
        },
      );
      return 'retry';
    }
    return (await finishFailed(tx, clock, job, token, outcome)) ? 'failed' : 'stale';
  }
  return (await finishEnriched(tx, clock, job, token, outcome)) ? 'enriched' : 'stale';
}

async function finishFailed(
  tx: TenantScope,
  clock: Clock,
  job: q.JobRow,
  token: string | null,
  failure: { provider: string; reason: FailureReason; detail: string },
): Promise<boolean> {
  const now = isoNow(clock);
  const moved = await q.updateJob(
    tx,
    job.form_submission_id,
    { status: 'processing', leaseToken: token },
    {
      status: 'failed',
      lease_token: null,
      provider: failure.provider,
      failure_reason: failure.reason,
      last_error: failure.detail.slice(0, 2000),
      updated_at: now,
      completed_at: now,
    },
  );
  if (!moved) return false;
  await appendEvent(tx, clock, 'form.enrichment_failed', {
    formSubmissionId: job.form_submission_id,
    person: await personShown(tx, job.person_id),
    failure: { reason: failure.reason, attempts: job.attempts, provider: failure.provider },
  });
  return true;
}

/**
 * The account of the email's domain (found or created, its name filled if it has none), the
 * person's empty fields filled (through the persons module, so the account link follows), the
 * account's latestActivityAt moved to the submission's time. Never overwrites what the tenant set.
 */
async function finishEnriched(
  tx: TenantScope,
  clock: Clock,
  job: q.JobRow,
  token: string,
  outcome: Extract<RunOutcome, { kind: 'enriched' }>,
): Promise<boolean> {
  const now = isoNow(clock);
  const moved = await q.updateJob(
    tx,
    job.form_submission_id,
    { status: 'processing', leaseToken: token },
    {
      status: 'enriched',
      lease_token: null,
      provider: outcome.provider,
      last_error: null,
      updated_at: now,
      completed_at: now,
    },
  );
  if (!moved) return false;

  const fieldsFilled: string[] = [];
  const ensured = await ensureAccount(tx, clock, outcome.domain, outcome.findings.companyName);
  if (ensured.created) fieldsFilled.push('account');
  if (ensured.nameFilled || (ensured.created && ensured.account.name !== null)) fieldsFilled.push('account.name');

  const person = await findPerson(tx, job.person_id);
  if (person !== undefined) {
    const patch: { domain?: string; name?: string } = {};
    if (person.domain === null) patch.domain = outcome.domain;
    const personName = outcome.findings.personName;
    if (personName !== null && hasPlaceholderName(person) && personName !== person.name) patch.name = personName;
    if (patch.domain !== undefined) fieldsFilled.push('person.domain');
    if (patch.name !== undefined) fieldsFilled.push('person.name');
    if (Object.keys(patch).length > 0) await patchPerson(tx, clock, job.person_id, patch);
  }
  // The submission is activity of the company, whether or not the person links to it.
  await recordAccountActivity(tx, outcome.domain, job.created_at);

  await appendEvent(tx, clock, 'form.enriched', {
    formSubmissionId: job.form_submission_id,
    person: await personShown(tx, job.person_id),
    account: await getAccount(tx, ensured.account.accountId),
    enrichment: { provider: outcome.provider, fieldsFilled },
  });
  return true;
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
