import { randomUUID } from 'node:crypto';
import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { LlmError, type LlmUsage } from '../../llm/errors.js';
import { findPage } from '../pages/index.js';
import { emitVersionEvent } from './audiences.events.js';
import { gatherGenerationInput } from './audiences.generation-input.js';
import {
  storedArtifact,
  type GeneratedArtifact,
  type GenerationInput,
  type VersionGenerator,
} from './audiences.generator.js';
import * as q from './audiences.queries.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { publishVersion } from './audiences.versions.js';

/**
 * The generation job of a version: a version in a runnable status is its own job. A worker
 * claims it (a lease), generates outside any transaction, and completes it; a lease that runs out
 * lets another worker take the version over.
 */

/** How long a worker holds a version before another may take it over (it is presumed crashed). */
export const GENERATION_LEASE_MS = 60_000;
/** Attempts (including ones lost to crashes) before a version is given up as failed. */
export const MAX_GENERATION_ATTEMPTS = 3;
/** Wait before retry n (1-based): 10 s, 20 s, 40 s, … */
export const generationRetryDelayMs = (attempt: number) => 10_000 * 2 ** (attempt - 1);

/**
 * Takes a runnable version for generation: a new lease (token, expiry), one more attempt, and the
 * time it spent queued the first time it is taken. Returns the lease token, or null when the
 * version is not runnable any more (or failed for good, having used all its attempts).
 */
export async function claimVersion(
  tx: TenantScope,
  clock: Clock,
  versionId: string,
  leaseMs = GENERATION_LEASE_MS,
  maxAttempts = MAX_GENERATION_ATTEMPTS,
): Promise<string | null> {
  const job = await q.findJob(tx, versionId, { lock: true });
  if (job === undefined) return null;
  const now = clock.now();
  const nowIso = now.toISOString();
  if (job.status === 'processing' && job.attempts >= maxAttempts) {
    await failVersion(tx, clock, job, `the worker's lease expired on all ${job.attempts} attempts`);
    return null;
  }
  if (job.status !== 'queued' && job.status !== 'pending' && job.status !== 'processing') return null;
  const token = randomUUID();
  const moved = await q.applyTransition(tx, job, job.status === 'processing' ? 'reclaim' : 'claim', nowIso, {
    attempts: job.attempts + 1,
    lease_token: token,
    available_at: new Date(now.getTime() + leaseMs).toISOString(),
    queue_duration_ms:
      job.queue_duration_ms ?? (job.queued_at === null ? null : now.getTime() - Date.parse(job.queued_at)),
  });
  return moved ? token : null;
}

async function pageIdOf(tx: TenantScope, audienceId: string): Promise<string> {
  const audience = await q.findAudienceById(tx, audienceId);
  return audience!.page_id;
}

async function failVersion(
  tx: TenantScope,
  clock: Clock,
  job: { id: string; status: string; audience_id: string; attempts: number },
  reason: string,
  leaseToken?: string,
  spent: ReturnType<typeof spending> = {},
) {
  const moved = await q.applyTransition(
    tx,
    job,
    'fail',
    isoNow(clock),
    { ...spent, failure_reason: reason.slice(0, 2000) },
    { leaseToken },
  );
  if (!moved) return false;
  await emitVersionEvent(tx, clock, 'page.version.processed', await pageIdOf(tx, job.audience_id), job.id, {
    outcome: 'failed',
    failure: { reason: reason.slice(0, 2000), attempts: job.attempts },
  });
  return true;
}

/** Everything a generator needs, read in the worker's transaction (audiences.generation-input.ts). */
export async function loadGenerationInput(tx: TenantScope, versionId: string): Promise<GenerationInput> {
  return gatherGenerationInput(tx, versionId);
}

/** The version's usage columns with `usage` added (tokens add up over every call made for it). */
function spending(
  job: { input_tokens: number | null; output_tokens: number | null },
  usage: LlmUsage | undefined,
): { model?: string; input_tokens?: number; output_tokens?: number } {
  if (usage === undefined) return {};
  return {
    model: usage.model,
    input_tokens: Number(job.input_tokens ?? 0) + usage.inputTokens,
    output_tokens: Number(job.output_tokens ?? 0) + usage.outputTokens,
  };
}

export type GenerationOutcome =
  { ok: true; generator: string; artifact: GeneratedArtifact; publish?: boolean } | { ok: false; error: unknown };

/**
 * Records the result of a generation attempt, if the lease is still ours (a version superseded
 * or taken over meanwhile is left alone). Success: the version becomes a draft, an older draft is
 * retired, and when the page is published (or `publish` is set) the draft is published at once.
 * Failure: the version waits for a retry (pending), or is cancelled after the last attempt.
 */
export async function completeVersion(
  tx: TenantScope,
  clock: Clock,
  versionId: string,
  leaseToken: string,
  outcome: GenerationOutcome,
  maxAttempts = MAX_GENERATION_ATTEMPTS,
): Promise<'draft' | 'published' | 'pending' | 'cancelled' | 'stale'> {
  const job = await q.findJob(tx, versionId);
  if (job === undefined) return 'stale';
  const audience = await q.findAudienceById(tx, job.audience_id);
  // Lock order everywhere: audience, then its versions.
  await q.findAudience(tx, audience!.page_id, job.audience_id, { lock: true });
  const current = await q.findJob(tx, versionId, { lock: true });
  if (current === undefined || current.status !== 'processing' || current.lease_token !== leaseToken) return 'stale';
  const now = clock.now();
  const nowIso = now.toISOString();
  // Only the latest version may become the draft (and go live). Creating a version supersedes
  // the runnable ones, so a newer version here means that rule was bypassed: the older result
  // is dropped rather than published over the newer version.
  if ((await q.lastVersionNumber(tx, job.audience_id)) > Number(current.version_number)) {
    await q.applyTransition(tx, current, 'supersede', nowIso, {}, { leaseToken });
    return 'stale';
  }

  if (!outcome.ok) {
    const { error } = outcome;
    const reason = error instanceof Error ? error.message : String(error);
    // Typed provider failures (llm/errors.ts): final ones end at once, a provider's Retry-After
    // is waited for without counting the attempt.
    const final = error instanceof LlmError && error.kind === 'final';
    const retryAfterMs = error instanceof LlmError ? error.details.retryAfterMs : undefined;
    const spent = spending(current, error instanceof LlmError ? error.details.usage : undefined);
    if (current.attempts >= maxAttempts || final) {
      await failVersion(tx, clock, current, reason, leaseToken, spent);
      return 'cancelled';
    }
    await q.applyTransition(
      tx,
      current,
      'retry',
      nowIso,
      {
        ...spent,
        failure_reason: reason.slice(0, 2000),
        attempts: retryAfterMs === undefined ? current.attempts : current.attempts - 1,
        available_at: new Date(
          now.getTime() + (retryAfterMs ?? generationRetryDelayMs(current.attempts)),
        ).toISOString(),
      },
      { leaseToken },
    );
    return 'pending';
  }

  const artifact = storedArtifact(outcome.generator, outcome.artifact);
  await q.applyTransition(
    tx,
    current,
    'generated',
    nowIso,
    {
      artifact: json(artifact),
      generator: outcome.generator,
      ...spending(current, outcome.artifact.usage),
      generation_ms: outcome.artifact.usage?.durationMs ?? null,
    },
    { leaseToken },
  );
  for (const older of await q.versionsInStatus(tx, job.audience_id, ['draft'])) {
    if (older.id !== versionId) await q.applyTransition(tx, older, 'retire', nowIso);
  }
  const pageId = audience!.page_id;
  await emitVersionEvent(tx, clock, 'page.version.processed', pageId, versionId, { outcome: 'draft' });
  const page = await findPage(tx, pageId);
  if (outcome.publish || page?.status === 'published') {
    await publishVersion(tx, clock, pageId, job.audience_id, versionId);
    return 'published';
  }
  return 'draft';
}

/**
 * Claims, generates and completes one version inside the caller's transaction (operator side:
 * the first version of a new audience, demo data). The worker does the same in three steps.
 */
export async function generateNow(
  tx: TenantScope,
  clock: Clock,
  versionId: string,
  options: { generator?: VersionGenerator; publish?: boolean } = {},
) {
  const generator = options.generator ?? builtinWriter;
  const token = await claimVersion(tx, clock, versionId);
  if (token === null) throw new Error(`version ${versionId} is not runnable`);
  let outcome: GenerationOutcome;
  try {
    const artifact = await generator.generate(await loadGenerationInput(tx, versionId));
    outcome = { ok: true, generator: generator.name, artifact, publish: options.publish };
  } catch (error) {
    outcome = { ok: false, error };
  }
  return completeVersion(tx, clock, versionId, token, outcome);
}
