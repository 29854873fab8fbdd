import { randomUUID } from 'node:crypto';
import { isUniqueViolation } from '../../db/errors.js';
import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { appendEvent, type EventType } from '../../outbox/events.js';
import * as accountsQ from '../accounts/accounts.queries.js';
import * as pagesQ from '../pages/pages.queries.js';
import * as personsQ from '../persons/persons.queries.js';
import * as q from './audiences.queries.js';
import type { AudienceVersion, VersionCreateBody } from './audiences.schemas.js';
import { audienceArchived, effectiveMetadata, pageArchived, toVersion, visiblePage } from './audiences.shared.js';
import {
  storedArtifact,
  templateGenerator,
  type GeneratedArtifact,
  type GenerationAction,
  type GenerationInput,
  type VersionGenerator,
} from './generator.js';
import { initialVersion, RUNNABLE_STATUSES } from './version-lifecycle.js';

/** Channel that wakes the generation worker (AppContext.notify). */
export const VERSIONS_CHANNEL = 'audience-versions';

/** How long a worker holds a version before another may take it over (it is presumed crashed). */
export const GENERATION_LEASE_MS = 60_000;
/** Attempts (including ones lost to crashes) before a version is given up as failed. */
export const MAX_GENERATION_ATTEMPTS = 3;
/** Wait before retry n (1-based): 10 s, 20 s, 40 s, … */
export const retryDelayMs = (attempt: number) => 10_000 * 2 ** (attempt - 1);

/**
 * The `data` of a page.version.* event: the ids a consumer routes on, flat, and the version as
 * the API shows it at that moment (docs/api.md, Events).
 */
async function emit(
  tx: TenantScope,
  clock: Clock,
  type: EventType,
  pageId: string,
  versionId: string,
  extra: Record<string, unknown> = {},
) {
  const row = await q.findVersion(tx, versionId);
  const version = toVersion(row!);
  await appendEvent(tx, clock, type, {
    versionId,
    audienceId: version.audienceId,
    pageId,
    versionNumber: version.versionNumber,
    status: version.status,
    ...extra,
    version,
  });
}

/**
 * Adds a version to an audience inside `tx` (the audience row is locked by the caller): the next
 * number, status queued; versions of the audience still waiting or being generated are superseded.
 */
export async function createVersionIn(
  tx: TenantScope,
  clock: Clock,
  input: { pageId: string; audienceId: string; operationKey: string | null },
): Promise<AudienceVersion> {
  const now = isoNow(clock);
  const audience = await q.findAudienceById(tx, input.audienceId);
  if (audience === undefined) throw notFound('audience', input.audienceId);
  for (const older of await q.versionsInStatus(tx, input.audienceId, RUNNABLE_STATUSES)) {
    await q.applyTransition(tx, older, 'supersede', now);
  }
  const versionId = newId('audienceVersion');
  await q.insertVersion(tx, {
    id: versionId,
    audience_id: input.audienceId,
    version_number: (await q.lastVersionNumber(tx, input.audienceId)) + 1,
    ...initialVersion(now),
    is_new_page_agent: audience.is_new_page_agent,
    supplementary_context: audience.supplementary_context,
    operation_key: input.operationKey,
    created_at: now,
  });
  await emit(tx, clock, 'page.version.created', input.pageId, versionId);
  return toVersion((await q.findVersion(tx, versionId))!);
}

/**
 * Endpoint 6. With an `operationKey` already used for this audience, answers the version that
 * key created (as it is now) and creates nothing; the unique index on (tenant, audience, key)
 * settles concurrent first requests.
 */
export async function createVersion(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  audienceId: string,
  body: VersionCreateBody,
): Promise<{ version: AudienceVersion; created: boolean }> {
  const operationKey = body.operationKey ?? null;
  try {
    return await scope.transaction(async (tx) => {
      const page = await visiblePage(tx, pageId);
      const audience = await q.findAudience(tx, pageId, audienceId, { lock: true });
      if (audience === undefined) throw notFound('audience', audienceId);
      if (operationKey !== null) {
        const existing = await q.findVersionByOperationKey(tx, audienceId, operationKey);
        if (existing !== undefined) return { version: toVersion(existing), created: false };
      }
      if (page.status === 'archived') throw pageArchived(pageId);
      if (audience.archived_at !== null) throw audienceArchived(audienceId);
      return { version: await createVersionIn(tx, clock, { pageId, audienceId, operationKey }), created: true };
    });
  } catch (error) {
    if (operationKey === null || !isUniqueViolation(error)) throw error;
    const existing = await q.findVersionByOperationKey(scope, audienceId, operationKey);
    if (existing === undefined) throw error;
    return { version: toVersion(existing), created: false };
  }
}

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
) {
  const moved = await q.applyTransition(
    tx,
    job,
    'fail',
    isoNow(clock),
    { failure_reason: reason.slice(0, 2000) },
    { leaseToken },
  );
  if (!moved) return false;
  await emit(tx, clock, 'page.version.processed', await pageIdOf(tx, job.audience_id), job.id, {
    outcome: 'failed',
    failure: { reason: reason.slice(0, 2000), attempts: job.attempts },
  });
  return true;
}

/** Everything a generator needs, read in the worker's transaction. */
export async function loadGenerationInput(tx: TenantScope, versionId: string): Promise<GenerationInput> {
  const job = await q.findJob(tx, versionId);
  if (job === undefined) throw notFound('audience version', versionId);
  const audience = await q.findAudienceById(tx, job.audience_id);
  if (audience === undefined) throw notFound('audience', job.audience_id);
  const page = await pagesQ.findPage(tx, audience.page_id);
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
    person: audience.person_id === null ? null : await loadPerson(tx, audience.person_id),
    effectiveMetadata: effectiveMetadata(page.metadata, audience.metadata_override),
  };
}

/** The audience's person and their account; a person deleted since is rendered as unknown. */
async function loadPerson(tx: TenantScope, personId: string): Promise<GenerationInput['person']> {
  const person = await personsQ.findPerson(tx, personId);
  if (person === undefined) return { personId, name: null, email: null, accountDomain: null, accountName: null };
  const account = person.account_domain ? await accountsQ.findAccountByDomain(tx, person.account_domain) : undefined;
  return {
    personId,
    name: person.name,
    email: person.email,
    accountDomain: person.account_domain,
    accountName: account?.name ?? null,
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

  if (!outcome.ok) {
    const reason = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    if (current.attempts >= maxAttempts) {
      await failVersion(tx, clock, current, reason, leaseToken);
      return 'cancelled';
    }
    await q.applyTransition(
      tx,
      current,
      'retry',
      nowIso,
      {
        failure_reason: reason.slice(0, 2000),
        available_at: new Date(now.getTime() + retryDelayMs(current.attempts)).toISOString(),
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
    { artifact: json(artifact), failure_reason: null },
    { leaseToken },
  );
  for (const older of await q.versionsInStatus(tx, job.audience_id, ['draft'])) {
    if (older.id !== versionId) await q.applyTransition(tx, older, 'retire', nowIso);
  }
  const pageId = audience!.page_id;
  await emit(tx, clock, 'page.version.processed', pageId, versionId, { outcome: 'draft' });
  const page = await pagesQ.findPage(tx, pageId);
  if (outcome.publish || page?.status === 'published') {
    await publishVersion(tx, clock, pageId, job.audience_id, versionId);
    return 'published';
  }
  return 'draft';
}

/** The draft goes live; the version live until now is retired (obsoleteAt). Audience is locked. */
async function publishVersion(tx: TenantScope, clock: Clock, pageId: string, audienceId: string, versionId: string) {
  const now = isoNow(clock);
  const [previous] = await q.versionsInStatus(tx, audienceId, ['published']);
  if (previous !== undefined) await q.applyTransition(tx, previous, 'retire', now);
  const moved = await q.applyTransition(tx, { id: versionId, status: 'draft' }, 'publish', now);
  if (!moved) throw new Error(`version ${versionId} is not a draft`);
  await emit(tx, clock, 'page.version.published', pageId, versionId, { previousVersionId: previous?.id ?? null });
}

/**
 * Publishes the draft of every audience of a page (operator side, when the page is published).
 * Returns the versions published.
 */
export async function publishPageDrafts(scope: TenantScope, clock: Clock, pageId: string): Promise<string[]> {
  return scope.transaction(async (tx) => {
    const published: string[] = [];
    const page = await visiblePage(tx, pageId, { lock: true });
    let after: unknown[] | null = null;
    for (;;) {
      const audiences = await q.listAudiences(tx, page.id, { limit: 500, after });
      for (const audience of audiences.slice(0, 500)) {
        await q.findAudience(tx, page.id, audience.id, { lock: true });
        const [draft] = await q.versionsInStatus(tx, audience.id, ['draft']);
        if (draft === undefined) continue;
        await publishVersion(tx, clock, page.id, audience.id, draft.id);
        published.push(draft.id);
      }
      if (audiences.length <= 500) break;
      after = [audiences[499]!.id];
    }
    return published;
  });
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
  const generator = options.generator ?? templateGenerator;
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
