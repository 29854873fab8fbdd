import type { Config } from '../../config.js';
import { MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import { failureText } from '../../lib/limits.js';
import { addressPolicy, httpsOnlyIn } from '../../net/address-policy.js';
import { dnsResolver } from '../../net/dns-resolver.js';
import {
  done,
  fail,
  LeasedJobs,
  retry,
  type LeasedJobDeps,
  type LeaseSettings,
  type WorkResult,
} from '../../workers/leased-jobs.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import { companyDomainOfEmail, domainEnricher, type Enricher } from './enrichment.enricher.js';
import { httpEnricher } from './enrichment.http-enricher.js';
import {
  completeEnrichment,
  ENRICHMENT_CHANNEL,
  failEnrichment,
  type Enrichment,
  type EnrichmentFailure,
  type EnrichmentJob,
} from './enrichment.jobs.js';

/** The enrichment job on the leased-job runner (docs/forms.md, Enrichment). */
export const ENRICHMENT_SETTINGS: Omit<LeaseSettings, 'leaseMs'> = {
  maxAttempts: 5,
  // A provider's latency is mostly waiting: several at once.
  concurrency: 8,
  pollMs: 5 * SECOND_MS,
  maxRetryAfterMs: 15 * MINUTE_MS,
};
/** The built-in enricher answers at once: its lease only has to outlive two short transactions. */
const DOMAIN_ENRICHER_LEASE_MS = 30 * SECOND_MS;
/** What the `http` enricher's lease adds to two request timeouts: the two transactions around it. */
const LEASE_SLACK_MS = 10 * SECOND_MS;

export interface EnrichmentDeps extends LeasedJobDeps {
  enricher: Enricher;
  /** FORM_CREATES_ACCOUNTS: a submission's email domain may create an account (docs/forms.md#identity). */
  createsAccounts: boolean;
  settings: LeaseSettings;
}

export function enrichmentJobs(deps: EnrichmentDeps) {
  const { enricher, clock } = deps;
  return new LeasedJobs<'enrichment_jobs', EnrichmentJob, Enrichment, EnrichmentFailure>(
    {
      name: 'form-enrichment',
      channel: ENRICHMENT_CHANNEL,
      table: 'enrichment_jobs',
      key: 'form_submission_id',
      columns: ['person_id', 'email', 'name', 'company', 'created_at', 'person_created'],
      statuses: { waiting: ['queued'], running: 'processing' },
      settings: deps.settings,
      work: (job) => enrich(deps, job),
      complete: (tx, job, found) =>
        completeEnrichment(tx, clock, job, found, { createsAccounts: deps.createsAccounts }),
      fail: (tx, job, failure) => failEnrichment(tx, clock, job, failure),
      interrupted: (job) => ({
        provider: enricher.name,
        reason: 'enrichment_interrupted',
        detail: `the worker's lease expired on all ${job.attempts} attempts`,
      }),
      onClaim: (_job, now) => ({ status: 'processing', updated_at: now }),
      onRetry: (_job, failure, now) => ({
        status: 'queued',
        provider: failure.provider,
        last_error: failureText(failure.detail),
        updated_at: now,
      }),
    },
    deps,
  );
}

/** One run: the domain rules, then the enricher (which may say to try again later). */
async function enrich(deps: EnrichmentDeps, job: EnrichmentJob): Promise<WorkResult<Enrichment, EnrichmentFailure>> {
  const domain = companyDomainOfEmail(job.email);
  if (!domain.ok) return fail({ provider: domainEnricher.name, reason: domain.reason, detail: domain.reason });
  const provider = deps.enricher.name;
  try {
    const answer = await deps.enricher.enrich({
      email: job.email,
      domain: domain.domain,
      name: job.name,
      company: job.company,
    });
    if (answer.ok) return done({ provider, domain: domain.domain, findings: answer.findings });
    const failure = { provider, reason: answer.reason, detail: answer.detail };
    return answer.retry === null ? fail(failure) : retry(failure, { afterMs: answer.retry.afterMs });
  } catch (err) {
    // An enricher must not throw; if one does, it is a fault of ours or theirs that may pass.
    deps.logger.error({ err }, 'enricher threw');
    return retry({ provider, reason: 'provider_unavailable', detail: String(err) });
  }
}

/** The enricher the configuration asks for: `http` when ENRICHMENT_URL is set, else `domain`. */
function configuredEnricher(config: Config): { enricher: Enricher; leaseMs: number } {
  if (config.enrichmentUrl === null) return { enricher: domainEnricher, leaseMs: DOMAIN_ENRICHER_LEASE_MS };
  return {
    enricher: httpEnricher({
      url: config.enrichmentUrl,
      token: config.enrichmentToken,
      timeoutMs: config.enrichmentTimeoutMs,
      policy: addressPolicy(config.webhookAllowPrivateNetworks),
      httpsOnly: httpsOnlyIn(config),
      resolver: dnsResolver({ servers: config.dnsServers ?? undefined }),
    }),
    // The request's timeout (DNS and connection included) and slack for the two transactions.
    leaseMs: 2 * config.enrichmentTimeoutMs + LEASE_SLACK_MS,
  };
}

export function enrichmentWorker(ctx: WorkerContext): BackgroundWorker {
  const { enricher, leaseMs } = configuredEnricher(ctx.config);
  const worker = enrichmentJobs({
    ...ctx,
    enricher,
    createsAccounts: ctx.config.formCreatesAccounts,
    settings: { ...ENRICHMENT_SETTINGS, leaseMs },
  }).worker();
  return {
    ...worker,
    stop: async () => {
      await worker.stop();
      enricher.close?.();
    },
  };
}
