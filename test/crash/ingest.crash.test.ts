import http from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TenantScope } from '../../src/db/tenant-scope.js';
import { systemClock } from '../../src/lib/clock.js';
import { createPageLink } from '../../src/modules/page-links/page-links.service.js';
import { createTenantDomain } from '../../src/modules/tenant-domains/tenant-domains.service.js';
import { createTenant } from '../../src/modules/tenants/tenants.service.js';
import { makeAudience } from '../factories/audiences.js';
import { makePage } from '../factories/pages.js';
import { TEST_SECRET_KEY } from '../factories/webhooks.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../harness.js';
import { startServerProcess } from '../process.js';

/**
 * Visit events are acknowledged at once and written in batches (issue 27,
 * docs/pages-runtime.md#durability-of-visit-events). kill -9 during a flood of visit starts and
 * updates: after a restart every session row has its hourly count (the rollup's sum equals the
 * rows: a batch commits whole or not at all), and the only acknowledged events missing are those
 * acknowledged within one flush window (plus the flush in progress) before the kill. Then a
 * flood ended by SIGTERM: shutdown writes everything acknowledged.
 *
 * Runs with `npm run test:crash`, on SQLite and PostgreSQL; well under a minute per engine.
 */

/** The ingest's flush interval (audience-sessions.ingest.ts, INGEST_FLUSH_MS). */
const FLUSH_MS = 25;
/**
 * How much longer than the interval an acknowledged event may wait unwritten: the flush that takes
 * it may be committing when the kill lands, and on a loaded CI machine one takes a few hundred ms.
 */
const FLUSH_SLACK_MS = 750;
const CLIENTS = 8;
const SESSIONS = 40;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
const HOST = `ingest-crash-${process.pid}.localhost`;
const PATH = '/visit';

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startServerProcess>> | null = null;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  await database.cleanup();
});

/** One request to the page host (fetch cannot set Host); null when the process died under it. */
function visit(
  baseUrl: string,
  method: 'GET' | 'POST',
  body?: unknown,
): Promise<{ status: number; text: string } | null> {
  return new Promise((resolve) => {
    const request = http.request(
      `${baseUrl}${method === 'GET' ? PATH : '/_ap/collect'}`,
      {
        method,
        agent: false,
        headers: { host: HOST, 'content-type': 'text/plain', 'user-agent': UA },
        timeout: 20_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', () => resolve(null));
      },
    );
    request.on('error', () => resolve(null));
    request.on('timeout', () => request.destroy());
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function serverEnv(): Record<string, string> {
  return {
    ...database.env,
    SECRET_KEY: TEST_SECRET_KEY,
    PAGE_EVENTS_PER_SECOND: '0',
    PAGE_EVENTS_PER_PAGE_PER_SECOND: '0',
    PAGE_MISSES_PER_MINUTE: '0',
  };
}

/** What the clients were told, with when (performance.now()). */
interface Flood {
  /** Acknowledged starts: session id → when. */
  starts: Map<string, number>;
  /** Per update session: the highest round acknowledged, and when each round was acknowledged. */
  acknowledged: { round: number; at: number }[][];
  /** Per update session: the highest round sent. */
  sent: number[];
}

const newFlood = (tokens: string[]): Flood => ({
  starts: new Map(),
  acknowledged: tokens.map(() => []),
  sent: tokens.map(() => -1),
});
const acknowledgedIn = (f: Flood) => f.starts.size + f.acknowledged.reduce((sum, a) => sum + a.length, 0);

/** Clients sending visit starts and updates (totals growing by round) until `running()` is false. */
async function flood(
  baseUrl: string,
  view: string,
  tokens: string[],
  counter: { next: number },
  running: () => boolean,
  result: Flood = newFlood(tokens),
): Promise<Flood> {
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (running()) {
        if (client % 4 === 0) {
          const res = await visit(baseUrl, 'POST', { t: 'start', v: view, u: `http://${HOST}${PATH}` });
          if (res?.status === 201)
            result.starts.set((JSON.parse(res.text) as { s: string }).s.split('.')[0]!, performance.now());
          else if (res !== null && res.status !== 503) throw new Error(`start: ${res.status} ${res.text}`);
          continue;
        }
        const n = counter.next++;
        const k = n % tokens.length;
        const round = Math.floor(n / tokens.length);
        result.sent[k] = Math.max(result.sent[k]!, round);
        const res = await visit(baseUrl, 'POST', {
          t: 'update',
          s: tokens[k],
          e: 0,
          d: Math.min(100, round),
          c: round,
          x: false,
        });
        if (res?.status === 204) result.acknowledged[k]!.push({ round, at: performance.now() });
        else if (res !== null && res.status !== 503) throw new Error(`update: ${res.status} ${res.text}`);
      }
    }),
  );
  return result;
}

it('a kill -9 during a collect flood loses at most one flush window and never corrupts a rollup; shutdown flushes', async () => {
  const tenant = await createTenant(database.kysely, systemClock, { name: 'Ingest crash' });
  const scope = TenantScope.of(database, tenant.tenantId);
  const pageId = await makePage(scope, systemClock, { status: 'published' });
  const { audienceId } = await makeAudience(scope, systemClock, { pageId });
  const domain = await createTenantDomain(scope, systemClock, { hostname: HOST }, { serviceHostnames: [] });
  await createPageLink(scope, systemClock, {
    path: PATH,
    tenantDomainId: domain.tenantDomainId,
    target: { targetType: 'audience', audienceId },
  });

  const sessions = async () =>
    scope
      .selectFrom('audience_sessions')
      .select(['id', 'total_clicks_count', 'max_scroll_depth_percentage'])
      .where('audience_id', '=', audienceId)
      .execute();
  const hourlySum = async () =>
    Number(
      (
        await scope
          .selectFrom('audience_session_hours')
          .select(sql<number>`coalesce(sum(sessions), 0)`.as('n'))
          .where('audience_id', '=', audienceId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** Every acknowledged event older than `cutoff` is in the database; returns how many younger ones are missing. */
  const check = async (flooded: Flood, tokens: string[], cutoff: number) => {
    const rows = await sessions();
    // The rollup is exact: one hourly count per session row, no more, no less.
    expect(await hourlySum()).toBe(rows.length);
    const byId = new Map(rows.map((r) => [r.id, r]));
    let lostYoung = 0;
    for (const [id, at] of flooded.starts) {
      if (byId.has(id)) continue;
      if (at < cutoff)
        expect.fail(
          `the start of ${id}, acknowledged before ${cutoff === Infinity ? 'the stop' : 'the last flush window before the kill'}, is lost`,
        );
      lostYoung++;
    }
    for (const [k, token] of tokens.entries()) {
      const row = byId.get(token.split('.')[0]!);
      expect(row, `session ${k}`).toBeDefined();
      const clicks = row!.total_clicks_count;
      const durable = Math.max(-1, ...flooded.acknowledged[k]!.filter((a) => a.at < cutoff).map((a) => a.round));
      const highest = Math.max(-1, ...flooded.acknowledged[k]!.map((a) => a.round));
      expect(clicks, `session ${k}: clicks at least what was acknowledged in time`).toBeGreaterThanOrEqual(durable);
      expect(clicks, `session ${k}: clicks at most what was sent`).toBeLessThanOrEqual(Math.max(0, flooded.sent[k]!));
      expect(row!.max_scroll_depth_percentage, `session ${k}: scroll and clicks from one event`).toBe(
        Math.min(100, clicks),
      );
      if (clicks < highest) lostYoung++;
    }
    return lostYoung;
  };

  server = await startServerProcess(serverEnv());
  const page = await visit(server.baseUrl, 'GET');
  expect(page?.status).toBe(200);
  const view = /<meta name="ap-view" content="([^"]+)"/.exec(page!.text)![1]!;
  const tokens: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const res = await visit(server.baseUrl, 'POST', { t: 'start', v: view, u: `http://${HOST}${PATH}` });
    expect(res?.status).toBe(201);
    tokens.push((JSON.parse(res!.text) as { s: string }).s);
  }

  // 1. kill -9 in the middle of the flood.
  // Update rounds keep growing across both runs (the second run's totals are above the first's).
  const counter = { next: 0 };
  let running = true;
  const first = newFlood(tokens);
  const killed = flood(server.baseUrl, view, tokens, counter, () => running, first);
  // Well into the flood (however slow the machine), at a random moment.
  const floodDeadline = Date.now() + 15_000;
  while (acknowledgedIn(first) < 200 && Date.now() < floodDeadline) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, Math.random() * 500));
  const killedAt = performance.now();
  await server.stop('SIGKILL');
  running = false;
  await killed;
  const acknowledgedBeforeKill = acknowledgedIn(first);
  expect(acknowledgedBeforeKill).toBeGreaterThanOrEqual(200);

  server = await startServerProcess(serverEnv());
  const cutoff = killedAt - FLUSH_MS - FLUSH_SLACK_MS;
  const lost = await check(first, tokens, cutoff);

  // 2. The restarted process takes events for the same sessions; SIGTERM writes all it acknowledged.
  running = true;
  const stopped = flood(server.baseUrl, view, tokens, counter, () => running);
  await new Promise((r) => setTimeout(r, 1_000));
  running = false;
  const second = await stopped;
  expect(await server.stop('SIGTERM')).toBe(0);
  server = null;
  // Nothing of the second run may be missing: everything acknowledged before the stop is durable
  // (with what the first run made durable before its kill).
  for (const [k, acks] of first.acknowledged.entries()) {
    second.acknowledged[k]!.unshift(...acks.filter((a) => a.at < cutoff));
    second.sent[k] = Math.max(second.sent[k]!, first.sent[k]!);
  }
  expect(await check(second, tokens, Number.POSITIVE_INFINITY)).toBe(0);

  console.log(
    `${ENGINE}: ${acknowledgedBeforeKill} events acknowledged before the kill, ${lost} of the last ` +
      `${FLUSH_MS + FLUSH_SLACK_MS} ms lost; ${second.starts.size} starts and ` +
      `${second.acknowledged.reduce((s, a) => s + a.length, 0)} updates in all across a clean stop, none lost`,
  );
}, 120_000);
