import { seededRandom } from '../../lib/random.js';
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { ENGINE, problem, useTestApp, type Tenant } from '../../../test/harness.js';
import { SqliteAdapter } from '../../db/sqlite-adapter.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { insertSessions, recordActivities } from './audience-sessions.queries.js';
import { pruneSessions } from './audience-sessions.retention.js';
import { makeSession } from './audience-sessions.demo.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

let pageId: string;
let audienceA: string;
let audienceB: string;
let otherPage: string;
/** Session ids by start time, for the expectations. */
const sessions: { id: string; startedAt: string; audienceId: string }[] = [];

const HOUR = 3_600_000;
const BASE = Date.parse('2026-10-01T00:00:00.000Z');

beforeAll(async () => {
  const a = await makeAudience(alice.scope, t.clock);
  pageId = a.pageId;
  audienceA = a.audienceId;
  audienceB = (await makeAudience(alice.scope, t.clock, { pageId })).audienceId;
  const other = await makeAudience(alice.scope, t.clock);
  otherPage = other.pageId;
  const random = seededRandom(7);
  const rows = [];
  for (let i = 0; i < 30; i++) {
    const audienceId = i % 3 === 0 ? audienceB : audienceA;
    // two sessions share each start time, so the id breaks ties
    const row = makeSession(
      random,
      { pageId, audienceId, pageTitle: 'Welcome', pageUrl: 'https://x.example/p' },
      BASE + Math.floor(i / 2) * HOUR + (i % 5 === 4 ? 17 * 60_000 : 0),
    );
    rows.push(row);
    sessions.push({ id: row.id, startedAt: row.session_started_at as string, audienceId });
  }
  rows.push(
    makeSession(
      random,
      { pageId: otherPage, audienceId: other.audienceId, pageTitle: 'Other', pageUrl: 'https://x.example/o' },
      BASE,
    ),
  );
  await insertSessions(alice.scope, rows);
  const bobs = await makeAudience(bob.scope, t.clock);
  await insertSessions(bob.scope, [
    makeSession(
      random,
      { pageId: bobs.pageId, audienceId: bobs.audienceId, pageTitle: 'B', pageUrl: 'https://b.example' },
      BASE,
    ),
  ]);
});

const get = (tenant: Tenant, page: string, query = '') =>
  t.request(tenant, { method: 'GET', url: `/v0/pages/${page}/audience_sessions${query}` });

const newestFirst = (list: typeof sessions) =>
  [...list]
    .sort((x, y) => (x.startedAt === y.startedAt ? (x.id < y.id ? 1 : -1) : x.startedAt < y.startedAt ? 1 : -1))
    .map((s) => s.id);

describe('GET /v0/pages/{page_id}/audience_sessions', () => {
  it('lists the page’s sessions, latest start first, with every field', async () => {
    const res = await get(alice, pageId, '?limit=100');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.totalCount).toBe(30);
    expect(body.items.map((s: { audienceSessionId: string }) => s.audienceSessionId)).toEqual(newestFirst(sessions));
    const item = body.items[0];
    expect(Object.keys(item)).toHaveLength(24);
    expect(item).toMatchObject({ pageId, pageTitle: 'Welcome', pageUrl: 'https://x.example/p' });
    expect(typeof item.isBounce).toBe('boolean');
    expect(typeof item.maxScrollDepthPercentage).toBe('number');
    expect(item.sessionStartedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('filters startDate ≤ sessionStartedAt < endDate, in any zone, and by audience', async () => {
    // 03:00Z to 06:00Z written as +02:00
    const res = await get(
      alice,
      pageId,
      `?startDate=${encodeURIComponent('2026-10-01T05:00:00+02:00')}&endDate=2026-10-01T06:00:00Z&limit=100`,
    );
    expect(res.statusCode).toBe(200);
    const expected = sessions.filter(
      (s) => s.startedAt >= '2026-10-01T03:00:00.000Z' && s.startedAt < '2026-10-01T06:00:00.000Z',
    );
    expect(expected).toHaveLength(6);
    expect(res.json().items.map((s: { audienceSessionId: string }) => s.audienceSessionId)).toEqual(
      newestFirst(expected),
    );
    expect(res.json().totalCount).toBe(6);

    const byAudience = await get(alice, pageId, `?audienceId=${audienceB}&limit=100`);
    expect(byAudience.json().items.map((s: { audienceSessionId: string }) => s.audienceSessionId)).toEqual(
      newestFirst(sessions.filter((s) => s.audienceId === audienceB)),
    );
    const empty = await get(alice, pageId, '?startDate=2026-10-01T03:00:00Z&endDate=2026-10-01T03:00:00Z');
    expect(empty.json()).toEqual({ hasMore: false, items: [], nextCursor: null, totalCount: 0 });
  });

  it('walks a filtered range with cursors, each session once, and binds the cursor to the filters', async () => {
    const filter = '?startDate=2026-10-01T02:00:00Z&endDate=2026-10-01T12:00:00Z';
    const seen: string[] = [];
    let cursor: string | null = null;
    let lastCursor = '';
    do {
      const res = await get(alice, pageId, `${filter}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      seen.push(...res.json().items.map((s: { audienceSessionId: string }) => s.audienceSessionId));
      cursor = res.json().nextCursor;
      if (cursor) lastCursor = cursor;
    } while (cursor);
    expect(seen).toEqual(
      newestFirst(
        sessions.filter((s) => s.startedAt >= '2026-10-01T02:00:00.000Z' && s.startedAt < '2026-10-01T12:00:00.000Z'),
      ),
    );
    const other = await get(
      alice,
      pageId,
      `?startDate=2026-10-01T01:00:00Z&endDate=2026-10-01T12:00:00Z&cursor=${lastCursor}`,
    );
    expect(other.statusCode).toBe(400);
    expect(problem(other).code).toBe('invalid_cursor');
  });

  it('counts exactly for any range, with or without an audience (hourly counts plus the partial hours)', async () => {
    const MINUTE = 60_000;
    const instant = fc.option(
      fc.integer({ min: -90, max: 20 * 60 }).map((m) => BASE + m * MINUTE),
      { nil: null },
    );
    await fc.assert(
      fc.asyncProperty(instant, instant, fc.constantFrom(null, 'A', 'B'), async (start, end, which) => {
        if (start !== null && end !== null && start > end) return;
        const audienceId = which === null ? null : which === 'A' ? audienceA : audienceB;
        const params = new URLSearchParams({ limit: '1' });
        if (start !== null) params.set('startDate', new Date(start).toISOString());
        if (end !== null) params.set('endDate', new Date(end).toISOString());
        if (audienceId !== null) params.set('audienceId', audienceId);
        const res = await get(alice, pageId, `?${params}`);
        const expected = sessions.filter(
          (s) =>
            (start === null || Date.parse(s.startedAt) >= start) &&
            (end === null || Date.parse(s.startedAt) < end) &&
            (audienceId === null || s.audienceId === audienceId),
        ).length;
        expect(res.json().totalCount).toBe(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('refuses dates that are not ISO 8601 date-times, and a start after the end (422)', async () => {
    for (const [query, path] of [
      ['?startDate=yesterday', '/query/startDate'],
      ['?endDate=2026-10-01', '/query/endDate'],
      ['?startDate=2026-13-01T00:00:00Z', '/query/startDate'],
      ['?startDate=2026-10-02T00:00:00Z&endDate=2026-10-01T00:00:00Z', '/query/endDate'],
      ['?since=2026-10-01T00:00:00Z', '/query/since'],
    ] as const) {
      const res = await get(alice, pageId, query);
      expect(res.statusCode, query).toBe(422);
      const body = problem(res);
      expect(body.code).toBe('validation_failed');
      expect(body.errors.map((e) => e.path)).toContain(path);
    }
  });

  it('refuses dates outside years 0001–9999 in UTC (422 at the field), also through zone offsets', async () => {
    for (const [query, path] of [
      ['?startDate=0000-01-01T00:00:00Z', '/query/startDate'],
      ['?endDate=%2B010000-01-01T00:00:00Z', '/query/endDate'],
      ['?startDate=0001-01-01T00:00:00%2B00:01', '/query/startDate'],
      ['?endDate=9999-12-31T23:59:59-23:59', '/query/endDate'],
      ['?startDate=0000-12-31T23:59:59Z&endDate=2026-10-01T00:00:00Z', '/query/startDate'],
      ['?startDate=2026-10-01T00:00:00Z&endDate=9999-12-31T23:00:00-01:00', '/query/endDate'],
    ] as const) {
      const res = await get(alice, pageId, query);
      expect(res.statusCode, query).toBe(422);
      const body = problem(res);
      expect(body.code).toBe('validation_failed');
      // (`+010000-…` already fails the date-time format; the others are well-formed but out of range)
      expect(body.errors.map((e) => e.path)).toEqual([path]);
      expect(body.errors[0]!.message).toContain('date-time');
    }
    // The very ends are instants like any other.
    const ends = await get(alice, pageId, '?startDate=0001-01-01T00:00:00Z&endDate=9999-12-31T23:59:59.999Z&limit=1');
    expect(ends.statusCode).toBe(200);
    expect(ends.json().totalCount).toBeGreaterThan(0);
    const offsets = await get(
      alice,
      pageId,
      '?startDate=0001-01-01T23:59:00%2B23:59&endDate=9999-12-31T00:00:00-23:59',
    );
    expect(offsets.statusCode).toBe(200);
  });

  it('answers 404 for another tenant’s page and shows no other tenant’s sessions', async () => {
    const res = await get(bob, pageId);
    expect(res.statusCode).toBe(404);
    expect(problem(res).code).toBe('not_found');
    const theirs = await get(alice, pageId, `?audienceId=${audienceA}&limit=100`);
    expect(theirs.json().totalCount).toBe(20);
    const unknown = await get(alice, pageId, '?audienceId=audience_01jb0000000000000000000000');
    expect(unknown.json()).toMatchObject({ items: [], totalCount: 0 });
  });
});

describe('retention', () => {
  it('forgets whole page-hours past the retention, sessions and counts together', async () => {
    const carol = await t.createTenant('Carol');
    const a = await makeAudience(carol.scope, t.clock);
    const random = seededRandom(3);
    const now = t.clock.now().getTime();
    const target = { pageId: a.pageId, audienceId: a.audienceId, pageTitle: 'T', pageUrl: 'https://x.example/p' };
    const old = Array.from({ length: 5 }, (_, i) => makeSession(random, target, now - 401 * 86_400_000 - i * 600_000));
    const recent = Array.from({ length: 3 }, (_, i) => makeSession(random, target, now - 399 * 86_400_000 + i * 1000));
    await insertSessions(carol.scope, [...old, ...recent]);
    expect(await pruneSessions(t.database.kysely, t.clock, 400)).toBeGreaterThan(0);
    while ((await pruneSessions(t.database.kysely, t.clock, 400)) > 0);
    const left = await carol.scope.selectFrom('audience_sessions').select('id').execute();
    expect(left.map((r) => r.id).sort()).toEqual(recent.map((r) => r.id).sort());
    const res = await get(carol, a.pageId);
    expect(res.json().totalCount).toBe(3);
    // the rest of the data is untouched
    expect((await get(alice, pageId, '?limit=1')).json().totalCount).toBe(30);
  });

  it('forgets the agent’s messages of the sessions it forgets (docs/privacy.md)', async () => {
    const dan = await t.createTenant('Dan');
    const a = await makeAudience(dan.scope, t.clock);
    const random = seededRandom(5);
    const now = t.clock.now().getTime();
    const target = { pageId: a.pageId, audienceId: a.audienceId, pageTitle: 'T', pageUrl: 'https://x.example/p' };
    const old = makeSession(random, target, now - 401 * 86_400_000);
    const recent = makeSession(random, target, now - 10 * 86_400_000);
    await insertSessions(dan.scope, [old, recent]);
    for (const session of [old, recent])
      await dan.scope
        .insertInto('agent_messages', {
          id: `msg_${session.id}`,
          session_id: session.id as string,
          page_id: a.pageId,
          position: 0,
          role: 'question',
          content: 'Is my data kept forever?',
          sources: '[]',
          created_at: session.session_started_at as string,
        })
        .execute();
    while ((await pruneSessions(t.database.kysely, t.clock, 400)) > 0);
    const left = await dan.scope.selectFrom('agent_messages').select('session_id').execute();
    expect(left).toEqual([{ session_id: recent.id }]);
  });
});

describe('the batched ingest’s statements', () => {
  it('writes 123 sessions and their hourly counts, then updates exactly those of one tenant, looking each up by primary key', async () => {
    const erin = await t.createTenant('Erin');
    const a = await makeAudience(erin.scope, t.clock);
    const random = seededRandom(11);
    const target = { pageId: a.pageId, audienceId: a.audienceId, pageTitle: 'T', pageUrl: 'https://x.example/p' };
    const rows = Array.from({ length: 123 }, () => makeSession(random, target, BASE + 30 * 60_000));
    await insertSessions(erin.scope, rows);
    const hours = await erin.scope.selectFrom('audience_session_hours').select(['audience_id', 'sessions']).execute();
    expect(hours.map((h) => [h.audience_id, Number(h.sessions)]).sort()).toEqual([
      ['', 123],
      [a.audienceId, 123],
    ]);

    const texts: { sql: string; adapter: SqliteAdapter }[] = [];
    const prepare = SqliteAdapter.prototype.prepare;
    const spy = vi.spyOn(SqliteAdapter.prototype, 'prepare').mockImplementation(function (this: SqliteAdapter, text) {
      if (text.startsWith('update audience_sessions set')) texts.push({ sql: text, adapter: this });
      return prepare.call(this, text);
    });
    const nowMs = BASE + 40 * 60_000;
    const updates = rows.slice(0, 111).map((row, i) => ({
      sessionId: row.id,
      pageId: a.pageId,
      audienceId: a.audienceId,
      engaged: 0,
      scroll: 50,
      clicks: i + 1,
      conversion: false,
      nowMs,
      endedBeforeMs: nowMs - 30 * 60_000,
    }));
    // Another tenant's scope matches none of them.
    const [matched, foreign] = await TenantScope.acrossTenants(t.database, async (_trx, scopeOf) => [
      await recordActivities(scopeOf(erin.tenantId), updates),
      await recordActivities(scopeOf(alice.tenantId), updates),
    ]);
    spy.mockRestore();
    expect(matched.sort()).toEqual(updates.map((u) => u.sessionId).sort());
    expect(foreign).toEqual([]);
    const written = await erin.scope.selectFrom('audience_sessions').select(['id', 'total_clicks_count']).execute();
    expect(new Map(written.map((r) => [r.id, r.total_clicks_count]))).toEqual(
      new Map(
        rows.map((row, i) => [row.id, i < 111 ? Math.max(row.total_clicks_count, i + 1) : row.total_clicks_count]),
      ),
    );

    if (ENGINE === 'sqlite') {
      // Statements of 100, 10 and 1 rows; each finds its sessions by primary key, never by scanning
      // the tenant's sessions (docs/performance.md, "Collect on SQLite").
      const sizes = new Set(texts.map((x) => x.sql.split(' union all ').length));
      expect([...sizes].sort((x, y) => x - y)).toEqual([1, 10, 100]);
      for (const { sql, adapter } of texts) {
        const parameters = (sql.match(/\?/g) ?? []).map(() => 'x');
        const plan = adapter.raw
          .prepare(`explain query plan ${sql}`)
          .all(...parameters)
          .map((step) => (step as { detail: string }).detail);
        expect(plan.filter((step) => step.includes('audience_sessions ') && step.startsWith('SEARCH'))).toEqual([
          expect.stringMatching(/^SEARCH audience_sessions USING INDEX sqlite_autoindex_audience_sessions_1 \(id=\?\)/),
        ]);
      }
    }
  });
});
