import type { Insertable } from 'kysely';
import { keysetAfter } from '../../db/keyset.js';
import type { AudienceSessionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { PageRequest } from '../../http/pagination.js';

export interface SessionFilter {
  pageId: string;
  /** Inclusive lower bound of session_started_at (ISO UTC). */
  start: string | null;
  /** Exclusive upper bound of session_started_at (ISO UTC). */
  end: string | null;
  audienceId: string | null;
}

const NEWEST_FIRST = [
  { ref: 'audience_sessions.session_started_at', direction: 'desc' as const },
  { ref: 'audience_sessions.id', direction: 'desc' as const },
];

/**
 * The filtered sessions: a range of the index (tenant_id, page_id, session_started_at, id), or of
 * (tenant_id, audience_id, session_started_at, id) with an audience filter.
 */
function filtered(scope: TenantScope, filter: SessionFilter) {
  let query = scope.selectFrom('audience_sessions').where('audience_sessions.page_id', '=', filter.pageId);
  if (filter.audienceId !== null) query = query.where('audience_sessions.audience_id', '=', filter.audienceId);
  if (filter.start !== null) query = query.where('audience_sessions.session_started_at', '>=', filter.start);
  if (filter.end !== null) query = query.where('audience_sessions.session_started_at', '<', filter.end);
  return query;
}

export async function listSessions(scope: TenantScope, filter: SessionFilter, page: PageRequest) {
  let query = filtered(scope, filter).selectAll('audience_sessions');
  if (page.after) query = query.where(keysetAfter(NEWEST_FIRST, page.after));
  return query
    .orderBy('audience_sessions.session_started_at', 'desc')
    .orderBy('audience_sessions.id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

export async function countSessions(scope: TenantScope, filter: SessionFilter): Promise<number> {
  const row = await filtered(scope, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertSessions(
  scope: TenantScope,
  rows: ReadonlyArray<Omit<Insertable<AudienceSessionsTable>, 'tenant_id'>>,
) {
  if (rows.length > 0) await scope.insertInto('audience_sessions', rows).execute();
}
