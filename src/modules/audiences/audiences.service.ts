import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { addToAudiencesCount, type Metadata } from '../pages/index.js';
import * as q from './audiences.queries.js';
import type { Audience } from './audiences.schemas.js';
import { pageArchived, visiblePage } from './audiences.checks.js';
import { toAudience, toVersion } from './audiences.mapping.js';
import { generateNow } from './audiences.generation.js';
import type { VersionGenerator } from './audiences.generator.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { createVersionIn } from './audiences.versions.js';
import { servingChanged } from '../serving/index.js';

/** Audiences with their latest and published versions, read in one query for all of them. */
async function withVersions(scope: TenantScope, rows: q.AudienceRow[], pageMetadata: Record<string, unknown>) {
  const versions = await q.currentVersions(
    scope,
    rows.map((r) => r.id),
  );
  const latest = new Map<string, q.VersionRow>();
  const published = new Map<string, q.VersionRow>();
  for (const v of versions) {
    const known = latest.get(v.audience_id);
    if (known === undefined || Number(known.version_number) < Number(v.version_number)) latest.set(v.audience_id, v);
    if (v.status === 'published') published.set(v.audience_id, v);
  }
  return rows.map((row) => {
    const l = latest.get(row.id);
    const p = published.get(row.id);
    // Every audience is created with a published first version and a version is only retired
    // when another is published in the same transaction: a missing one is a broken invariant.
    if (l === undefined || p === undefined) throw new Error(`audience ${row.id} has no latest or published version`);
    return toAudience(row, pageMetadata, toVersion(l), toVersion(p));
  });
}

export async function listAudiences(scope: TenantScope, pageId: string, window: KeysetWindow) {
  const pageRow = await visiblePage(scope, pageId);
  const [rows, totalCount] = await Promise.all([
    q.listAudiences(scope, pageId, window),
    q.countAudiences(scope, pageId),
  ]);
  return { items: await withVersions(scope, rows, pageRow.metadata), totalCount };
}

async function getAudience(scope: TenantScope, pageId: string, audienceId: string): Promise<Audience> {
  const pageRow = await visiblePage(scope, pageId);
  const row = await q.findAudience(scope, pageId, audienceId);
  if (row === undefined) throw notFound('audience', audienceId);
  const [audience] = await withVersions(scope, [row], pageRow.metadata);
  return audience!;
}

/**
 * Restore (endpoint 5): an archived audience gets `archivedAt` cleared, and its status is again
 * the status of its latest version (which archiving never touched). Restoring an audience that
 * is not archived changes nothing and answers it as it is. The page must not be archived.
 */
export async function restoreAudience(scope: TenantScope, pageId: string, audienceId: string): Promise<Audience> {
  return scope.transaction(async (tx) => {
    const page = await visiblePage(tx, pageId);
    const row = await q.findAudience(tx, pageId, audienceId, { lock: true });
    if (row === undefined) throw notFound('audience', audienceId);
    if (page.status === 'archived') throw pageArchived(pageId);
    if (row.archived_at !== null) {
      await q.setAudienceArchivedAt(tx, audienceId, null);
      await servingChanged(tx);
    }
    return getAudience(tx, pageId, audienceId);
  });
}

/** Archives an audience (operator side; the API only restores). Its versions are left as they are. */
export async function archiveAudience(scope: TenantScope, clock: Clock, audienceId: string): Promise<void> {
  await scope.transaction(async (tx) => {
    const row = await q.findAudienceById(tx, audienceId);
    if (row === undefined) throw notFound('audience', audienceId);
    if (row.archived_at === null) {
      await q.setAudienceArchivedAt(tx, audienceId, isoNow(clock));
      await servingChanged(tx);
    }
  });
}

export interface NewAudience {
  pageId: string;
  computedName: string;
  customName?: string | null;
  isNewPageAgent?: boolean;
  personId?: string | null;
  personRouteKey?: string | null;
  actionFormIdOverride?: string | null;
  actionFormInstructionsOverride?: string | null;
  actionUrlOverride?: string | null;
  supplementaryContext?: string | null;
  metadataOverride?: Metadata | null;
}

/**
 * Creates an audience (operator side: demo, imports) with its first version generated and
 * published in the same transaction, so that every audience has a real published version from
 * its first moment. The first version goes through the same lifecycle as every other one
 * (queued → processing → draft → published) and emits the same events.
 */
export async function createAudience(
  scope: TenantScope,
  clock: Clock,
  input: NewAudience,
  generator: VersionGenerator = builtinWriter,
): Promise<{ audienceId: string; versionId: string }> {
  return scope.transaction(async (tx) => {
    await visiblePage(tx, input.pageId, { lock: true });
    const audienceId = newId('audience');
    await q.insertAudience(tx, {
      id: audienceId,
      page_id: input.pageId,
      computed_name: input.computedName,
      custom_name: input.customName ?? null,
      is_new_page_agent: input.isNewPageAgent ?? false,
      person_id: input.personId ?? null,
      person_route_key: input.personRouteKey ?? null,
      action_form_id_override: input.actionFormIdOverride ?? null,
      action_form_instructions_override: input.actionFormInstructionsOverride ?? null,
      action_url_override: input.actionUrlOverride ?? null,
      supplementary_context: input.supplementaryContext ?? null,
      metadata_override: input.metadataOverride ? json(input.metadataOverride) : null,
      created_at: isoNow(clock),
    });
    await addToAudiencesCount(tx, input.pageId, 1);
    const version = await createVersionIn(tx, clock, { pageId: input.pageId, audienceId, operationKey: null });
    const step = await generateNow(tx, clock, version.versionId, { generator, publish: true });
    if (step.outcome !== 'completed' || step.completion !== 'published') {
      throw new Error(`the first version of the audience was not published: ${step.outcome}`);
    }
    return { audienceId, versionId: version.versionId };
  });
}
