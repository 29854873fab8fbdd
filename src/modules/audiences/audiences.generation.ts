import { json } from '../../db/json.js';
import type { AudienceVersionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound } from '../../http/errors.js';
import { isoNow, SECOND_MS, type Clock } from '../../lib/clock.js';
import { failureText } from '../../lib/limits.js';
import {
  done,
  retry,
  runJobNow,
  type JobStep,
  type LeasedJobKind,
  type LeasedRow,
  type LeaseSettings,
  type WorkResult,
} from '../../workers/leased-jobs.js';
import { findAccountByDomain } from '../accounts/index.js';
import { findPage } from '../pages/index.js';
import { findPerson } from '../persons/index.js';
import { emitVersionEvent } from './audiences.events.js';
import {
  storedArtifact,
  type GeneratedArtifact,
  type GenerationAction,
  type GenerationInput,
  type VersionGenerator,
} from './audiences.generator.js';
import * as q from './audiences.queries.js';
import { effectiveMetadata } from './audiences.mapping.js';
import { templateGenerator } from './audiences.template-generator.js';
import { transition, TRANSITIONS } from './audiences.version-lifecycle.js';
import { publishVersion, VERSIONS_CHANNEL } from './audiences.versions.js';

/**
 * The generation job of a version, on the leased-job runner: a version in a runnable status is
 * its own job. Its lifecycle (docs/audience-versions.md) decides every status a claim, a retry, a
 * success or a failure writes.
 */

export const GENERATION_SETTINGS: LeaseSettings = {
  /** How long a worker holds a version before another may take it over (it is presumed crashed). */
  leaseMs: 60 * SECOND_MS,
  /** Attempts (including ones lost to crashes) before a version is given up as failed. */
  maxAttempts: 3,
  concurrency: 1,
  pollMs: 5 * SECOND_MS,
};

/** What the runner reads of a version for the generation's functions. */
export type VersionJob = LeasedRow &
  Pick<AudienceVersionsTable, 'id' | 'audience_id' | 'version_number' | 'queued_at' | 'queue_duration_ms'>;

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
}

/** The generation job kind: what the runner needs to run versions. Failures are reasons (text). */
export function versionGenerationKind(
  clock: Clock,
  options: GenerationOptions = {},
): LeasedJobKind<'audience_versions', VersionJob, Generated, string, GenerationCompletion> {
  const generator = options.generator ?? templateGenerator;
  return {
    name: 'audience-version-generation',
    channel: VERSIONS_CHANNEL,
    table: 'audience_versions',
    key: 'id',
    columns: ['audience_id', 'version_number', 'queued_at', 'queue_duration_ms'],
    statuses: { waiting: TRANSITIONS.claim.from, running: TRANSITIONS.claim.to },
    settings: { ...GENERATION_SETTINGS, ...options.settings },
    work: (job, scope) => generate(generator, job, scope),
    complete: (tx, job, generated) => completeVersion(tx, clock, job, generated, options.publish ?? false),
    fail: (tx, job, reason) => failVersion(tx, clock, job, reason),
    interrupted: (job) => `the worker's lease expired on all ${job.attempts} attempts`,
    // The time it spent queued is taken the first time it is claimed.
    onClaim: (job, now) => ({
      ...transition(job.status === 'processing' ? 'reclaim' : 'claim', job.status, now),
      queue_duration_ms:
        job.queue_duration_ms ?? (job.queued_at === null ? null : Date.parse(now) - Date.parse(job.queued_at)),
    }),
    onRetry: (job, reason, now) => ({ ...transition('retry', job.status, now), failure_reason: failureText(reason) }),
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

/** One attempt. A generator reports failure by throwing; input that cannot be read is a failed attempt too. */
async function generate(
  generator: VersionGenerator,
  job: VersionJob,
  scope: TenantScope,
): Promise<WorkResult<Generated, string>> {
  try {
    return done({
      generator: generator.name,
      artifact: await generator.generate(await loadGenerationInput(scope, job.id)),
    });
  } catch (error) {
    return retry(error instanceof Error ? error.message : String(error));
  }
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

async function failVersion(tx: TenantScope, clock: Clock, job: VersionJob, reason: string) {
  const failure = { reason: failureText(reason), attempts: job.attempts };
  const leaseToken = job.lease_token ?? undefined;
  if (!(await q.applyTransition(tx, job, 'fail', isoNow(clock), { failure_reason: failure.reason }, { leaseToken }))) {
    return;
  }
  await emitVersionEvent(tx, clock, 'page.version.processed', await pageIdOf(tx, job.audience_id), job.id, {
    outcome: 'failed',
    failure,
  });
}

/** Everything a generator needs, read through the job's scope (or the caller's transaction). */
export async function loadGenerationInput(scope: TenantScope, versionId: string): Promise<GenerationInput> {
  const job = await q.findVersionToGenerate(scope, versionId);
  if (job === undefined) throw notFound('audience version', versionId);
  const audience = await q.findAudienceById(scope, job.audience_id);
  if (audience === undefined) throw notFound('audience', job.audience_id);
  const page = await findPage(scope, audience.page_id);
  if (page === undefined) throw new Error(`page ${audience.page_id} of the audience is deleted`);
  return {
    version: {
      versionId,
      versionNumber: Number(job.version_number),
      isNewPageAgent: job.is_new_page_agent,
      supplementaryContext: job.supplementary_context,
    },
    page: {
      pageId: page.id,
      name: page.name,
      title: page.title,
      pageContext: page.page_context,
      pageType: page.page_type,
      brandId: page.brand_id,
      headerActionId: page.header_action_id,
      actions: page.actions as GenerationAction[],
      actionCardWidgets: page.action_card_widgets,
      footerLinks: page.footer_links,
      scripts: (page.scripts as { name: string; content: string; enabled: boolean }[])
        .filter((script) => script.enabled)
        .map(({ name, content }) => ({ name, content })),
    },
    audience: {
      audienceId: audience.id,
      effectiveName: audience.custom_name ?? audience.computed_name,
      personId: audience.person_id,
      personRouteKey: audience.person_route_key,
      actionFormIdOverride: audience.action_form_id_override,
      actionFormInstructionsOverride: audience.action_form_instructions_override,
      actionUrlOverride: audience.action_url_override,
    },
    person: audience.person_id === null ? null : await loadPerson(scope, audience.person_id),
    effectiveMetadata: effectiveMetadata(page.metadata, audience.metadata_override),
  };
}

/** The audience's person and their account; a person deleted since is rendered as unknown. */
async function loadPerson(tx: TenantScope, personId: string): Promise<GenerationInput['person']> {
  const person = await findPerson(tx, personId);
  if (person === undefined) return { personId, name: null, email: null, accountDomain: null, accountName: null };
  const account = person.account_domain ? await findAccountByDomain(tx, person.account_domain) : undefined;
  return {
    personId,
    name: person.name,
    email: person.email,
    accountDomain: person.account_domain,
    accountName: account?.name ?? null,
  };
}

/**
 * Records a successful attempt: the version becomes a draft, an older draft is retired, and when
 * the page is published (or `publish` is set) the draft is published at once.
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
    { artifact: json(artifact), failure_reason: null },
    { leaseToken },
  );
  for (const older of await q.versionsInStatus(tx, job.audience_id, ['draft'])) {
    if (older.id !== job.id) await q.applyTransition(tx, older, 'retire', nowIso);
  }
  const pageId = await pageIdOf(tx, job.audience_id);
  await emitVersionEvent(tx, clock, 'page.version.processed', pageId, job.id, { outcome: 'draft' });
  const page = await findPage(tx, pageId);
  if (publish || page?.status === 'published') {
    await publishVersion(tx, clock, pageId, job.audience_id, job.id);
    return 'published';
  }
  return 'draft';
}
