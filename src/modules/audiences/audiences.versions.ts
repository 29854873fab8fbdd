import { isUniqueViolation } from '../../db/errors.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { emitVersionEvent } from './audiences.events.js';
import * as q from './audiences.queries.js';
import type { AudienceVersion, VersionCreateBody } from './audiences.schemas.js';
import { audienceArchived, pageArchived, visiblePage } from './audiences.checks.js';
import { toVersion } from './audiences.mapping.js';
import { initialVersion, RUNNABLE_STATUSES } from './audiences.version-lifecycle.js';
import { servingChanged } from '../serving/index.js';

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

/**
 * A version with how it was made and what it cost (docs/audience-versions.md#what-is-stored):
 * what `audience-pages version show` prints, until the version endpoint of the authoring issue.
 */
export async function versionWithGeneration(scope: TenantScope, versionId: string) {
  const row = await q.findVersionGeneration(scope, versionId);
  if (row === undefined) throw notFound('audience version', versionId);
  const count = (n: number | null) => (n === null ? null : Number(n));
  return {
    ...toVersion(row),
    generation: {
      generator: row.generator,
      model: row.model,
      inputTokens: count(row.input_tokens),
      outputTokens: count(row.output_tokens),
      durationMs: count(row.generation_ms),
      attempts: Number(row.attempts),
      lastFailureReason: row.failure_reason,
    },
  };
}
