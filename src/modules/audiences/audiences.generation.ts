import { json } from '../../db/json.js';
import type { AudienceVersionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { DAY_MS, HOUR_MS, isoNow, SECOND_MS, type Clock } from '../../lib/clock.js';
import { failureText } from '../../lib/limits.js';
import {
  done,
  fail,
  retry,
  runJobNow,
  type JobStep,
  type LeasedJobKind,
  type LeasedRow,
  type LeaseSettings,
  type WorkResult,
} from '../../workers/leased-jobs.js';
import { LlmError, type LlmUsage } from '../../llm/errors.js';
import type { TokenBudget } from '../../llm/token-budget.js';
import { indexVersionPage } from '../agent/index.js';
import { findPage } from '../pages/index.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { emitVersionEvent } from './audiences.events.js';
import { gatherGenerationInput } from './audiences.generation-input.js';
import { storedArtifact, type GeneratedArtifact, type VersionGenerator } from './audiences.generator.js';
import * as q from './audiences.queries.js';
import { transition, TRANSITIONS } from './audiences.version-lifecycle.js';
import { publishVersion, VERSIONS_CHANNEL } from './audiences.versions.js';

/**
 * The generation job of a version, on the leased-job runner: a version in a runnable status is
 * its own job. Its lifecycle (docs/audience-versions.md) decides every status a claim, a retry, a
 * success or a failure writes.
 */

export const GENERATION_SETTINGS: LeaseSettings = {
  /**
   * How long a worker holds a version before another may take it over (it is presumed crashed);
   * longer for a generator whose run may take longer (leaseFor).
   */
  leaseMs: 60 * SECOND_MS,
  /** Attempts (including ones lost to crashes) before a version is given up as failed. */
  maxAttempts: 3,
  concurrency: 1,
  pollMs: 5 * SECOND_MS,
  /** A spent daily token budget is waited for until the next UTC day (a provider's Retry-After is capped at 1 h). */
  maxRetryAfterMs: DAY_MS + HOUR_MS,
};

/** The lease outlasts the generator's longest run (a model writer's calls), so no second worker takes it over. */
function leaseFor(generator: VersionGenerator): number {
  return Math.max(GENERATION_SETTINGS.leaseMs, (generator.maxRunMs ?? 0) + 10 * SECOND_MS);
}

/** What the runner reads of a version for the generation's functions. */
export type VersionJob = LeasedRow &
  Pick<
    AudienceVersionsTable,
    'id' | 'audience_id' | 'version_number' | 'queued_at' | 'queue_duration_ms' | 'input_tokens' | 'output_tokens'
  >;

/** Why an attempt failed, and what its provider calls cost (they add up over the attempts). */
interface GenerationFailure {
  reason: string;
  usage?: LlmUsage;
}

/** A generator's output, to be stored as the version's artifact. */
export interface Generated {
  generator: string;
  artifact: GeneratedArtifact;
}

/** `draft`, or `published` when the page is published (or `publish` asked for it). */
export type GenerationCompletion = 'draft' | 'published';

export interface GenerationOptions {
  generator?: VersionGenerator;
  /** Publish the new draft at once, whatever the page's status (the first version of an audience). */
  publish?: boolean;
  settings?: Partial<LeaseSettings>;
  /** The tenants' daily token budget, held to by every provider call a generator makes. */
  budget?: TokenBudget;
}

/**
 * The runner's settings when a model writes (docs/audience-versions.md#concurrency-and-turns):
 * `calls` (LLM_CONCURRENCY) is what the process's client lets run at once; the runner claims
 * `ahead` more (LLM_CLAIM_AHEAD, default a tenth of `calls`), in all processes together, so that
 * a claimed version with its inputs read waits for the next call to return instead of being
 * claimed, read and started only after the finished one is stored and published (the results
 * of a wave of calls are stored one after another). One tenant may use every claim: all calls
 * wait on the same provider, and claims still take tenants in turn.
 */
export function modelWriterSettings(calls: number, ahead: number | null): Partial<LeaseSettings> {
  const claims = calls + (ahead ?? Math.ceil(calls / 10));
  return { concurrency: claims, maxRunning: claims, perTenant: claims };
}

/** The generation job kind: what the runner needs to run versions. */
export function versionGenerationKind(
  clock: Clock,
  options: GenerationOptions = {},
): LeasedJobKind<'audience_versions', VersionJob, Generated, GenerationFailure, GenerationCompletion> {
  const generator = options.generator ?? builtinWriter;
  return {
    name: 'audience-version-generation',
    channel: VERSIONS_CHANNEL,
    table: 'audience_versions',
    key: 'id',
    columns: ['audience_id', 'version_number', 'queued_at', 'queue_duration_ms', 'input_tokens', 'output_tokens'],
    statuses: { waiting: TRANSITIONS.claim.from, running: TRANSITIONS.claim.to },
    settings: { ...GENERATION_SETTINGS, leaseMs: leaseFor(generator), ...options.settings },
    work: (job, scope) => generate(generator, job, scope, options.budget),
    complete: (tx, job, generated) => completeVersion(tx, clock, job, generated, options.publish ?? false),
    fail: (tx, job, failure) => failVersion(tx, clock, job, failure),
    interrupted: (job) => ({ reason: `the worker's lease expired on all ${job.attempts} attempts` }),
    // The time it spent queued is taken the first time it is claimed.
    onClaim: (job, now) => ({
      ...transition(job.status === 'processing' ? 'reclaim' : 'claim', job.status, now),
      queue_duration_ms:
        job.queue_duration_ms ?? (job.queued_at === null ? null : Date.parse(now) - Date.parse(job.queued_at)),
    }),
    onRetry: (job, failure, now) => ({
      ...transition('retry', job.status, now),
      ...spending(job, failure.usage),
      failure_reason: failureText(failure.reason),
    }),
    beforeFinish: (tx, job) => stillTheLatest(tx, clock, job),
  };
}

/**
 * Claims, generates and completes one version inside the caller's transaction (operator side:
 * the first version of a new audience, demo data). The worker does the same in three steps.
 */
export function generateNow(
  tx: TenantScope,
  clock: Clock,
  versionId: string,
  options: Omit<GenerationOptions, 'settings'> = {},
): Promise<JobStep<GenerationCompletion>> {
  return runJobNow(versionGenerationKind(clock, options), clock, tx, versionId);
}

/**
 * One attempt. A generator reports failure by throwing; input that cannot be read is a failed
 * attempt too. Typed provider failures (llm/errors.ts): a final one ends the version at once, a
 * provider's Retry-After and a spent daily token budget are waited for without counting the attempt.
 */
async function generate(
  generator: VersionGenerator,
  job: VersionJob,
  scope: TenantScope,
  budget: TokenBudget | undefined,
): Promise<WorkResult<Generated, GenerationFailure>> {
  try {
    return done({
      generator: generator.name,
      artifact: await generator.generate(await gatherGenerationInput(scope, job.id), { budget: budget?.for(scope) }),
    });
  } catch (error) {
    if (!(error instanceof LlmError)) return retry({ reason: error instanceof Error ? error.message : String(error) });
    const failure = { reason: error.message, usage: error.details.usage };
    if (error.kind === 'final') return fail(failure);
    // A provider's Retry-After, or a spent daily budget (until the next UTC day): waited for, not an attempt.
    const { retryAfterMs } = error.details;
    return retryAfterMs === undefined
      ? retry(failure)
      : retry(failure, { afterMs: retryAfterMs, countsAsAttempt: false });
  }
}

/** The version's usage columns with `usage` added (tokens add up over every call made for it). */
function spending(
  job: Pick<VersionJob, 'input_tokens' | 'output_tokens'>,
  usage: LlmUsage | undefined,
): { model?: string; input_tokens?: number; output_tokens?: number } {
  if (usage === undefined) return {};
  return {
    model: usage.model,
    input_tokens: Number(job.input_tokens ?? 0) + usage.inputTokens,
    output_tokens: Number(job.output_tokens ?? 0) + usage.outputTokens,
  };
}

/**
 * Takes the audience's lock before its version's (the lock order everywhere), and keeps a result
 * only for the latest version: only it may become the draft (and go live). Creating a version
 * supersedes the runnable ones, so a newer version here means that rule was bypassed: the older
 * result is dropped rather than published over the newer version.
 */
async function stillTheLatest(tx: TenantScope, clock: Clock, job: VersionJob): Promise<boolean> {
  const audience = await q.findAudienceById(tx, job.audience_id);
  await q.findAudience(tx, audience!.page_id, job.audience_id, { lock: true });
  if ((await q.lastVersionNumber(tx, job.audience_id)) <= Number(job.version_number)) return true;
  await q.applyTransition(tx, job, 'supersede', isoNow(clock), {}, { leaseToken: job.lease_token ?? undefined });
  return false;
}

async function pageIdOf(tx: TenantScope, audienceId: string): Promise<string> {
  const audience = await q.findAudienceById(tx, audienceId);
  return audience!.page_id;
}

async function failVersion(tx: TenantScope, clock: Clock, job: VersionJob, { reason, usage }: GenerationFailure) {
  const failure = { reason: failureText(reason), attempts: job.attempts };
  const leaseToken = job.lease_token ?? undefined;
  const columns = { ...spending(job, usage), failure_reason: failure.reason };
  if (!(await q.applyTransition(tx, job, 'fail', isoNow(clock), columns, { leaseToken }))) return;
  await emitVersionEvent(tx, clock, 'page.version.processed', await pageIdOf(tx, job.audience_id), job.id, {
    outcome: 'failed',
    failure,
  });
}

async function takesVersionsLive(tx: TenantScope, pageId: string): Promise<boolean> {
  const page = await findPage(tx, pageId);
  return page?.status === 'published' && !page.review_before_publish;
}

/**
 * Records a successful attempt: the version becomes a draft, an older draft is retired, and when
 * the page is published and does not review versions first (or `publish` is set) the draft is
 * published at once.
 */
async function completeVersion(
  tx: TenantScope,
  clock: Clock,
  job: VersionJob,
  generated: Generated,
  publish: boolean,
): Promise<GenerationCompletion> {
  const nowIso = isoNow(clock);
  const artifact = storedArtifact(generated.generator, generated.artifact);
  const leaseToken = job.lease_token ?? undefined;
  await q.applyTransition(
    tx,
    job,
    'generated',
    nowIso,
    {
      artifact: json(artifact),
      generator: generated.generator,
      ...spending(job, generated.artifact.usage),
      generation_ms: generated.artifact.usage?.durationMs ?? null,
    },
    { leaseToken },
  );
  await indexVersionPage(tx, job.id, artifact.content);
  for (const older of await q.versionsInStatus(tx, job.audience_id, ['draft'])) {
    if (older.id !== job.id) await q.applyTransition(tx, older, 'retire', nowIso);
  }
  const pageId = await pageIdOf(tx, job.audience_id);
  await emitVersionEvent(tx, clock, 'page.version.processed', pageId, job.id, { outcome: 'draft' });
  // A published page takes its new versions live, unless its tenant reviews them first (0075).
  // (`publish`: live whatever the page says, so the page is not read: an audience's first version.)
  if (publish || (await takesVersionsLive(tx, pageId))) {
    await publishVersion(tx, clock, pageId, job.audience_id, job.id);
    return 'published';
  }
  return 'draft';
}
