import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { problem, startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { SessionIngest } from '../audience-sessions/index.js';

let t: TestApp;
let alice: Tenant;
let bob: Tenant;
let audienceId: string;
let pageId: string;
let view: string;
let bobsView: string;

const HOST = 'go.alice.localhost';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

function collect(body: unknown, headers: Record<string, string> = {}, host = HOST) {
  return t.app.inject({
    method: 'POST',
    url: '/_ap/collect',
    headers: { host, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': UA, ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const viewOf = (html: string) => /<meta name="ap-view" content="([^"]+)"/.exec(html)![1]!;
// Events are written in batches (audience-sessions.ingest.ts): reads wait for what was acknowledged.
const sessions = async () => {
  await SessionIngest.flushAll();
  return t.database.kysely.selectFrom('audience_sessions').selectAll().orderBy('id').execute();
};
const hours = async () => {
  await SessionIngest.flushAll();
  return t.database.kysely.selectFrom('audience_session_hours').selectAll().orderBy('audience_id').execute();
};

async function start(landing = `http://${HOST}/offers/acme`) {
  const res = await collect({ t: 'start', v: view, u: landing });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().s as string;
}

beforeAll(async () => {
  t = await startTestApp({ config: { PAGE_EVENTS_PER_SECOND: '0', PAGE_EVENTS_PER_PAGE_PER_SECOND: '0' } });
  alice = await t.createTenant('Alice');
  bob = await t.createTenant('Bob');
  ({ audienceId, pageId } = await makeAudience(alice.scope, t.clock, { computedName: 'Acme' }));
  await linkOnHost(t, alice, { hostname: HOST, path: '/offers/acme', audienceId });
  view = viewOf((await visit(t, HOST, '/offers/acme')).body);
  const bobs = await makeAudience(bob.scope, t.clock);
  await linkOnHost(t, bob, { hostname: 'go.bob.localhost', path: '/b', audienceId: bobs.audienceId });
  bobsView = viewOf((await visit(t, 'go.bob.localhost', '/b')).body);
});
afterAll(() => t.close());

describe('POST /_ap/collect', () => {
  it('starts a session with the landing page’s UTM values, then records its totals', async () => {
    const token = await start(
      `http://${HOST}/offers/acme?utm_source=linkedin&utm_medium=social&utm_campaign=q4&utm_term=pages&utm_content=hero&email=a@b.c#top`,
    );
    const id = token.split('.')[0]!;
    let [row] = (await sessions()).filter((s) => s.id === id);
    expect(row).toMatchObject({
      tenant_id: alice.tenantId,
      page_id: pageId,
      audience_id: audienceId,
      analytics_session_id: id,
      page_title: 'Welcome',
      page_url: `http://${HOST}/offers/acme`,
      utm_source: 'linkedin',
      utm_medium: 'social',
      utm_campaign: 'q4',
      utm_term: 'pages',
      utm_content: 'hero',
      is_bounce: true,
      has_conversion: false,
      has_form_submit: false,
      form_submission_id: '',
      questions_asked_count: 0,
      session_started_at: t.clock.now().toISOString(),
    });
    t.clock.advance(12_000);
    const update = await collect({ t: 'update', s: token, e: 11, d: 64, c: 2, x: false });
    expect(update.statusCode).toBe(204);
    [row] = (await sessions()).filter((s) => s.id === id);
    expect(row).toMatchObject({
      time_spent_seconds: 11,
      max_scroll_depth_percentage: 64,
      total_clicks_count: 2,
      is_bounce: false,
      session_ended_at: t.clock.now().toISOString(),
    });
    // totals, not increments: an older report changes nothing but the end
    await collect({ t: 'update', s: token, e: 3, d: 10, c: 1, x: true });
    [row] = (await sessions()).filter((s) => s.id === id);
    expect(row).toMatchObject({
      time_spent_seconds: 11,
      max_scroll_depth_percentage: 64,
      total_clicks_count: 2,
      has_conversion: true,
    });

    const api = await t.request(alice, {
      method: 'GET',
      url: `/v0/pages/${pageId}/audience_sessions?audienceId=${audienceId}`,
    });
    expect(api.json().items.find((s: { audienceSessionId: string }) => s.audienceSessionId === id)).toMatchObject({
      utmSource: 'linkedin',
      maxScrollDepthPercentage: 64,
      hasConversion: true,
      isBounce: false,
    });
  });

  it('keeps the hourly counts exact: one per session, in the hour it started', async () => {
    const before = await sessions();
    const counted = (await hours())
      .filter((h) => h.page_id === pageId)
      .reduce((n, h) => n + (h.audience_id === '' ? h.sessions : 0), 0);
    expect(counted).toBe(before.filter((s) => s.page_id === pageId).length);
    t.clock.advance(3_600_000);
    await start();
    await start();
    const after = (await hours()).filter(
      (h) =>
        h.page_id === pageId &&
        h.hour === new Date(Math.floor(t.clock.now().getTime() / 3_600_000) * 3_600_000).toISOString(),
    );
    expect(after.map((h) => [h.audience_id, h.sessions])).toEqual([
      ['', 2],
      [audienceId, 2],
    ]);
  });

  it('caps engaged time by the time since the start', async () => {
    const token = await start();
    t.clock.advance(20_000);
    expect((await collect({ t: 'update', s: token, e: 86_400, d: 100, c: 0, x: false })).statusCode).toBe(204);
    const row = (await sessions()).find((s) => s.id === token.split('.')[0]);
    expect(row!.time_spent_seconds).toBeLessThanOrEqual(25);
  });

  it('gives concurrent events of one session one row with the maxima', async () => {
    const token = await start();
    t.clock.advance(60_000);
    const events = Array.from({ length: 40 }, (_, i) => ({
      t: 'update',
      s: token,
      e: (i * 7) % 50,
      d: (i * 13) % 101,
      c: (i * 5) % 23,
      x: i === 17,
    }));
    const results = await Promise.all(events.map((e) => collect(e)));
    expect(results.map((r) => r.statusCode)).toEqual(events.map(() => 204));
    const rows = (await sessions()).filter((s) => s.id === token.split('.')[0]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      time_spent_seconds: Math.max(...events.map((e) => e.e)),
      max_scroll_depth_percentage: Math.max(...events.map((e) => e.d)),
      total_clicks_count: Math.max(...events.map((e) => e.c)),
      has_conversion: true,
      is_bounce: false,
    });
  });

  it('ends a session after 30 minutes without activity (409), writing nothing', async () => {
    const token = await start();
    t.clock.advance(29 * 60_000);
    expect((await collect({ t: 'update', s: token, e: 5, d: 5, c: 1, x: false })).statusCode).toBe(204);
    t.clock.advance(31 * 60_000);
    const before = await sessions();
    const late = await collect({ t: 'update', s: token, e: 9, d: 9, c: 9, x: true });
    expect(late.statusCode).toBe(409);
    expect(problem(late).code).toBe('session_ended');
    expect(await sessions()).toEqual(before);
  });

  it('refuses every bad input with a 4xx and writes nothing', async () => {
    const token = await start();
    const bobsToken = (
      await collect({ t: 'start', v: bobsView, u: 'http://go.bob.localhost/b' }, {}, 'go.bob.localhost')
    ).json().s as string;
    const [id, page, audience, startedAt, mac] = token.split('.');
    const before = [await sessions(), await hours()];
    const cases: [unknown, number, string?, Record<string, string>?][] = [
      ['{"t":"start",', 400],
      ['', 400],
      [JSON.stringify({ t: 'start', v: view, u: 'x'.repeat(9000) }), 413],
      [[], 422, '/body/t'],
      [{ t: 'delete' }, 422, '/body/t'],
      [{ t: 'start', v: view }, 422, '/body/u'],
      [{ t: 'start', v: view, u: `http://${HOST}/`, extra: 1 }, 422, '/body/extra'],
      [{ t: 'start', v: 5, u: `http://${HOST}/` }, 422, '/body/v'],
      [{ t: 'start', v: `${audienceId}.AAAAAAAAAAAAAAAAAAAAAA`, u: `http://${HOST}/` }, 422, '/body/v'],
      [{ t: 'start', v: bobsView, u: `http://${HOST}/` }, 422, '/body/v'],
      [{ t: 'start', v: view, u: 'http://evil.example/offers/acme' }, 422, '/body/u'],
      [{ t: 'start', v: view, u: 'javascript:alert(1)' }, 422, '/body/u'],
      [{ t: 'update', s: token, e: -1, d: 0, c: 0, x: false }, 422, '/body/e'],
      [{ t: 'update', s: token, e: 1, d: 101, c: 0, x: false }, 422, '/body/d'],
      [{ t: 'update', s: token, e: 1, d: 1, c: 1.5, x: false }, 422, '/body/c'],
      [{ t: 'update', s: token, e: 1, d: 1, c: 1, x: 'yes' }, 422, '/body/x'],
      [{ t: 'update', s: token, e: '1', d: 1, c: 1, x: false }, 422, '/body/e'],
      [
        { t: 'update', s: `${id}.${page}.${audience}.${startedAt}.AAAAAAAAAAAAAAAAAAAAAA`, e: 1, d: 1, c: 1, x: false },
        422,
        '/body/s',
      ],
      [
        {
          t: 'update',
          s: `session_01jb0000000000000000000000.${page}.${audience}.${startedAt}.${mac}`,
          e: 1,
          d: 1,
          c: 1,
          x: false,
        },
        422,
        '/body/s',
      ],
      [{ t: 'update', s: bobsToken, e: 1, d: 1, c: 1, x: false }, 422, '/body/s'],
      [{ t: 'update', s: token, e: 1, d: 1, c: 1, x: false }, 403, undefined, { 'sec-fetch-site': 'cross-site' }],
      [
        { t: 'update', s: token, e: 1, d: 1, c: 1, x: false },
        415,
        undefined,
        { 'content-type': 'application/x-www-form-urlencoded' },
      ],
      ['{"t":"start","__proto__":{"x":1}}', 400],
    ];
    for (const [body, status, path, headers] of cases) {
      const res = await collect(body, headers);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(status);
      if (path !== undefined)
        expect(
          problem(res).errors.map((e) => e.path),
          JSON.stringify(body),
        ).toContain(path);
    }
    expect([await sessions(), await hours()]).toEqual(before);
    // another tenant's session on this host, or this session on another tenant's host
    expect(
      (await collect({ t: 'update', s: token, e: 1, d: 1, c: 1, x: false }, {}, 'go.bob.localhost')).statusCode,
    ).toBe(422);
    expect([await sessions(), await hours()]).toEqual(before);
  });

  it('does not start sessions for a page that is not served any more (404)', async () => {
    const carol = await t.createTenant('Carol');
    const a = await makeAudience(carol.scope, t.clock);
    await linkOnHost(t, carol, { hostname: 'c.carol.localhost', path: '/c', audienceId: a.audienceId });
    const carolsView = viewOf((await visit(t, 'c.carol.localhost', '/c')).body);
    await carol.scope
      .updateTable('audiences')
      .set({ archived_at: t.clock.now().toISOString() })
      .where('id', '=', a.audienceId)
      .execute();
    const res = await collect({ t: 'start', v: carolsView, u: 'http://c.carol.localhost/c' }, {}, 'c.carol.localhost');
    expect(res.statusCode).toBe(404);
  });

  it('records nothing for Global Privacy Control and for declared crawlers', async () => {
    const before = await sessions();
    for (const headers of [
      { 'sec-gpc': '1' } as Record<string, string>,
      { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
      {
        'user-agent':
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0 Safari/537.36',
      },
      { 'user-agent': 'curl/8.5.0' },
    ]) {
      const res = await collect({ t: 'start', v: view, u: `http://${HOST}/offers/acme` }, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(204);
    }
    expect(await sessions()).toEqual(before);
  });
});

describe('rate limits', () => {
  it('refuses a flood from one address with 429 and writes only what the limit allowed', async () => {
    const limited = await startTestApp({
      config: { PAGE_EVENTS_PER_SECOND: '2', PAGE_EVENTS_PER_PAGE_PER_SECOND: '0' },
    });
    try {
      const dave = await limited.createTenant('Dave');
      const a = await makeAudience(dave.scope, limited.clock);
      await linkOnHost(limited, dave, { hostname: 'd.dave.localhost', path: '/d', audienceId: a.audienceId });
      const html = (await visit(limited, 'd.dave.localhost', '/d')).body;
      const davesView = viewOf(html);
      const results = await Promise.all(
        Array.from({ length: 30 }, () =>
          limited.app.inject({
            method: 'POST',
            url: '/_ap/collect',
            headers: { host: 'd.dave.localhost', 'content-type': 'text/plain', 'user-agent': UA },
            payload: JSON.stringify({ t: 'start', v: davesView, u: 'http://d.dave.localhost/d' }),
          }),
        ),
      );
      const codes = results.map((r) => r.statusCode);
      const created = codes.filter((c) => c === 201).length;
      expect(created).toBeGreaterThan(0);
      expect(created).toBeLessThanOrEqual(11); // a burst of 5× the rate, plus what refills meanwhile
      expect(codes.filter((c) => c === 429).length).toBe(30 - created);
      expect(results.find((r) => r.statusCode === 429)!.headers['retry-after']).toBeDefined();
      await SessionIngest.flushAll();
      const rows = await limited.database.kysely.selectFrom('audience_sessions').select('id').execute();
      expect(rows).toHaveLength(created);
    } finally {
      await limited.close();
    }
  });

  it('limits the events of one page over all addresses, and only that page', async () => {
    const limited = await startTestApp({
      config: { PAGE_EVENTS_PER_SECOND: '0', PAGE_EVENTS_PER_PAGE_PER_SECOND: '1' },
    });
    try {
      const erin = await limited.createTenant('Erin');
      const a = await makeAudience(erin.scope, limited.clock);
      const b = await makeAudience(erin.scope, limited.clock);
      const { tenantDomainId } = await linkOnHost(limited, erin, {
        hostname: 'e.erin.localhost',
        path: '/a',
        audienceId: a.audienceId,
      });
      await linkOnHost(limited, erin, { tenantDomainId, path: '/b', audienceId: b.audienceId });
      const views = [
        viewOf((await visit(limited, 'e.erin.localhost', '/a')).body),
        viewOf((await visit(limited, 'e.erin.localhost', '/b')).body),
      ];
      const send = (v: string, i: number) =>
        limited.app.inject({
          method: 'POST',
          url: '/_ap/collect',
          remoteAddress: `10.0.${Math.floor(i / 250)}.${i % 250}`,
          headers: { host: 'e.erin.localhost', 'content-type': 'text/plain', 'user-agent': UA },
          payload: JSON.stringify({ t: 'start', v, u: 'http://e.erin.localhost/a' }),
        });
      const first = await Promise.all(Array.from({ length: 12 }, (_, i) => send(views[0]!, i)));
      const created = first.filter((r) => r.statusCode === 201).length;
      expect(created).toBeGreaterThanOrEqual(5);
      expect(created).toBeLessThanOrEqual(7);
      expect(first.filter((r) => r.statusCode === 429)).toHaveLength(12 - created);
      // another page of the same tenant is not affected
      expect((await send(views[1]!, 99)).statusCode).toBe(201);
    } finally {
      await limited.close();
    }
  });
});
