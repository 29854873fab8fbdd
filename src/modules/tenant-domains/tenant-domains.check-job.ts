import type { TenantDomainChecksTable } from '../../db/schema.js';
import { MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import type { TxtResolver } from '../../net/dns-resolver.js';
import { done, LeasedJobs, type LeasedJobDeps, type LeasedRow } from '../../workers/leased-jobs.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import {
  completePlannedCheck,
  lookUpPlannedCheck,
  proofResolver,
  type DomainLookUp,
} from './tenant-domains.verification.js';

/**
 * The background check of tenant domains (docs/pages-runtime.md, Domains) as a kind of the one
 * leased-job runner: a pending claim is retried until it is proven or its period ends, a verified
 * domain is re-checked for as long as it lives (and stops serving after the grace period once its
 * proof is gone). Each domain has one job row (tenant_domain_checks), due at the domain's
 * `next_check_at`; a run looks the proof up outside any transaction and its completion applies
 * the rules of tenant-domains.verification.ts, then plans the next run. A DNS failure is a result
 * (the rules decide), not a failed run: only a crash or a lost lease runs a check again early.
 */

type DomainCheckJob = LeasedRow & Pick<TenantDomainChecksTable, 'tenant_domain_id'>;

/** Wakes nobody: checks are planned minutes to hours ahead, and the worker polls. */
const DOMAIN_CHECK_CHANNEL = 'tenant-domain-checks';

const DOMAIN_CHECK_SETTINGS = {
  // A look-up waits at most 5 s (CHECK_DNS_TIMEOUT_MS); the rest is the two transactions.
  leaseMs: 30 * SECOND_MS,
  // Runs lost to crashes before the job is given up (it is then planned again: see `fail`).
  maxAttempts: 3,
  concurrency: 4,
  pollMs: MINUTE_MS,
};

export interface DomainCheckDeps extends LeasedJobDeps {
  resolver: TxtResolver;
}

export function domainCheckJobs(deps: DomainCheckDeps) {
  const { clock, logger, resolver } = deps;
  return new LeasedJobs<'tenant_domain_checks', DomainCheckJob, DomainLookUp, string>(
    {
      name: 'tenant-domain-checks',
      channel: DOMAIN_CHECK_CHANNEL,
      table: 'tenant_domain_checks',
      key: 'tenant_domain_id',
      columns: [],
      statuses: { waiting: ['due'], running: 'checking' },
      settings: DOMAIN_CHECK_SETTINGS,
      work: async (job, scope) => done(await lookUpPlannedCheck(scope, job.tenant_domain_id, resolver)),
      complete: (tx, job, found) => completePlannedCheck(tx, clock, job.tenant_domain_id, found, logger),
      // A job whose every lease ran out (a crashing resolver?) is not the end of the domain's
      // checks: it is planned again from the domain's schedule, without a result.
      fail: (tx, job) => completePlannedCheck(tx, clock, job.tenant_domain_id, null, logger),
      interrupted: (job) => `the worker's lease expired on all ${job.attempts} attempts`,
    },
    deps,
  );
}

export function domainCheckWorker(ctx: WorkerContext): BackgroundWorker {
  return domainCheckJobs({ ...ctx, resolver: proofResolver(ctx.config) }).worker();
}
