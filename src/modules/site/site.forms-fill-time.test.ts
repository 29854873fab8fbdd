import { beforeAll, describe, expect, it } from 'vitest';
import { formPageOn, visit } from '../../../test/factories/site.js';
import { problem, rowCounts, useTestApp } from '../../../test/harness.js';

/**
 * The minimum fill time cannot be skipped (issue 26, docs/forms.md#fill-time): it is counted from
 * a stamp the service signed for this client, never from what the client says it waited.
 */
const t = useTestApp({
  tenants: ['Alice', 'Bob'],
  config: { FORM_MIN_FILL_MS: '1500', FORM_SUBMISSIONS_PER_MINUTE: '0' },
});
const [alice, bob] = t.tenants;
const HOST = 'go.fill.localhost';
const BOB_HOST = 'go.fill-bob.localhost';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const TABLES = ['form_submissions', 'persons', 'person_logs', 'accounts'] as const;
let hidden: Record<string, string>;
let n = 0;

const post = (body: Record<string, string>, options: { ip?: string; json?: boolean } = {}) => {
  const json = options.json ?? true;
  const payload = { ...hidden, email: `visitor${++n}@corp.example`, ...body };
  return t.app.inject({
    method: 'POST',
    url: '/offers',
    remoteAddress: options.ip ?? '198.51.100.7',
    headers: {
      host: HOST,
      'user-agent': BROWSER,
      'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
      ...(json ? { accept: 'application/json' } : {}),
    },
    payload: json ? payload : new URLSearchParams(payload).toString(),
  });
};

const stampFor = async (host: string, ip = '198.51.100.7') => {
  const res = await t.app.inject({ method: 'GET', url: '/_ap/form-stamp', remoteAddress: ip, headers: { host } });
  expect(res.statusCode).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return res.json<{ stamp: string; minFillMs: number }>();
};

beforeAll(async () => {
  hidden = (await formPageOn(t, alice, HOST)).hidden;
  await formPageOn(t, bob, BOB_HOST);
});

describe('the minimum fill time (FORM_MIN_FILL_MS=1500)', () => {
  it('refuses a form sent without a stamp, and hands out one to wait with; after the wait it is sent', async () => {
    const before = await rowCounts(alice, TABLES);
    const first = await post({});
    expect(first.statusCode).toBe(422);
    const refused = problem(first) as unknown as { code: string; stamp: string; retryAfterMs: number };
    expect(refused).toMatchObject({ code: 'form_too_fast', retryAfterMs: 1500 });
    expect(refused.stamp).toMatch(/^\d+\.[A-Za-z0-9_-]+$/);

    // The same stamp at once: still too soon, and the same stamp comes back (waiting is enough).
    const again = await post({ ap_stamp: refused.stamp });
    expect(problem(again)).toMatchObject({ code: 'form_too_fast', stamp: refused.stamp, retryAfterMs: 1500 });
    t.clock.advance(1000);
    expect(problem(await post({ ap_stamp: refused.stamp }))).toMatchObject({ retryAfterMs: 500 });
    expect(await rowCounts(alice, TABLES)).toEqual(before);

    t.clock.advance(500);
    expect((await post({ ap_stamp: refused.stamp })).statusCode).toBe(201);
  });

  it('counts from the stamp the page script asked for when the form came into view', async () => {
    const { stamp, minFillMs } = await stampFor(HOST);
    expect(minFillMs).toBe(1500);
    expect(problem(await post({ ap_stamp: stamp })).code).toBe('form_too_fast');
    t.clock.advance(1500);
    expect((await post({ ap_stamp: stamp })).statusCode).toBe(201);
  });

  it('does not take a stamp made for another address, another tenant, altered, or over a day old', async () => {
    const { stamp } = await stampFor(HOST, '203.0.113.9');
    const { stamp: bobs } = await stampFor(BOB_HOST);
    const { stamp: mine } = await stampFor(HOST);
    const [at, mac] = mine.split('.') as [string, string];
    t.clock.advance(2000);
    const before = await rowCounts(alice, TABLES);
    for (const sent of [stamp, bobs, `${Number(at) - 60_000}.${mac}`, `${at}.${mac.slice(0, -2)}AA`, 'stamp']) {
      const res = problem(await post({ ap_stamp: sent }));
      expect(res.code).toBe('form_too_fast');
      expect(res.stamp).not.toBe(sent); // a new stamp of its own, not the one sent
    }
    expect(await rowCounts(alice, TABLES)).toEqual(before);

    // The same /64 is the same client: an IPv6 visitor whose address changes within it keeps its stamp.
    const { stamp: v6 } = await stampFor(HOST, '2001:db8:5:1::10');
    t.clock.advance(1500);
    expect((await post({ ap_stamp: v6 }, { ip: '2001:db8:5:1::99' })).statusCode).toBe(201);

    const { stamp: old } = await stampFor(HOST);
    t.clock.advance(24 * 60 * 60 * 1000 + 1);
    expect(problem(await post({ ap_stamp: old })).code).toBe('form_too_fast');
  });

  it('without JavaScript: the page again with the values kept and a stamp, then the second send goes through', async () => {
    const before = await rowCounts(alice, TABLES);
    const first = await post({ email: 'sam@initech.example', name: 'Sam <b>Smith</b>' }, { json: false });
    expect(first.statusCode).toBe(422);
    expect(first.headers['content-type']).toContain('text/html');
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).toContain('Please check your details, then press the button again to send them.');
    expect(first.body).toContain('value="Sam &lt;b>Smith&lt;/b>"');
    const stamp = /name="ap_stamp" value="([^"]+)"/.exec(first.body)?.[1];
    expect(stamp).toMatch(/^\d+\.[A-Za-z0-9_-]+$/);
    expect(await rowCounts(alice, TABLES)).toEqual(before);

    t.clock.advance(1500);
    const second = await post({ email: 'sam@initech.example', ap_stamp: stamp! }, { json: false });
    expect(second.statusCode).toBe(303);
    expect(second.headers.location).toMatch(/^\/offers#ap-sent-/);
  });

  it('a form shown again for a field error carries a stamp, so fixing it needs no second wait', async () => {
    const first = await post({ email: 'not-an-email' }, { json: false });
    expect(first.statusCode).toBe(422);
    expect(first.body).toContain('Enter an email address like name@example.com.');
    const stamp = /name="ap_stamp" value="([^"]+)"/.exec(first.body)?.[1];
    expect(stamp).toBeDefined();
    t.clock.advance(1500);
    expect((await post({ email: 'fixed@initech.example', ap_stamp: stamp! }, { json: false })).statusCode).toBe(303);
  });

  it('is no part of the page’s shared bytes', async () => {
    const page = await visit(t, HOST, '/offers');
    expect(page.headers['cache-control']).toContain('public');
    expect(page.body).toContain('name="ap_stamp" value/>');
  });
});
