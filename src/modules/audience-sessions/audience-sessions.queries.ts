import type { Insertable } from 'kysely';
import { keysetAfter } from '../../db/keyset.js';
import type { AudienceSessionsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

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

export async function listSessions(scope: TenantScope, filter: SessionFilter, window: KeysetWindow) {
  let query = filtered(scope, filter).selectAll('audience_sessions');
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('audience_sessions.session_started_at', 'desc')
    .orderBy('audience_sessions.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

const HOUR_MS = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function exactCount(scope: TenantScope, filter: SessionFilter): Promise<number> {
  const row = await filtered(scope, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The number of sessions matching the filter: whole hours of the range are summed from
 * audience_session_hours, and only the partial hours at its ends are counted row by row, so the
 * cost depends on the length of the range, not on how many sessions it holds.
 */
export async function countSessions(scope: TenantScope, filter: SessionFilter): Promise<number> {
  const startMs = filter.start === null ? null : Date.parse(filter.start);
  const endMs = filter.end === null ? null : Date.parse(filter.end);
  const firstHour = startMs === null ? null : Math.ceil(startMs / HOUR_MS) * HOUR_MS;
  const endHour = endMs === null ? null : Math.floor(endMs / HOUR_MS) * HOUR_MS;
  if (firstHour !== null && endHour !== null && firstHour >= endHour) return exactCount(scope, filter);

  let hours = scope
    .selectFrom('audience_session_hours')
    .select((eb) => eb.fn.sum<number | string | null>('audience_session_hours.sessions').as('sessions'))
    .where('audience_session_hours.page_id', '=', filter.pageId)
    .where('audience_session_hours.audience_id', '=', filter.audienceId ?? '');
  if (firstHour !== null) hours = hours.where('audience_session_hours.hour', '>=', iso(firstHour));
  if (endHour !== null) hours = hours.where('audience_session_hours.hour', '<', iso(endHour));
  const [whole, head, tail] = await Promise.all([
    hours.executeTakeFirst(),
    startMs !== null && firstHour! > startMs ? exactCount(scope, { ...filter, end: iso(firstHour!) }) : 0,
    endMs !== null && endHour! < endMs ? exactCount(scope, { ...filter, start: iso(endHour!) }) : 0,
  ]);
  return Number(whole?.sessions ?? 0) + head + tail;
}

/**
 * Writes sessions (the analytics pipeline, demo, bench) and their hourly counts in one
 * transaction. The only way sessions may be written: the counts behind totalCount depend on it.
 */
export async function insertSessions(
  scope: TenantScope,
  rows: ReadonlyArray<Omit<Insertable<AudienceSessionsTable>, 'tenant_id'>>,
) {
  if (rows.length === 0) return;
  const buckets = new Map<string, { page_id: string; audience_id: string; hour: string; sessions: number }>();
  for (const row of rows) {
    const hour = iso(Math.floor(Date.parse(row.session_started_at) / HOUR_MS) * HOUR_MS);
    for (const audienceId of ['', row.audience_id]) {
      const key = `${row.page_id} ${audienceId} ${hour}`;
      const bucket = buckets.get(key);
      if (bucket) bucket.sessions += 1;
      else buckets.set(key, { page_id: row.page_id, audience_id: audienceId, hour, sessions: 1 });
    }
  }
  await scope.transaction(async (tx) => {
    await tx.insertInto('audience_sessions', rows).execute();
    const all = [...buckets.values()];
    for (let i = 0; i < all.length; i += 1000) {
      await tx
        .insertInto('audience_session_hours', all.slice(i, i + 1000))
        .onConflict((oc) =>
          oc.columns(['tenant_id', 'page_id', 'audience_id', 'hour']).doUpdateSet((eb) => ({
            sessions: eb('audience_session_hours.sessions', '+', eb.ref('excluded.sessions')),
          })),
        )
        .execute();
    }
  });
}
