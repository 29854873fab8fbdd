import { isUniqueViolation } from '../../db/errors.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { Clock } from '../../lib/clock.js';
import * as q from './audiences.queries.js';
import type { PageRegenerateBody, PageRegeneration } from './audiences.schemas.js';
import { pageArchived, visiblePage } from './audiences.checks.js';
import { createVersionIn } from './audiences.versions.js';

/** Audiences read (and versions queued) per statement window: a page may have thousands. */
const WINDOW = 500;

/**
 * `POST /v0/pages/{page_id}/regenerate` (extension, docs/api.md): a new version for every live
 * (not archived) audience of the page, in one transaction, each through endpoint 6's path
 * (`createVersionIn`: the audience's waiting version is superseded). The page row is locked first,
 * so two requests for one page queue one after the other. An `operationKey` works as endpoint 6's
 * does: a repeat answers the versions the key made (200) and makes none; the unique index on
 * (tenant, audience, key) settles concurrent first requests.
 */
export async function regeneratePage(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  body: PageRegenerateBody,
): Promise<{ regeneration: PageRegeneration; created: boolean }> {
  const operationKey = body.operationKey ?? null;
  const answer = (versionIds: string[], created: boolean) => ({
    regeneration: { pageId, queuedCount: created ? versionIds.length : 0, versionIds },
    created,
  });
  try {
    return await scope.transaction(async (tx) => {
      const page = await visiblePage(tx, pageId, { lock: true });
      if (operationKey !== null) {
        const made = await q.versionIdsByPageOperationKey(tx, pageId, operationKey);
        if (made.length > 0) return answer(made, false);
      }
      if (page.status === 'archived') throw pageArchived(pageId);
      const versionIds: string[] = [];
      let after: string | null = null;
      for (;;) {
        const audienceIds = await q.liveAudienceIds(tx, pageId, { limit: WINDOW, after });
        for (const audienceId of audienceIds) {
          // Lock order everywhere: page, audience, then its versions.
          await q.findAudience(tx, pageId, audienceId, { lock: true });
          versionIds.push((await createVersionIn(tx, clock, { pageId, audienceId, operationKey })).versionId);
        }
        if (audienceIds.length < WINDOW) break;
        after = audienceIds.at(-1)!;
      }
      return answer(versionIds, true);
    });
  } catch (error) {
    if (operationKey === null || !isUniqueViolation(error)) throw error;
    const made = await q.versionIdsByPageOperationKey(scope, pageId, operationKey);
    if (made.length === 0) throw error;
    return answer(made, false);
  }
}
