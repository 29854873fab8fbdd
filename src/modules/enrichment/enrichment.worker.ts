import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { addressPolicy } from '../../net/address-policy.js';
import { dnsResolver } from '../../net/dns-resolver.js';
import { EVENTS_CHANNEL } from '../../outbox/events.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import { companyDomainOfEmail, domainEnricher, type Enricher } from './enrichment.enricher.js';
import { httpEnricher } from './enrichment.http-enricher.js';
import {
  claimJob,
  completeJob,
  ENRICHMENT_CHANNEL,
  type CompletionResult,
  type RunOutcome,
} from './enrichment.jobs.js';
import * as q from './enrichment.queries.js';

/** How many jobs one process runs at once (a provider's latency is mostly waiting). */
const ENRICHMENT_PARALLEL_JOBS = 8;

export interface EnrichmentDeps {
  database: Database;
  clock: Clock;
  logger: Logger;
  notify: (channel: string) => void;
  enricher: Enricher;
  leaseMs: number;
  maxAttempts?: number;
  retryDelaysMs?: readonly number[];
}

export type EnrichmentStep = { formSubmissionId: string; result: CompletionResult | 'lost' } | null;

/**
 * One unit of the enrichment worker: (1) claim the next due job in a short transaction (on
 * PostgreSQL `for update skip locked`, so concurrent workers and processes take different jobs);
 * (2) apply the domain rules and ask the enricher, outside any transaction; (3) finish in a second
 * transaction that only succeeds while the lease is still ours. A worker that dies between (1) and
 * (3) leaves the job `processing` until its lease runs out; then any worker runs it again. Returns
 * null when nothing was due.
 */
export async function processNextEnrichment(deps: EnrichmentDeps): Promise<EnrichmentStep> {
  const { kysely, engine } = deps.database;
  const claimed = await kysely.transaction().execute(async (trx) => {
    const next = await q.nextRunnableJob(trx, engine, isoNow(deps.clock));
    if (next === undefined) return null;
    const tx = new TenantScope(trx, engine, next.tenant_id, true);
    return {
      tenantId: next.tenant_id,
      formSubmissionId: next.form_submission_id,
      claim: await claimJob(
        tx,
        deps.clock,
        next.form_submission_id,
        deps.leaseMs,
        deps.maxAttempts,
        deps.enricher.name,
      ),
    };
  });
  if (claimed === null) return null;
  if (claimed.claim === null) {
    deps.notify(EVENTS_CHANNEL); // a job given up at claim time emitted form.enrichment_failed
    return { formSubmissionId: claimed.formSubmissionId, result: 'lost' };
  }

  const outcome = await run(deps, claimed.claim.job);
  const result = await kysely
    .transaction()
    .execute((trx) =>
      completeJob(
        new TenantScope(trx, engine, claimed.tenantId, true),
        deps.clock,
        claimed.formSubmissionId,
        claimed.claim!.token,
        outcome,
        { maxAttempts: deps.maxAttempts, retryDelaysMs: deps.retryDelaysMs },
      ),
    );
  if (result === 'enriched' || result === 'failed') deps.notify(EVENTS_CHANNEL);
  else if (result === 'retry') {
    deps.logger.warn({ formSubmissionId: claimed.formSubmissionId, outcome }, 'enrichment will be retried');
  }
  return { formSubmissionId: claimed.formSubmissionId, result };
}

async function run(
  deps: EnrichmentDeps,
  job: { email: string; name: string | null; company: string | null },
): Promise<RunOutcome> {
  const domain = companyDomainOfEmail(job.email);
  if (!domain.ok) {
    return { kind: 'failed', provider: domainEnricher.name, reason: domain.reason, detail: domain.reason };
  }
  const provider = deps.enricher.name;
  try {
    const answer = await deps.enricher.enrich({
      email: job.email,
      domain: domain.domain,
      name: job.name,
      company: job.company,
    });
    if (answer.ok) return { kind: 'enriched', provider, domain: domain.domain, findings: answer.findings };
    const failure = { kind: 'failed', provider, reason: answer.reason, detail: answer.detail } as const;
    return answer.retry === null ? failure : { ...failure, retryAfterMs: answer.retry.afterMs };
  } catch (err) {
    // An enricher must not throw; if one does, it is a fault of ours or theirs that may pass.
    deps.logger.error({ err }, 'enricher threw');
    return { kind: 'failed', provider, reason: 'provider_unavailable', detail: String(err), retryAfterMs: 0 };
  }
}

/** The enricher the configuration asks for: `http` when ENRICHMENT_URL is set, else `domain`. */
function configuredEnricher(config: Config): { enricher: Enricher; leaseMs: number } {
  if (config.enrichmentUrl === null) return { enricher: domainEnricher, leaseMs: 30_000 };
  return {
    enricher: httpEnricher({
      url: config.enrichmentUrl,
      token: config.enrichmentToken,
      timeoutMs: config.enrichmentTimeoutMs,
      policy: addressPolicy(config.webhookAllowPrivateNetworks),
      resolver: dnsResolver({ servers: config.dnsServers ?? undefined }),
    }),
    // The request's timeout (DNS and connection included) and slack for the two transactions.
    leaseMs: 2 * config.enrichmentTimeoutMs + 10_000,
  };
}

export function enrichmentWorker(ctx: WorkerContext): BackgroundWorker {
  const { enricher, leaseMs } = configuredEnricher(ctx.config);
  const deps: EnrichmentDeps = { ...ctx, enricher, leaseMs };
  const worker = pollingWorker({
    name: 'form-enrichment',
    channels: [ENRICHMENT_CHANNEL],
    intervalMs: 5_000,
    logger: ctx.logger,
    tick: async () => {
      // One look first: an idle queue costs one short transaction per wake-up or poll, not eight.
      if ((await processNextEnrichment(deps)) === null) return false;
      await Promise.all(Array.from({ length: ENRICHMENT_PARALLEL_JOBS - 1 }, () => processNextEnrichment(deps)));
      return true;
    },
  });
  return {
    ...worker,
    stop: async () => {
      await worker.stop();
      enricher.close?.();
    },
  };
}
