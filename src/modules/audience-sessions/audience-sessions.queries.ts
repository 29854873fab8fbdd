import { sql, type Compilable, type Insertable } from 'kysely';
import { greatest, jsonText, notByIndex, timestampValue } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import { preparedQuery } from '../../db/prepared.js';
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

/**
 * Every session of the filter (the rows endpoint 7 pages through), newest first, at most `cap`
 * (one more tells the caller there were more): what the console's analytics sum up.
 */
export async function allSessions(scope: TenantScope, filter: SessionFilter, cap: number) {
  return filtered(scope, filter)
    .selectAll('audience_sessions')
    .orderBy('audience_sessions.session_started_at', 'desc')
    .orderBy('audience_sessions.id', 'desc')
    .limit(cap + 1)
    .execute();
}

/** The latest sessions of the audiences that address a person (their visits), newest first. */
export async function sessionsOfPerson(scope: TenantScope, personId: string, limit: number) {
  return scope
    .selectFrom('audience_sessions')
    .selectAll('audience_sessions')
    .where(
      'audience_sessions.audience_id',
      'in',
      scope.selectFrom('audiences').select('audiences.id').where('audiences.person_id', '=', personId),
    )
    .orderBy('audience_sessions.session_started_at', 'desc')
    .orderBy('audience_sessions.id', 'desc')
    .limit(limit)
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

/** A session row as written (every column but the tenant's). */
type SessionRow = Omit<Insertable<AudienceSessionsTable>, 'tenant_id'>;

const SESSION_COLUMNS = [
  'id',
  'page_id',
  'audience_id',
  'analytics_session_id',
  'page_title',
  'page_url',
  'form_submission_id',
  'form_submission_identifier',
  'form_submission_email',
  'form_submission_phone',
  'has_conversion',
  'has_form_submit',
  'is_bounce',
  'max_scroll_depth_percentage',
  'questions_asked_count',
  'time_spent_seconds',
  'total_clicks_count',
  'session_started_at',
  'session_ended_at',
  'utm_campaign',
  'utm_content',
  'utm_medium',
  'utm_source',
  'utm_term',
] as const satisfies readonly (keyof SessionRow)[];
// A column missing above would be silently left out of every batch: the type fails to compile.
type UnlistedSessionColumn = Exclude<keyof SessionRow, (typeof SESSION_COLUMNS)[number]>;
const everySessionColumnListed: [UnlistedSessionColumn] extends [never] ? true : UnlistedSessionColumn = true;
void everySessionColumnListed;

/**
 * Rows per statement of the batched writes: a batch of n rows is written as statements of these
 * sizes (largest first), so each statement's text is built and compiled once per size and reused
 * (better-sqlite3's statement cache; a named, planned-once statement on PostgreSQL) instead of a
 * new text per batch size that Kysely builds and the database parses and plans every time.
 */
const ROWS_PER_STATEMENT = [100, 10, 1] as const;

/** `rows` cut into pieces of the sizes of ROWS_PER_STATEMENT. */
function inStatementSizes<T>(rows: readonly T[]): T[][] {
  const pieces: T[][] = [];
  let at = 0;
  for (const size of ROWS_PER_STATEMENT) {
    for (; rows.length - at >= size; at += size) pieces.push(rows.slice(at, at + size));
  }
  return pieces;
}

/** The values of a multi-row statement: `size`, and `<column><row>` for each row's columns. */
type RowSlots = { size: number } & Record<string, unknown>;

/** `<column><row>` for every column and row index of the largest statement (built once). */
const slotNames = new Map<string, string[]>();

function slotNamesOf(column: string): string[] {
  let names = slotNames.get(column);
  if (names === undefined) {
    names = Array.from({ length: ROWS_PER_STATEMENT[0] }, (_, i) => `${column}${i}`);
    slotNames.set(column, names);
  }
  return names;
}

function rowSlots<T>(rows: readonly T[], columns: readonly (keyof T & string)[]): RowSlots {
  const slots: RowSlots = { size: rows.length };
  for (const column of columns) {
    const names = slotNamesOf(column);
    for (let i = 0; i < rows.length; i++) slots[names[i]!] = rows[i]![column];
  }
  return slots;
}

/** Placeholders of row `i` of a multi-row statement, as the row object Kysely expects. */
function slotRow<C extends string>(p: RowSlots, columns: readonly C[], i: number): Record<C, never> {
  const row = {} as Record<C, never>;
  for (const column of columns) row[column] = p[slotNamesOf(column)[i]!] as never;
  return row;
}

const insertSessionRows = preparedQuery(
  (scope, p: RowSlots) =>
    scope.insertInto(
      'audience_sessions',
      Array.from({ length: p.size }, (_, i) => slotRow(p, SESSION_COLUMNS, i)),
    ),
  { literals: ['size'] },
);

interface HourBucket {
  page_id: string;
  audience_id: string;
  hour: string;
  sessions: number;
}
const HOUR_COLUMNS = ['page_id', 'audience_id', 'hour', 'sessions'] as const;

const addSessionHours = preparedQuery(
  (scope, p: RowSlots) =>
    scope
      .insertInto(
        'audience_session_hours',
        Array.from({ length: p.size }, (_, i) => slotRow(p, HOUR_COLUMNS, i)),
      )
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'page_id', 'audience_id', 'hour']).doUpdateSet((eb) => ({
          sessions: eb('audience_session_hours.sessions', '+', eb.ref('excluded.sessions')),
        })),
      ),
  { literals: ['size'] },
);

/**
 * Writes sessions (the analytics pipeline, demo, bench) and their hourly counts in one
 * transaction. The only way sessions may be written: the counts behind totalCount depend on it.
 */
export async function insertSessions(scope: TenantScope, rows: readonly SessionRow[]) {
  if (rows.length === 0) return;
  const buckets = new Map<string, HourBucket>();
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
    for (const piece of inStatementSizes(rows)) await insertSessionRows(tx, rowSlots(piece, SESSION_COLUMNS));
    for (const piece of inStatementSizes([...buckets.values()])) {
      await addSessionHours(tx, rowSlots(piece, HOUR_COLUMNS));
    }
  });
}

/**
 * What a new session of an audience needs: its page, whether it is served (not archived or
 * deleted), and the title of its published version as visitors see it.
 */
export async function findAudienceForSession(scope: TenantScope, audienceId: string) {
  return scope
    .selectFrom('audiences')
    .innerJoin('pages', (join) =>
      join.onRef('pages.id', '=', 'audiences.page_id').onRef('pages.tenant_id', '=', 'audiences.tenant_id'),
    )
    .leftJoin('audience_versions', (join) =>
      join
        .onRef('audience_versions.audience_id', '=', 'audiences.id')
        .onRef('audience_versions.tenant_id', '=', 'audiences.tenant_id')
        .on('audience_versions.status', '=', sql.lit('published')),
    )
    .select((eb) => [
      'audiences.page_id',
      'audiences.archived_at',
      'pages.status as page_status',
      'pages.deleted_at as page_deleted_at',
      'pages.title as page_title',
      'audience_versions.id as version_id',
      jsonText(scope.engine, eb.ref('audience_versions.artifact'), ['content', 'title']).as('published_title'),
    ])
    .where('audiences.id', '=', audienceId)
    .executeTakeFirst();
}

/** Engaged this long (or a conversion, or a form) and a session is not a bounce (GA4's rule). */
const ENGAGED_SECONDS = 10;

export interface ActivityTotals {
  sessionId: string;
  pageId: string;
  audienceId: string;
  /** Engaged seconds so far (already capped by the time since the session started). */
  engaged: number;
  scroll: number;
  clicks: number;
  conversion: boolean;
  /** When (unix ms; written as an ISO timestamp, converted only when the batch is written). */
  nowMs: number;
  /** Sessions whose last activity is older than this (unix ms) have ended. */
  endedBeforeMs: number;
}

const ACTIVITY_COLUMNS = [
  'sessionId',
  'pageId',
  'audienceId',
  'engaged',
  'scroll',
  'clicks',
  'converted',
  'now',
  'endedBefore',
] as const;

/**
 * Many sessions' events in one statement (per ROWS_PER_STATEMENT size): the same rule as
 * `updateActivity`, row by row, for at most one row per session.
 */
const updateActivities = preparedQuery(
  (scope, p: RowSlots): Compilable<{ id: string }> => {
    const e = scope.engine;
    const values = Array.from({ length: p.size }, (_, i) => {
      const v = slotRow(p, ACTIVITY_COLUMNS, i);
      const as = (name: string) => (i === 0 ? sql` as ${sql.id(name)}` : sql``);
      return sql`select cast(${v.sessionId} as text)${as('id')}, cast(${v.pageId} as text)${as('page_id')}, cast(${v.audienceId} as text)${as('audience_id')}, cast(${v.engaged} as integer)${as('engaged')}, cast(${v.scroll} as integer)${as('scroll')}, cast(${v.clicks} as integer)${as('clicks')}, cast(${v.converted} as integer)${as('conversion')}, ${timestampValue(e, v.now)}${as('now')}, ${timestampValue(e, v.endedBefore)}${as('ended_before')}`;
    });
    const time = greatest(e, sql.ref('time_spent_seconds'), sql.ref('v.engaged'));
    const converted = sql`(${sql.ref('has_conversion')} or ${sql.ref('v.conversion')} = 1)`;
    const statement = sql<{ id: string }>`update audience_sessions set
      time_spent_seconds = ${time},
      max_scroll_depth_percentage = ${greatest(e, sql.ref('max_scroll_depth_percentage'), sql.ref('v.scroll'))},
      total_clicks_count = ${greatest(e, sql.ref('total_clicks_count'), sql.ref('v.clicks'))},
      has_conversion = ${converted},
      is_bounce = (${time} < ${sql.lit(ENGAGED_SECONDS)} and not ${converted} and not ${sql.ref('has_form_submit')}),
      session_ended_at = ${greatest(e, sql.ref('session_ended_at'), sql.ref('v.now'))}
    from (${sql.join(values, sql` union all `)}) as v
    where ${notByIndex(e, 'audience_sessions.tenant_id')} = ${scope.tenantId}
      and audience_sessions.id = v.id
      and audience_sessions.page_id = v.page_id
      and audience_sessions.audience_id = v.audience_id
      and audience_sessions.session_ended_at >= v.ended_before
    returning audience_sessions.id`;
    const db = scope.unscopedDb();
    return { compile: () => statement.compile(db) };
  },
  { literals: ['size'] },
);

/**
 * Many sessions' events (the batched ingest, audience-sessions.ingest.ts), at most one per
 * session. Returns the ids of the sessions it matched (the others have ended or are not written yet).
 */
export async function recordActivities(scope: TenantScope, rows: readonly ActivityTotals[]): Promise<string[]> {
  const matched: string[] = [];
  // A batch's events share a few milliseconds (one flush window): each time is formatted once.
  const times = new Map<number, string>();
  const isoOf = (ms: number) => {
    let text = times.get(ms);
    if (text === undefined) times.set(ms, (text = iso(ms)));
    return text;
  };
  for (const piece of inStatementSizes(rows)) {
    // Each field named (no spread): the totals come in several shapes (merged or not), and a
    // spread of them took V8's slow path, 4 µs an event (docs/performance.md, "Collect on SQLite").
    const slots = rowSlots(
      piece.map((r) => ({
        sessionId: r.sessionId,
        pageId: r.pageId,
        audienceId: r.audienceId,
        engaged: r.engaged,
        scroll: r.scroll,
        clicks: r.clicks,
        converted: r.conversion ? 1 : 0,
        now: isoOf(r.nowMs),
        endedBefore: isoOf(r.endedBeforeMs),
      })),
      ACTIVITY_COLUMNS,
    );
    for (const row of await updateActivities(scope, slots)) matched.push(row.id);
  }
  return matched;
}

export interface FormSubmitMark {
  sessionId: string;
  pageId: string;
  audienceId: string;
  formSubmissionId: string;
  formSubmissionIdentifier: string;
  formSubmissionEmail: string;
  formSubmissionPhone: string;
  now: string;
}

/**
 * A form submitted during the session: a conversion, never a bounce, and the submission's fields
 * (the latest submission wins). Only the session of that page and audience; an ended session too
 * (the visitor may have filled the form slowly), since the submission happened on its page view.
 */
export async function markFormSubmitted(scope: TenantScope, mark: FormSubmitMark): Promise<boolean> {
  const rows = await scope
    .updateTable('audience_sessions')
    .set((eb) => ({
      has_form_submit: true,
      has_conversion: true,
      is_bounce: false,
      form_submission_id: mark.formSubmissionId,
      form_submission_identifier: mark.formSubmissionIdentifier,
      form_submission_email: mark.formSubmissionEmail,
      form_submission_phone: mark.formSubmissionPhone,
      session_ended_at: greatest(scope.engine, eb.ref('session_ended_at'), sql<string>`${mark.now}`),
    }))
    .where('audience_sessions.id', '=', mark.sessionId)
    .where('audience_sessions.page_id', '=', mark.pageId)
    .where('audience_sessions.audience_id', '=', mark.audienceId)
    .returning('audience_sessions.id')
    .execute();
  return rows.length === 1;
}

/**
 * Counts one question to the page's agent in a session that has not ended and is under `max`
 * questions: the question is activity (the session goes on, never a bounce). Returns the form
 * submission's email the session holds ('' for none), or null when nothing was counted.
 */
export async function countQuestion(
  scope: TenantScope,
  ask: { sessionId: string; pageId: string; audienceId: string; max: number; now: string; endedBefore: string },
): Promise<{ formSubmissionEmail: string } | null> {
  const rows = await scope
    .updateTable('audience_sessions')
    .set((eb) => ({
      questions_asked_count: eb('questions_asked_count', '+', 1),
      is_bounce: false,
      session_ended_at: greatest(scope.engine, eb.ref('session_ended_at'), sql<string>`${ask.now}`),
    }))
    .where('audience_sessions.id', '=', ask.sessionId)
    .where('audience_sessions.page_id', '=', ask.pageId)
    .where('audience_sessions.audience_id', '=', ask.audienceId)
    .where('audience_sessions.questions_asked_count', '<', ask.max)
    .where('audience_sessions.session_ended_at', '>=', ask.endedBefore)
    .returning('audience_sessions.form_submission_email')
    .execute();
  return rows[0] === undefined ? null : { formSubmissionEmail: rows[0].form_submission_email };
}

/** Whether the session exists and belongs to the page (the tenant's scope). */
export async function sessionOfPage(scope: TenantScope, pageId: string, sessionId: string): Promise<boolean> {
  const row = await scope
    .selectFrom('audience_sessions')
    .select('audience_sessions.id')
    .where('audience_sessions.id', '=', sessionId)
    .where('audience_sessions.page_id', '=', pageId)
    .executeTakeFirst();
  return row !== undefined;
}
