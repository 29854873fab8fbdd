import { randomBytes } from 'node:crypto';
import type { Updateable } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { AppContext } from '../../http/context.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { TenantDomainsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, conflict, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { isLocalhostName } from '../../lib/domain-name.js';
import { txtResolver, type TxtResolver } from '../../net/dns-resolver.js';
import { pageHostsFor } from './tenant-domains.hosts.js';
import * as q from './tenant-domains.queries.js';
import type { CheckResult, DomainVerification, TenantDomain } from './tenant-domains.schemas.js';
import { servingChanged } from '../serving/index.js';

/**
 * Proof of a domain claim (docs/pages-runtime.md, Domains): a TXT record at
 * `_audience-pages-challenge.<hostname>` holding `audience-pages-verification=<the claim's token>`.
 * Checked now by `POST /v0/tenant_domains/{id}/verify` (`verifyTenantDomain`), and on a schedule
 * by the background job (`checkTenantDomain`): a pending claim until it is proven or its period
 * ends, a verified domain again and again while it lives. The rules of both are `afterCheck`.
 */

const HOUR_MS = 60 * 60_000;

/** The label under the host name where the proof is published. */
const CHALLENGE_LABEL = '_audience-pages-challenge';
const CHALLENGE_VALUE_PREFIX = 'audience-pages-verification=';

/** How long the job keeps checking a pending claim (from the claim, or from the last verify call) before it expires. */
export const PENDING_CHECK_PERIOD_MS = 7 * 24 * HOUR_MS;
/** How often a verified domain's proof is checked again. */
export const VERIFIED_RECHECK_MS = 6 * HOUR_MS;
/** How long a verified domain keeps serving once a check found its proof missing. */
export const PROOF_GRACE_MS = 72 * HOUR_MS;
/** How often a verified domain is checked while its proof is missing or its DNS fails. */
export const FAILING_RECHECK_MS = HOUR_MS;
/** The longest one check waits for DNS. */
const CHECK_DNS_TIMEOUT_MS = 5_000;

/** The wait before the next check of a pending claim after `checks` checks: 1 min after the claim, doubling, at most 1 h. */
function pendingRetryDelayMs(checks: number): number {
  return Math.min(60_000 * 2 ** checks, HOUR_MS);
}

/** The resolver of the proofs: the service's own (c-ares), asking DNS_SERVERS when they are set. */
export function proofResolver(config: Pick<Config, 'dnsServers'>): TxtResolver {
  return txtResolver({ servers: config.dnsServers ?? undefined });
}

function challengeOf(hostname: string, token: string): DomainVerification {
  return { type: 'TXT', name: `${CHALLENGE_LABEL}.${hostname}`, value: `${CHALLENGE_VALUE_PREFIX}${token}` };
}

/** A new claim's token (128 random bits, hex) and state: `*.localhost` names are verified at once. */
export function newClaim(hostname: string, now: Date) {
  const at = now.toISOString();
  const token = randomBytes(16).toString('hex');
  if (isLocalhostName(hostname)) {
    return { verification_token: token, status: 'verified', verified_at: at, next_check_at: null } as const;
  }
  return {
    verification_token: token,
    status: 'pending',
    pending_until: new Date(now.getTime() + PENDING_CHECK_PERIOD_MS).toISOString(),
    next_check_at: new Date(now.getTime() + pendingRetryDelayMs(0)).toISOString(),
  } as const;
}

export function toTenantDomain(row: q.TenantDomainRow): TenantDomain {
  return {
    tenantDomainId: row.id,
    hostname: row.hostname,
    status: row.status,
    verification: challengeOf(row.hostname, row.verification_token),
    verifiedAt: row.verified_at,
    lastCheck:
      row.checked_at === null || row.check_result === null
        ? null
        : { checkedAt: row.checked_at, result: row.check_result, detail: row.check_detail ?? '' },
    nextCheckAt: row.next_check_at,
    pendingUntil: row.status === 'pending' ? row.pending_until : null,
    stopsServingAt: row.status === 'verified' ? stopsServingAt(row) : null,
    createdAt: row.created_at,
  };
}

function stopsServingAt(row: Pick<q.TenantDomainRow, 'proof_missing_since'>): string | null {
  return row.proof_missing_since === null
    ? null
    : new Date(Date.parse(row.proof_missing_since) + PROOF_GRACE_MS).toISOString();
}

/** Where the checks say what changed (a request's logger, the job's). */
type DomainLogger = Pick<Logger, 'info' | 'warn'>;

/** What one look-up found. `values`: the other values found (a few, shortened), for the tenant to compare. */
interface ProofCheck {
  result: CheckResult;
  detail: string;
  values?: string[];
}

const SHOWN_VALUES = 5;
const SHOWN_VALUE_LENGTH = 100;

/** Looks for the claim's record, now. Never throws: a failing DNS is a result like any other. */
async function lookUpProof(resolver: TxtResolver, challenge: DomainVerification): Promise<ProofCheck> {
  let values: string[];
  try {
    values = await resolver(challenge.name, AbortSignal.timeout(CHECK_DNS_TIMEOUT_MS));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOTFOUND') {
      return { result: 'no_record', detail: `No TXT record at ${challenge.name} (the name does not exist).` };
    }
    if (code === 'ENODATA') return { result: 'no_record', detail: `No TXT record at ${challenge.name}.` };
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${CHECK_DNS_TIMEOUT_MS / 1000} s`
        : typeof code === 'string'
          ? code.replace(/^E/, '')
          : 'failed';
    return { result: 'dns_error', detail: `The DNS look-up of ${challenge.name} failed (${reason}).` };
  }
  if (values.some((value) => value.trim() === challenge.value)) {
    return { result: 'found', detail: `The TXT record at ${challenge.name} holds the claim's value.` };
  }
  if (values.length === 0) return { result: 'no_record', detail: `No TXT record at ${challenge.name}.` };
  const shown = values
    .slice(0, SHOWN_VALUES)
    .map((v) => (v.length > SHOWN_VALUE_LENGTH ? `${v.slice(0, SHOWN_VALUE_LENGTH)}…` : v));
  const what = values.length === 1 ? 'another value' : `${values.length} other values`;
  return {
    result: 'other_values',
    detail: `The TXT record at ${challenge.name} holds ${what}, not the claim's: ${shown.map((v) => JSON.stringify(v)).join(', ')}.`,
    values: shown,
  };
}

const LOCALHOST_PROOF: ProofCheck = {
  result: 'found',
  detail: 'A *.localhost name needs no DNS record: it only ever reaches the visitor’s own machine.',
};

/** What a check changed, for the log and the caller. */
type CheckEvent =
  | 'verified'
  | 'proof_confirmed'
  | 'proof_restored'
  | 'proof_missing'
  | 'lapsed'
  | 'dns_failed'
  | 'still_pending'
  | 'expired';

type CheckState = Pick<
  q.TenantDomainRow,
  'status' | 'verified_at' | 'proof_missing_since' | 'pending_until' | 'check_attempts'
>;

/**
 * The rules: the row's next state after a check that found `check`, at `now`. A request (the
 * tenant's verify call) restarts an unverified claim's period; the schedule does not.
 *
 * - found → verified, re-checked every VERIFIED_RECHECK_MS.
 * - verified, no record or other values → serves on for PROOF_GRACE_MS from the first such check
 *   (hourly checks meanwhile); a check past the grace that still does not find it ends the
 *   verification: the claim is pending again (not serving, checked for another period).
 * - verified, DNS error → nothing changes but the next check (hourly): a failing resolver or zone
 *   is not evidence that the owner changed, and never ends a verification.
 * - unverified, not found → pending, checked 1, 2, 4 … 60 min apart until `pending_until`, then expired.
 */
function afterCheck(
  row: CheckState,
  check: ProofCheck,
  now: Date,
  trigger: 'request' | 'schedule',
): { event: CheckEvent; changes: Updateable<TenantDomainsTable> } {
  const at = now.toISOString();
  const inMs = (ms: number) => new Date(now.getTime() + ms).toISOString();
  const checked = { checked_at: at, check_result: check.result, check_detail: check.detail };

  if (check.result === 'found') {
    const wasVerified = row.status === 'verified';
    return {
      event: !wasVerified ? 'verified' : row.proof_missing_since !== null ? 'proof_restored' : 'proof_confirmed',
      changes: {
        ...checked,
        status: 'verified',
        verified_at: wasVerified ? (row.verified_at ?? at) : at,
        proof_missing_since: null,
        pending_until: null,
        check_attempts: 0,
        next_check_at: inMs(VERIFIED_RECHECK_MS),
      },
    };
  }

  if (row.status === 'verified') {
    const attempts = row.check_attempts + 1;
    if (check.result === 'dns_error') {
      return {
        event: 'dns_failed',
        changes: { ...checked, check_attempts: attempts, next_check_at: inMs(FAILING_RECHECK_MS) },
      };
    }
    const since = row.proof_missing_since ?? at;
    const graceEnds = Date.parse(since) + PROOF_GRACE_MS;
    if (now.getTime() >= graceEnds) {
      return {
        event: 'lapsed',
        changes: {
          ...checked,
          status: 'pending',
          proof_missing_since: null,
          pending_until: inMs(PENDING_CHECK_PERIOD_MS),
          check_attempts: 1,
          next_check_at: inMs(pendingRetryDelayMs(1)),
        },
      };
    }
    return {
      event: 'proof_missing',
      changes: {
        ...checked,
        proof_missing_since: since,
        check_attempts: attempts,
        next_check_at: new Date(Math.min(now.getTime() + FAILING_RECHECK_MS, graceEnds)).toISOString(),
      },
    };
  }

  const restarted = trigger === 'request' || row.pending_until === null;
  const pendingUntil = restarted ? inMs(PENDING_CHECK_PERIOD_MS) : row.pending_until!;
  const attempts = restarted ? 1 : row.check_attempts + 1;
  if (!restarted && now.getTime() >= Date.parse(pendingUntil)) {
    return {
      event: 'expired',
      changes: { ...checked, status: 'expired', check_attempts: attempts, next_check_at: null },
    };
  }
  const next = Math.min(now.getTime() + pendingRetryDelayMs(attempts), Date.parse(pendingUntil));
  return {
    event: 'still_pending',
    changes: {
      ...checked,
      status: 'pending',
      pending_until: pendingUntil,
      check_attempts: attempts,
      next_check_at: new Date(next).toISOString(),
    },
  };
}

type Completion =
  | { kind: 'checked'; event: CheckEvent; row: q.TenantDomainRow }
  | { kind: 'superseded'; row: q.TenantDomainRow }
  | { kind: 'gone' }
  | { kind: 'stale' };

/**
 * Applies a check to the row, in one transaction: first to prove a host name wins, so a claim
 * whose name another tenant holds verified ends (`superseded`), and a claim that becomes verified
 * ends everyone else's. With `expected`, only a row still as it was read before the look-up (the
 * job's; anything else done meanwhile makes this check stale). The domain's check job follows the
 * new `next_check_at` (unless the job is running: it plans itself when it finishes).
 */
async function applyCheck(
  scope: TenantScope,
  clock: Clock,
  id: string,
  check: ProofCheck,
  trigger: 'request' | 'schedule',
  expected?: q.TenantDomainRow,
): Promise<Completion> {
  return scope.transaction(async (tx) => {
    const outcome = await applyCheckIn(tx, clock, id, check, trigger, expected);
    if (outcome.kind === 'checked') await q.queueCheck(tx, id, outcome.row.next_check_at);
    return outcome;
  });
}

/** applyCheck's rules inside the caller's transaction (the check job's `complete`). */
async function applyCheckIn(
  tx: TenantScope,
  clock: Clock,
  id: string,
  check: ProofCheck,
  trigger: 'request' | 'schedule',
  expected?: Pick<q.TenantDomainRow, 'status' | 'checked_at'>,
): Promise<Completion> {
  const row = await q.findTenantDomain(tx, id, { lock: true });
  if (row === undefined) return { kind: 'gone' };
  if (expected && (row.status !== expected.status || row.checked_at !== expected.checked_at)) return { kind: 'stale' };
  if (row.status !== 'verified' && (await q.hasVerifiedHolder(tx, row.hostname, tx.tenantId))) {
    return { kind: 'superseded', row: await supersede(tx, row) };
  }
  const { event, changes } = afterCheck(row, check, clock.now(), trigger);
  const servingChanges = changes.status !== undefined && changes.status !== row.status;
  try {
    await tx.savepoint('domain_check', (sp) =>
      q.updateTenantDomain(sp, id, changes, { servingChanged: servingChanges }),
    );
  } catch (error) {
    // PostgreSQL: another tenant's proof of the same name committed first (the unique index of
    // verified host names). SQLite serializes writers, so the check above has seen it.
    if (!isUniqueViolation(error)) throw error;
    return { kind: 'superseded', row: await supersede(tx, row) };
  }
  if (servingChanges) await servingChanged(tx);
  if (event === 'verified') await q.supersedeOtherClaims(tx, row.hostname, id);
  return { kind: 'checked', event, row: (await q.findTenantDomain(tx, id))! };
}

/** Ends a claim whose host name another tenant holds verified. */
async function endClaim(scope: TenantScope, id: string): Promise<Completion> {
  return scope.transaction(async (tx): Promise<Completion> => {
    const row = await q.findTenantDomain(tx, id, { lock: true });
    return row === undefined ? { kind: 'gone' } : { kind: 'superseded', row: await supersede(tx, row) };
  });
}

async function supersede(tx: TenantScope, row: q.TenantDomainRow): Promise<q.TenantDomainRow> {
  if (row.status !== 'superseded') {
    await q.updateTenantDomain(tx, row.id, { status: 'superseded', next_check_at: null }, { servingChanged: false });
  }
  return { ...row, status: 'superseded', next_check_at: null };
}

function logOutcome(logger: DomainLogger, scope: TenantScope, outcome: Completion, before: q.TenantDomainRow): void {
  if (outcome.kind !== 'checked' && outcome.kind !== 'superseded') return;
  const fields = { tenantId: scope.tenantId, tenantDomainId: before.id, hostname: before.hostname };
  if (outcome.kind === 'superseded') {
    if (before.status !== 'superseded')
      logger.info(fields, 'tenant domain claim superseded: another tenant proved it first');
    return;
  }
  const { row } = outcome;
  switch (outcome.event) {
    case 'verified':
      return logger.info(fields, 'tenant domain verified: it serves pages');
    case 'proof_restored':
      return logger.info(fields, 'tenant domain proof found again');
    case 'proof_missing':
      // Once, at the first check that found it missing (a domain from before proofs existed was
      // put on the grace clock by its migration, unchecked).
      if (before.proof_missing_since === null || before.checked_at === null) {
        logger.warn(
          { ...fields, stopsServingAt: stopsServingAt(row), found: row.check_detail },
          'tenant domain proof missing: it stops serving at stopsServingAt unless the TXT record is back',
        );
      }
      return;
    case 'lapsed':
      return logger.warn(
        { ...fields, found: row.check_detail },
        'tenant domain no longer verified: its proof stayed missing through the grace period; it stopped serving',
      );
    case 'expired':
      return logger.info({ ...fields, found: row.check_detail }, 'tenant domain claim expired unproven');
    default:
      return;
  }
}

function notVerified(row: q.TenantDomainRow, check: ProofCheck): AppError {
  const { name, value } = challengeOf(row.hostname, row.verification_token);
  const state =
    row.status === 'verified'
      ? `The domain serves until ${stopsServingAt(row)} unless a check finds the record again.`
      : `The claim stays pending: the service checks again until ${row.pending_until}.`;
  return new AppError(
    'domain_not_verified',
    `${check.detail} Publish a TXT record at ${name} with the value "${value}" (DNS changes can take a while to be seen). ${state}`,
    [],
    undefined,
    {
      check: { result: check.result, detail: check.detail, values: check.values ?? [] },
      tenantDomain: toTenantDomain(row),
    },
  );
}

function takenByAnother(hostname: string): AppError {
  return conflict(
    'hostname_taken',
    `Another tenant proved the host name "${hostname}" first: this claim has ended (status superseded). Remove it.`,
  );
}

/**
 * `POST /v0/tenant_domains/{id}/verify` and `domain verify`: checks the proof now. Answers the
 * domain when it is verified (this check found the record); otherwise 422 `domain_not_verified`
 * saying what was found (the check is recorded first), or 409 `hostname_taken` when another
 * tenant holds the name verified. An unverified claim's period restarts with each call.
 */
export async function verifyTenantDomain(
  scope: TenantScope,
  clock: Clock,
  id: string,
  resolver: TxtResolver,
  logger?: DomainLogger,
): Promise<TenantDomain> {
  const before = await q.findTenantDomain(scope, id);
  if (before === undefined) throw notFound('tenant domain', id);
  if (before.status !== 'verified' && (await q.hasVerifiedHolder(scope, before.hostname, scope.tenantId))) {
    const ended = await endClaim(scope, id);
    if (logger) logOutcome(logger, scope, ended, before);
    throw ended.kind === 'gone' ? notFound('tenant domain', id) : takenByAnother(before.hostname);
  }
  const check = isLocalhostName(before.hostname)
    ? LOCALHOST_PROOF
    : await lookUpProof(resolver, challengeOf(before.hostname, before.verification_token));
  const outcome = await applyCheck(scope, clock, id, check, 'request');
  if (logger) logOutcome(logger, scope, outcome, before);
  if (outcome.kind === 'gone' || outcome.kind === 'stale') throw notFound('tenant domain', id);
  if (outcome.kind === 'superseded') throw takenByAnother(before.hostname);
  if (check.result !== 'found') throw notVerified(outcome.row, check);
  return toTenantDomain(outcome.row);
}

/** What the job's check of a domain came to (`not_scheduled`: no check is planned for it; `stale`: changed meanwhile). */
export type ScheduledCheck =
  { kind: 'not_scheduled' | 'stale' | 'gone' | 'superseded' } | { kind: 'checked'; event: CheckEvent };

/**
 * The background job's check of one domain with a check planned (`next_check_at` set: a pending
 * claim, or a verified domain other than `*.localhost`): looks the proof up outside any
 * transaction, then applies `afterCheck`'s rules to the row if no other check or change came
 * meanwhile, and logs what changed (a warning when a verified domain's proof goes missing, and
 * when it stops serving). Writing the outcome sets the next `next_check_at`. Which rows are due,
 * and when, is the job runner's: it calls this for rows whose `next_check_at` has passed.
 */
export async function checkTenantDomain(
  scope: TenantScope,
  clock: Clock,
  id: string,
  resolver: TxtResolver,
  logger: DomainLogger,
): Promise<ScheduledCheck> {
  const before = await q.findTenantDomain(scope, id);
  if (before === undefined) return { kind: 'gone' };
  const planned = before.next_check_at !== null && (before.status === 'pending' || before.status === 'verified');
  if (!planned) return { kind: 'not_scheduled' };
  const check = await lookUpProof(resolver, challengeOf(before.hostname, before.verification_token));
  const outcome = await applyCheck(scope, clock, id, check, 'schedule', before);
  logOutcome(logger, scope, outcome, before);
  return outcome.kind === 'checked' ? { kind: 'checked', event: outcome.event } : { kind: outcome.kind };
}

/**
 * What the check job's run found (outside any transaction), for its `complete`: the row as the
 * run read it (a change meanwhile makes the check stale) and the look-up; null: nothing planned.
 */
export type DomainLookUp = { before: q.TenantDomainRow; check: ProofCheck } | null;

/**
 * The check job's run (tenant-domains.check-job.ts): the look-up of a domain whose check is planned
 * (null when none is: the domain was removed, superseded, expired or is `*.localhost`).
 */
export async function lookUpPlannedCheck(scope: TenantScope, id: string, resolver: TxtResolver): Promise<DomainLookUp> {
  const before = await q.findTenantDomain(scope, id);
  if (before === undefined) return null;
  const planned = before.next_check_at !== null && (before.status === 'pending' || before.status === 'verified');
  if (!planned) return null;
  return { before, check: await lookUpProof(resolver, challengeOf(before.hostname, before.verification_token)) };
}

/**
 * The check job's completion, in the runner's transaction: the rules of `afterCheck`, logged; then
 * the job's next run at the domain's `next_check_at` (idle when none is planned).
 */
export async function completePlannedCheck(
  tx: TenantScope,
  clock: Clock,
  id: string,
  found: DomainLookUp,
  logger: DomainLogger,
): Promise<void> {
  if (found !== null) {
    const outcome = await applyCheckIn(tx, clock, id, found.check, 'schedule', found.before);
    logOutcome(logger, tx, outcome, found.before);
  }
  const row = await q.findTenantDomain(tx, id);
  await q.planNextCheck(tx, id, row?.next_check_at ?? null);
}

/**
 * "Check the proof now" as the API's verify route and the console's button do it: the check,
 * then a verified domain serves at once on this node (the page router's host names learn it).
 */
export function domainVerifier(ctx: AppContext) {
  const hosts = pageHostsFor(ctx);
  const resolver = proofResolver(ctx.config);
  return async (scope: TenantScope, id: string, logger?: DomainLogger): Promise<TenantDomain> => {
    const domain = await verifyTenantDomain(scope, ctx.clock, id, resolver, logger);
    hosts.add(domain.hostname, scope.tenantId);
    return domain;
  };
}
