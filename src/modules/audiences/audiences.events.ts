import type { TenantScope } from '../../db/tenant-scope.js';
import type { Clock } from '../../lib/clock.js';
import { appendEvent, type EventType } from '../../outbox/events.js';
import * as q from './audiences.queries.js';
import { toVersion } from './audiences.mapping.js';

/**
 * The `data` of a page.version.* event: the ids a consumer routes on, flat, and the version as
 * the API shows it at that moment (docs/api.md, Events).
 */
export async function emitVersionEvent(
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
