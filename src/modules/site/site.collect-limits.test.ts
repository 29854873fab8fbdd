import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { problem, startTestApp, type TestApp } from '../../../test/harness.js';

/**
 * The visit events' limits (docs/pages-runtime.md): each client address is held to its own rate
 * before the page's shared one is counted, so a few flooding addresses cannot use up the page's
 * allowance and silence its real visitors' analytics; IPv6 addresses count by their /64.
 */
let t: TestApp;
let view: string;
/** A second page: its own allowance, for the second test. */
let otherView: string;

const HOST = 'limits.collect.localhost';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
const PER_ADDRESS = 2; // bursts of 5×: 10
const PER_PAGE = 4; // bursts of 5×: 20

function collect(body: unknown, address: string) {
  return t.app.inject({
    method: 'POST',
    url: '/_ap/collect',
    remoteAddress: address,
    headers: { host: HOST, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': UA },
    payload: JSON.stringify(body),
  });
}

beforeAll(async () => {
  t = await startTestApp({
    config: { PAGE_EVENTS_PER_SECOND: String(PER_ADDRESS), PAGE_EVENTS_PER_PAGE_PER_SECOND: String(PER_PAGE) },
  });
  const alice = await t.createTenant('Alice');
  const { audienceId } = await makeAudience(alice.scope, t.clock, { computedName: 'Acme' });
  const { tenantDomainId } = await linkOnHost(t, alice, { hostname: HOST, path: '/offers/acme', audienceId });
  const other = await makeAudience(alice.scope, t.clock, { computedName: 'Globex' });
  await linkOnHost(t, alice, { tenantDomainId, path: '/offers/globex', audienceId: other.audienceId });
  const viewOf = async (path: string) =>
    /<meta name="ap-view" content="([^"]+)"/.exec((await visit(t, HOST, path)).body)![1]!;
  view = await viewOf('/offers/acme');
  otherView = await viewOf('/offers/globex');
});
afterAll(() => t.close());

it('refuses a flooding address before it reaches the page’s allowance; the page’s visitors are still counted', async () => {
  const flooder = '203.0.113.50';
  const started = await collect({ t: 'start', v: view, u: `http://${HOST}/offers/acme` }, flooder);
  expect(started.statusCode).toBe(201);
  const token = started.json().s as string;
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++) {
    statuses.push((await collect({ t: 'update', s: token, e: i, d: 10, c: 0, x: false }, flooder)).statusCode);
  }
  // its burst (the start took one), then refused as an address, never as the page
  expect(statuses.filter((s) => s === 204)).toHaveLength(5 * PER_ADDRESS - 1);
  const refused = await collect({ t: 'update', s: token, e: 99, d: 10, c: 0, x: false }, flooder);
  expect(refused.statusCode).toBe(429);
  expect(problem(refused).detail).toMatch(/^Too many events from this address; retry after \d+ s\.$/);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  // the page's allowance (20) is not spent by the flood: other visitors' starts are all recorded
  for (let i = 0; i < 8; i++) {
    const visitor = await collect({ t: 'start', v: view, u: `http://${HOST}/offers/acme` }, `198.51.100.${i + 1}`);
    expect(visitor.statusCode, visitor.body).toBe(201);
  }
});

it('counts IPv6 addresses by their /64', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 5 * PER_ADDRESS + 1; i++) {
    const address = `2001:db8:aa:bb:${(i + 1).toString(16)}::1`;
    statuses.push((await collect({ t: 'start', v: otherView, u: `http://${HOST}/offers/globex` }, address)).statusCode);
  }
  expect(statuses.slice(0, 5 * PER_ADDRESS).every((s) => s === 201)).toBe(true);
  expect(statuses.at(-1)).toBe(429);
});
