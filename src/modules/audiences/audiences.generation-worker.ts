import type { Logger } from 'pino';
import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { EVENTS_CHANNEL } from '../../outbox/events.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import * as q from './audiences.queries.js';
import {
  claimVersion,
  completeVersion,
  GENERATION_LEASE_MS,
  loadGenerationInput,
  MAX_GENERATION_ATTEMPTS,
  type GenerationOutcome,
} from './audiences.generation.js';
import type { VersionGenerator } from './audiences.generator.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { VERSIONS_CHANNEL } from './audiences.versions.js';

export interface GenerationDeps {
  database: Database;
  clock: Clock;
  logger: Logger;
  notify: (channel: string) => void;
  generator?: VersionGenerator;
  leaseMs?: number;
  maxAttempts?: number;
}

export type GenerationStep = { versionId: string; result: Awaited<ReturnType<typeof completeVersion>> | 'lost' } | null;

/**
 * One unit of the generation worker. The queue is the versions table itself: a version in a
 * runnable status whose `available_at` has come. (1) Claim it in a short transaction (on
 * PostgreSQL `for update skip locked`, so concurrent workers take different versions) and read
 * the generator's input; (2) generate outside any transaction; (3) record the outcome in a second
 * transaction, which only succeeds if the lease is still ours. A worker that dies between (1) and
 * (3) leaves the version in `processing` until its lease runs out; then any worker takes it over.
 * Returns null when nothing was runnable.
 */
export async function processNextVersion(deps: GenerationDeps): Promise<GenerationStep> {
  const generator = deps.generator ?? builtinWriter;
  const leaseMs = deps.leaseMs ?? GENERATION_LEASE_MS;
  const maxAttempts = deps.maxAttempts ?? MAX_GENERATION_ATTEMPTS;
  const { kysely, engine } = deps.database;

  const claimed = await kysely.transaction().execute(async (trx) => {
    const next = await q.nextRunnableVersion(trx, engine, isoNow(deps.clock));
    if (next === undefined) return null;
    const tx = new TenantScope(trx, engine, next.tenant_id, true);
    const token = await claimVersion(tx, deps.clock, next.id, leaseMs, maxAttempts);
    if (token === null) return { versionId: next.id, tenantId: next.tenant_id, token: null, input: null };
    try {
      return { versionId: next.id, tenantId: next.tenant_id, token, input: await loadGenerationInput(tx, next.id) };
    } catch (error) {
      // Input that cannot be read is a failed attempt like any other.
      return { versionId: next.id, tenantId: next.tenant_id, token, input: null, error };
    }
  });
  if (claimed === null) return null;
  deps.notify(EVENTS_CHANNEL); // a version given up at claim time emitted page.version.processed
  if (claimed.token === null) return { versionId: claimed.versionId, result: 'lost' };

  let outcome: GenerationOutcome;
  if (claimed.input === null) {
    outcome = { ok: false, error: 'error' in claimed ? claimed.error : new Error('no input') };
  } else {
    try {
      outcome = { ok: true, generator: generator.name, artifact: await generator.generate(claimed.input) };
    } catch (error) {
      outcome = { ok: false, error };
    }
  }
  if (!outcome.ok) deps.logger.warn({ err: outcome.error, versionId: claimed.versionId }, 'version generation failed');

  const result = await kysely
    .transaction()
    .execute((trx) =>
      completeVersion(
        new TenantScope(trx, engine, claimed.tenantId, true),
        deps.clock,
        claimed.versionId,
        claimed.token!,
        outcome,
        maxAttempts,
      ),
    );
  if (result !== 'pending' && result !== 'stale') deps.notify(EVENTS_CHANNEL);
  return { versionId: claimed.versionId, result };
}

export function generationWorker(ctx: WorkerContext, generator: VersionGenerator = builtinWriter): BackgroundWorker {
  // The lease outlasts the generator's longest run (a model writer's calls), so no second worker takes it over.
  const leaseMs = Math.max(GENERATION_LEASE_MS, (generator.maxRunMs ?? 0) + 10_000);
  const deps: GenerationDeps = { ...ctx, generator, leaseMs };
  return pollingWorker({
    name: 'audience-version-generation',
    channels: [VERSIONS_CHANNEL],
    intervalMs: 5_000,
    logger: ctx.logger,
    tick: async () => (await processNextVersion(deps)) !== null,
  });
}
