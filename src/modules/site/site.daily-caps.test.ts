import { beforeAll, describe, expect, it } from 'vitest';
import { formPageOn, visit } from '../../../test/factories/site.js';
import { problem, rowCounts, useTestApp } from '../../../test/harness.js';
import { SessionIngest } from '../audience-sessions/index.js';

/**
 * A tenant's daily caps on what visitors create (issue 26; docs/pages-runtime.md#daily-caps,
 * docs/forms.md#abuse-controls): past them, pages still serve, but no visit is recorded and no
 * form is stored until the next UTC day; other tenants are not affected.
 */
const t = useTestApp({
  tenants: ['Alice', 'Bob'],
  config: {
    SESSIONS_PER_TENANT_PER_DAY: '3',
    FORM_SUBMISSIONS_PER_TENANT_PER_DAY: '2',
    FORM_SUBMISSIONS_PER_MINUTE: '0',
  },
});
const [alice, bob] = t.tenants;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
const HOSTS = { alice: 'caps.alice.localhost', bob: 'caps.bob.localhost' };
const views: Record<string, string> = {};
const forms: Record<string, Record<string, string>> = {};
let address = 0;

const start = (host: string) =>
  t.app.inject({
    method: 'POST',
    url: '/_ap/collect',
    remoteAddress: `198.51.100.${++address}`,
    headers: { host, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': UA },
    payload: JSON.stringify({ t: 'start', v: views[host], u: `http://${host}/offers` }),
  });

const submit = (host: string, json = true) => {
  const body = { ...forms[host], email: `visitor${++address}@corp.example` };
  return t.app.inject({
    method: 'POST',
    url: '/offers',
    remoteAddress: `203.0.113.${address % 250}`,
    headers: {
      host,
      'user-agent': UA,
      'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
      ...(json ? { accept: 'application/json' } : {}),
    },
    payload: json ? body : new URLSearchParams(body).toString(),
  });
};

beforeAll(async () => {
  t.clock.set('2026-11-10T22:00:00.000Z');
  for (const [tenant, host] of [
    [alice, HOSTS.alice],
    [bob, HOSTS.bob],
  ] as const) {
    ({ view: views[host], hidden: forms[host] } = await formPageOn(t, tenant, host));
  }
});

describe('the daily caps of a tenant', () => {
  it('record SESSIONS_PER_TENANT_PER_DAY new visits; past it, the page serves but the visit is not recorded', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await start(HOSTS.alice)).statusCode);
    expect(statuses).toEqual([201, 201, 201]);
    await SessionIngest.flushAll();
    const before = await rowCounts(alice, ['audience_sessions']);

    const refused = await start(HOSTS.alice);
    expect(refused.statusCode).toBe(429);
    expect(problem(refused)).toMatchObject({ code: 'daily_cap_reached' });
    expect(Number(refused.headers['retry-after'])).toBe(2 * 60 * 60); // to the next UTC midnight
    expect((await visit(t, HOSTS.alice, '/offers')).statusCode).toBe(200);
    await SessionIngest.flushAll();
    expect(await rowCounts(alice, ['audience_sessions'])).toEqual(before);

    // Another tenant has its own day.
    expect((await start(HOSTS.bob)).statusCode).toBe(201);
  });

  it('store FORM_SUBMISSIONS_PER_TENANT_PER_DAY forms; past it, 429 and nothing written, with or without script', async () => {
    expect((await submit(HOSTS.alice)).statusCode).toBe(201);
    expect((await submit(HOSTS.alice, false)).statusCode).toBe(303);
    const before = await rowCounts(alice, ['form_submissions', 'persons', 'person_logs', 'accounts', 'events']);

    const json = await submit(HOSTS.alice);
    expect(json.statusCode).toBe(429);
    expect(problem(json)).toMatchObject({
      code: 'daily_cap_reached',
      detail: 'This form cannot take more submissions today. Please try again tomorrow.',
    });
    const html = await submit(HOSTS.alice, false);
    expect(html.statusCode).toBe(429);
    expect(html.headers['content-type']).toContain('text/html');
    expect(html.body).toContain('This form cannot take more submissions today.');
    expect(await rowCounts(alice, ['form_submissions', 'persons', 'person_logs', 'accounts', 'events'])).toEqual(
      before,
    );
    expect((await submit(HOSTS.bob)).statusCode).toBe(201);
  });

  it('start again on the next UTC day', async () => {
    t.clock.set('2026-11-11T00:00:01.000Z');
    expect((await start(HOSTS.alice)).statusCode).toBe(201);
    expect((await submit(HOSTS.alice)).statusCode).toBe(201);
  });
});
