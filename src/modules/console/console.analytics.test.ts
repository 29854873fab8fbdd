import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makeSessions } from '../../../test/factories/sessions.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { inviteAsOperator } from './console.auth.service.js';

const HOST = 'localhost:3000';
const DAY = 86_400_000;

interface Session {
  audienceId: string;
  sessionStartedAt: string;
  isBounce: boolean;
  hasConversion: boolean;
  hasFormSubmit: boolean;
  questionsAskedCount: number;
  timeSpentSeconds: number;
  maxScrollDepthPercentage: number;
  utmSource: string;
  utmCampaign: string;
}

/** The metrics and the per-day table of an analytics screen, as its HTML carries them. */
function screenNumbers(html: string) {
  const metrics: Record<string, string> = {};
  for (const m of html.matchAll(/data-metric="(\w+)" data-value="([^"]*)"/g)) metrics[m[1]!] = m[2]!;
  const table = /data-table="visitsPerDay">([\s\S]*?)<\/table>/.exec(html)![1]!;
  const perDay = [...table.matchAll(/<td>(\d{4}-\d{2}-\d{2})<\/td><td class="num">(\d+)<\/td>/g)].map((m) => [
    m[1],
    Number(m[2]),
  ]);
  return { metrics, perDay };
}

/** What the screen must show, computed here from endpoint 7's own answer. */
function expectedFrom(sessions: Session[], days: string[]) {
  const sorted = sessions.map((s) => s.timeSpentSeconds).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length === 0 ? 'none' : String(sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2);
  const bounces = sessions.filter((s) => s.isBounce).length;
  return {
    metrics: {
      sessions: String(sessions.length),
      medianEngagedSeconds: median,
      bounceRate: sessions.length === 0 ? 'none' : String(bounces / sessions.length),
      conversions: String(sessions.filter((s) => s.hasConversion).length),
      formSubmissions: String(sessions.filter((s) => s.hasFormSubmit).length),
      questionsAsked: String(sessions.reduce((n, s) => n + s.questionsAskedCount, 0)),
    },
    perDay: days.map((d) => [d, sessions.filter((s) => s.sessionStartedAt.startsWith(d)).length]),
  };
}

describe('console analytics (a page, a range, an audience)', () => {
  let t: TestApp;
  let acme: Tenant;
  let other: Tenant;
  let cookie: string;
  let pageId: string;
  let audienceA: string;
  let audienceB: string;
  let othersPage: string;
  const BASE = Date.parse('2026-10-10T00:00:00.000Z');

  beforeAll(async () => {
    t = await startTestApp();
    acme = await t.createTenant('Acme');
    other = await t.createTenant('Other');
    const a = await makeAudience(acme.scope, t.clock);
    pageId = a.pageId;
    audienceA = a.audienceId;
    audienceB = (await makeAudience(acme.scope, t.clock, { pageId, personRouteKey: 'bo-acme' })).audienceId;
    // sessions on several days, at the edges of days too (23:59 and 00:00), before and after the range
    const starts = [BASE - DAY, BASE, BASE + DAY - 60_000, BASE + 2 * DAY + 3_600_000, BASE + 5 * DAY, BASE + 9 * DAY];
    await makeSessions(acme.scope, { pageId, audienceId: audienceA }, starts, 61, 3);
    await makeSessions(acme.scope, { pageId, audienceId: audienceB }, starts.slice(1, 4), 17, 4);
    othersPage = (await makeAudience(other.scope, t.clock)).pageId;
    const invitation = await inviteAsOperator(t.database, t.clock, { tenantId: acme.tenantId, email: 'ana@acme.test' });
    const signedIn = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded', origin: `http://${HOST}` },
      payload: new URLSearchParams({ token: invitation.token }).toString(),
    });
    expect(signedIn.statusCode).toBe(303);
    cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
  });
  afterAll(() => t.close());

  const screen = (url: string): Promise<LightMyRequestResponse> =>
    t.app.inject({ method: 'GET', url, headers: { host: HOST, cookie } });

  /** Every session endpoint 7 answers for the filter, page after page. */
  async function endpoint7(query: Record<string, string>): Promise<Session[]> {
    const all: Session[] = [];
    let cursor: string | null = null;
    do {
      const params = new URLSearchParams({ ...query, limit: '100', ...(cursor ? { cursor } : {}) });
      const res = await t.request(acme, { method: 'GET', url: `/v0/pages/${pageId}/audience_sessions?${params}` });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { items: Session[]; nextCursor: string | null };
      all.push(...body.items);
      cursor = body.nextCursor;
    } while (cursor !== null);
    return all;
  }

  const rangeDays = (from: string, to: string) => {
    const out: string[] = [];
    for (let at = Date.parse(from); at <= Date.parse(to); at += DAY) out.push(new Date(at).toISOString().slice(0, 10));
    return out;
  };

  it('shows exactly the numbers endpoint 7 gives for the same page and range', async () => {
    const res = await screen(`/console/pages/${pageId}/analytics?from=2026-10-10&to=2026-10-15`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    const sessions = await endpoint7({ startDate: '2026-10-10T00:00:00Z', endDate: '2026-10-16T00:00:00Z' });
    expect(sessions.length).toBeGreaterThan(40);
    expect(screenNumbers(res.body)).toEqual(expectedFrom(sessions, rangeDays('2026-10-10', '2026-10-15')));
    // the top sources, as endpoint 7's sessions count them
    const linkedin = sessions.filter((s) => s.utmSource === 'linkedin').length;
    expect(res.body).toContain(`<td>linkedin</td><td class="num">${linkedin}</td>`);
    // the chart's data is the table's, served with uPlot from our own origin
    expect(res.body).toMatch(/<script src="\/console\/static\/uplot\.[0-9a-f]{12}\.js" defer>/);
    expect(res.body).toContain('data-days="[&quot;2026-10-10&quot;');
  });

  it('per audience: the same numbers as endpoint 7 with audienceId', async () => {
    const res = await screen(`/console/pages/${pageId}/analytics?from=2026-10-09&to=2026-10-12&audience=${audienceB}`);
    expect(res.statusCode).toBe(200);
    const sessions = await endpoint7({
      startDate: '2026-10-09T00:00:00Z',
      endDate: '2026-10-13T00:00:00Z',
      audienceId: audienceB,
    });
    expect(sessions.length).toBe(17);
    expect(screenNumbers(res.body)).toEqual(expectedFrom(sessions, rangeDays('2026-10-09', '2026-10-12')));
  });

  it('defaults to the last 30 days, today included; an empty range shows zeros', async () => {
    t.clock.set('2026-10-20T12:00:00.000Z');
    const res = await screen(`/console/pages/${pageId}/analytics`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('value="2026-09-21"');
    expect(res.body).toContain('value="2026-10-20"');
    const sessions = await endpoint7({ startDate: '2026-09-21T00:00:00Z', endDate: '2026-10-21T00:00:00Z' });
    expect(sessions.length).toBe(78);
    expect(screenNumbers(res.body)).toEqual(expectedFrom(sessions, rangeDays('2026-09-21', '2026-10-20')));
    const empty = screenNumbers(
      (await screen(`/console/pages/${pageId}/analytics?from=2025-01-01&to=2025-01-02`)).body,
    );
    expect(empty.metrics).toMatchObject({ sessions: '0', medianEngagedSeconds: 'none', bounceRate: 'none' });
  });

  it('refuses a bad range (422) and answers 404 for another tenant’s page or a made-up id', async () => {
    const bad = await screen(`/console/pages/${pageId}/analytics?from=2026-13-01&to=2026-10-01`);
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('/query/from');
    const reversed = await screen(`/console/pages/${pageId}/analytics?from=2026-10-05&to=2026-10-01`);
    expect(reversed.statusCode).toBe(422);
    expect((await screen(`/console/pages/${othersPage}/analytics`)).statusCode).toBe(404);
    expect((await screen(`/console/pages/page_nope/analytics`)).statusCode).toBe(404);
    // without a session: to sign in
    const anonymous = await t.app.inject({
      method: 'GET',
      url: `/console/pages/${pageId}/analytics`,
      headers: { host: HOST },
    });
    expect(anonymous.statusCode).toBe(303);
  });

  it('serves uPlot and the chart island from the console’s static route', async () => {
    const res = await screen(`/console/pages/${pageId}/analytics`);
    for (const path of res.body.match(/\/console\/static\/(?:uplot|chart|insights)\.[0-9a-f]{12}\.(?:js|css)/g)!) {
      const asset = await t.app.inject({ method: 'GET', url: path, headers: { host: HOST } });
      expect(asset.statusCode, path).toBe(200);
      expect(asset.headers['cache-control']).toContain('immutable');
    }
  });
});
