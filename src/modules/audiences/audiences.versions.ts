import { isUniqueViolation } from '../../db/errors.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { json } from '../../db/json.js';
import { conflict, notFound } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { emitVersionEvent } from './audiences.events.js';
import * as q from './audiences.queries.js';
import type { AudienceVersion, AudienceVersionDetail, VersionCreateBody } from './audiences.schemas.js';
import { audienceArchived, pageArchived, visiblePage } from './audiences.checks.js';
import { toVersion } from './audiences.mapping.js';
import { initialVersion, RUNNABLE_STATUSES } from './audiences.version-lifecycle.js';
import { servingChanged } from '../serving/index.js';
import { indexVersionPage } from '../agent/index.js';

/** The channel that wakes the generation worker once a version is queued (scope.afterCommit). */
export const VERSIONS_CHANNEL = 'audience-versions';

/**
 * Adds a version to an audience inside `tx` (the audience row is locked by the caller): the next
 * number, status queued; versions of the audience still waiting or being generated are superseded.
 * The runnable versions are read locked: a worker's claim (which locks only the version) may be
 * in flight, and reading the version as `queued` while the claim turns it into `processing` would
 * make the guarded supersede miss it, leaving two runnable versions (and the older one free to go
 * live over the newer). Hence also the check that every supersede took. The commit wakes the
 * generation worker.
 */
export async function createVersionIn(
  tx: TenantScope,
  clock: Clock,
  input: { pageId: string; audienceId: string; operationKey: string | null },
): Promise<AudienceVersion> {
  const now = isoNow(clock);
  const audience = await q.findAudienceById(tx, input.audienceId);
  if (audience === undefined) throw notFound('audience', input.audienceId);
  for (const older of await q.versionsInStatus(tx, input.audienceId, RUNNABLE_STATUSES, { lock: true })) {
    if (!(await q.applyTransition(tx, older, 'supersede', now))) {
      throw new Error(`version ${older.id} moved on from ${older.status} while locked`);
    }
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
  await emitVersionEvent(tx, clock, 'page.version.created', input.pageId, versionId);
  tx.afterCommit(VERSIONS_CHANNEL);
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

/** The draft goes live; the version live until now is retired (obsoleteAt). Audience is locked. */
export async function publishVersion(
  tx: TenantScope,
  clock: Clock,
  pageId: string,
  audienceId: string,
  versionId: string,
) {
  const now = isoNow(clock);
  const [previous] = await q.versionsInStatus(tx, audienceId, ['published']);
  if (previous !== undefined) await q.applyTransition(tx, previous, 'retire', now);
  const moved = await q.applyTransition(tx, { id: versionId, status: 'draft' }, 'publish', now);
  if (!moved) throw new Error(`version ${versionId} is not a draft`);
  await servingChanged(tx);
  await emitVersionEvent(tx, clock, 'page.version.published', pageId, versionId, {
    previousVersionId: previous?.id ?? null,
  });
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

/** The generation record of a version row (0025): who made it, how long it took, what it cost. */
function generationOf(row: {
  generator: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  generation_ms: number | null;
  attempts: number;
  failure_reason: string | null;
}) {
  const count = (n: number | null) => (n === null ? null : Number(n));
  return {
    generator: row.generator,
    model: row.model,
    inputTokens: count(row.input_tokens),
    outputTokens: count(row.output_tokens),
    durationMs: count(row.generation_ms),
    attempts: Number(row.attempts),
    lastFailureReason: row.failure_reason,
  };
}

/** The stored artifact as the API shows it: null for a version that never produced one. */
function contentOf(artifact: Record<string, unknown> | null): AudienceVersionDetail['content'] {
  if (artifact === null) return null;
  const stored = artifact as { contentType?: string; sha256?: string; content?: Record<string, unknown> };
  return {
    contentType: stored.contentType ?? 'application/json',
    sha256: stored.sha256 ?? null,
    body: stored.content ?? {},
  };
}

/**
 * A version with how it was made, what it cost and what it generated
 * (docs/audience-versions.md#what-is-stored): `GET …/versions/{id}` and `version show`.
 */
export async function versionWithGeneration(scope: TenantScope, versionId: string): Promise<AudienceVersionDetail> {
  const row = await q.findVersionGeneration(scope, versionId);
  if (row === undefined) throw notFound('audience version', versionId);
  return { ...toVersion(row), generation: generationOf(row), content: contentOf(row.artifact) };
}

/** The version `versionId` of the audience of the page (404 for anything else, other tenants' ids included). */
async function versionOnAudience(scope: TenantScope, pageId: string, audienceId: string, versionId: string) {
  await visiblePage(scope, pageId);
  const audience = await q.findAudience(scope, pageId, audienceId);
  if (audience === undefined) throw notFound('audience', audienceId);
  const version = await q.findVersion(scope, versionId);
  if (version === undefined || version.audience_id !== audienceId) throw notFound('audience version', versionId);
  return version;
}

/** `GET …/versions`: the audience's versions, newest first. */
export async function listVersions(scope: TenantScope, pageId: string, audienceId: string, window: KeysetWindow) {
  await visiblePage(scope, pageId);
  if ((await q.findAudience(scope, pageId, audienceId)) === undefined) throw notFound('audience', audienceId);
  const [rows, totalCount] = await Promise.all([
    q.listVersions(scope, audienceId, window),
    q.countVersions(scope, audienceId),
  ]);
  return { items: rows.map(toVersion), totalCount };
}

/** `GET …/versions/{id}`. */
export async function getVersion(scope: TenantScope, pageId: string, audienceId: string, versionId: string) {
  await versionOnAudience(scope, pageId, audienceId, versionId);
  return versionWithGeneration(scope, versionId);
}

function notPublishable(versionId: string, status: string) {
  return conflict(
    'version_not_publishable',
    `Version "${versionId}" is ${status}: only a draft can be published, or an archived version rolled back to.`,
    { versionStatus: status },
  );
}

/**
 * `POST …/versions/{id}/publish` (docs/api.md, Publishing, previewing and rolling back versions):
 * - a `draft` goes live (publishVersion: the live one is retired with obsoleteAt);
 * - the `published` one is answered as it is (a retry changes nothing);
 * - an `archived` one (it made a page once) is rolled back to: a new version n+1 is made with a
 *   copy of its content and published at once; a version still being generated is superseded,
 *   so it cannot go live over the rollback;
 * - `queued`, `pending`, `processing`, `cancelled`: 409 version_not_publishable.
 */
export async function publishOrRollBack(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  audienceId: string,
  versionId: string,
): Promise<{ version: AudienceVersion; created: boolean }> {
  return scope.transaction(async (tx) => {
    const page = await visiblePage(tx, pageId);
    const audience = await q.findAudience(tx, pageId, audienceId, { lock: true });
    if (audience === undefined) throw notFound('audience', audienceId);
    const version = await q.findVersionWithArtifact(tx, versionId);
    if (version === undefined || version.audience_id !== audienceId) throw notFound('audience version', versionId);
    if (version.status === 'published') return { version: toVersion(version), created: false };
    if (page.status === 'archived') throw pageArchived(pageId);
    if (audience.archived_at !== null) throw audienceArchived(audienceId);
    if (version.status === 'draft') {
      await publishVersion(tx, clock, pageId, audienceId, versionId);
      return { version: toVersion((await q.findVersion(tx, versionId))!), created: false };
    }
    if (version.status !== 'archived' || version.artifact === null) throw notPublishable(versionId, version.status);
    return { version: await rollBackTo(tx, clock, pageId, version), created: true };
  });
}

/**
 * A rollback: version n+1 of the audience carrying the content of `source` (an archived version),
 * moved through the table like any version (created queued, claimed, generated, published) in
 * one transaction, with the same events; `page.version.processed` says `rollbackOf`.
 */
async function rollBackTo(
  tx: TenantScope,
  clock: Clock,
  pageId: string,
  source: NonNullable<Awaited<ReturnType<typeof q.findVersionWithArtifact>>>,
): Promise<AudienceVersion> {
  const copy = await createVersionIn(tx, clock, { pageId, audienceId: source.audience_id, operationKey: null });
  const now = isoNow(clock);
  await q.updateVersion(tx, copy.versionId, {
    is_new_page_agent: source.is_new_page_agent,
    supplementary_context: source.supplementary_context,
  });
  const queued = { id: copy.versionId, status: 'queued' };
  if (!(await q.applyTransition(tx, queued, 'claim', now, { queue_duration_ms: 0, attempts: 1 }))) {
    throw new Error(`version ${copy.versionId} left the queue inside its creating transaction`);
  }
  await q.applyTransition(tx, { id: copy.versionId, status: 'processing' }, 'generated', now, {
    artifact: json(source.artifact),
    generator: source.generator,
    model: source.model,
  });
  const artifact = source.artifact as { content?: Record<string, unknown> };
  await indexVersionPage(tx, copy.versionId, artifact.content ?? {});
  for (const older of await q.versionsInStatus(tx, source.audience_id, ['draft'])) {
    if (older.id !== copy.versionId) await q.applyTransition(tx, older, 'retire', now);
  }
  await emitVersionEvent(tx, clock, 'page.version.processed', pageId, copy.versionId, {
    outcome: 'draft',
    rollbackOf: source.id,
  });
  await publishVersion(tx, clock, pageId, source.audience_id, copy.versionId);
  return toVersion((await q.findVersion(tx, copy.versionId))!);
}

/**
 * `POST …/versions/{id}/preview` checks that the version is one of the audience's that has content
 * (draft, published, archived); the route then signs its URL (site module).
 */
export async function previewableVersion(
  scope: TenantScope,
  pageId: string,
  audienceId: string,
  versionId: string,
): Promise<void> {
  await versionOnAudience(scope, pageId, audienceId, versionId);
  const version = (await q.findVersionWithArtifact(scope, versionId))!;
  if (version.artifact === null) {
    throw conflict(
      'version_not_previewable',
      `Version "${versionId}" is ${version.status} and has no content: only a generated version can be previewed.`,
      { versionStatus: version.status },
    );
  }
}

/** The page and audience of a version of the tenant (the CLI names a version alone). */
export async function versionPath(scope: TenantScope, versionId: string) {
  const version = await q.findVersion(scope, versionId);
  if (version === undefined) throw notFound('audience version', versionId);
  const audience = (await q.findAudienceById(scope, version.audience_id))!;
  return { pageId: audience.page_id, audienceId: audience.id, versionId };
}
