import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { rowCounts, startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let alice: Tenant;
let bob: Tenant;
let page: string;
let acme: string;
let archived: string;

const HOST = 'go.alice.localhost';
const BOB = 'pages.bob.localhost';
const ACTION_FORM = {
  purpose: 'Talk to us',
  buttonTitle: 'Send',
  actionType: 'form',
  url: 'https://example.com/contact',
};

let clientNumber = 0;
/** Each request from its own address, so that only the rate-limit test meets the limit. */
const nextIp = () => `10.1.${(++clientNumber >> 8) & 255}.${clientNumber & 255}`;

async function formOf(host: string, path: string) {
  const res = await visit(t, host, path);
  const html = res.body;
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  return { html, res, audience: hidden('ap_audience'), action: hidden('ap_action') };
}

function post(
  path: string,
  body: Record<string, string> | string,
  options: { host?: string; type?: string; headers?: Record<string, string>; ip?: string } = {},
) {
  const type = options.type ?? (typeof body === 'string' ? 'text/plain' : 'application/x-www-form-urlencoded');
  const payload =
    typeof body === 'string'
      ? body
      : type === 'application/json'
        ? JSON.stringify(body)
        : new URLSearchParams(body).toString();
  return t.app.inject({
    method: 'POST',
    url: path,
    remoteAddress: options.ip ?? nextIp(),
    // A browser's User-Agent: declared bots are refused (docs/forms.md, Abuse controls).
    headers: {
      host: options.host ?? HOST,
      'content-type': type,
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      ...options.headers,
    },
    payload,
  });
}

let base: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  alice = await t.createTenant('Alice');
  bob = await t.createTenant('Bob');
  page = await makePage(alice.scope, t.clock, {
    title: 'Offers for {{company}}',
    actions: [
      { purpose: 'Book', buttonTitle: 'Book a demo', actionType: 'calendar', url: 'https://example.com/book' },
      ACTION_FORM,
    ],
    headerActionIndex: 0,
  });
  acme = (
    await makeAudience(alice.scope, t.clock, {
      pageId: page,
      computedName: 'Acme',
      personRouteKey: null,
      actionFormIdOverride: 'hubspot-123',
      actionFormInstructionsOverride: 'Tell us about your team.',
    })
  ).audienceId;
  await linkOnHost(t, alice, { hostname: HOST, path: '/offers/acme', audienceId: acme });
  archived = (await makeAudience(alice.scope, t.clock, { pageId: page, computedName: 'Old', personRouteKey: null }))
    .audienceId;
  await linkOnHost(t, alice, { path: '/old', audienceId: archived });
  await alice.scope
    .updateTable('audiences')
    .set({ archived_at: t.clock.now().toISOString() })
    .where('id', '=', archived)
    .execute();
  const bobs = await makeAudience(bob.scope, t.clock, { computedName: 'Bob’s audience' });
  await linkOnHost(t, bob, { hostname: BOB, path: '/bob-only', audienceId: bobs.audienceId });
  const form = await formOf(HOST, '/offers/acme');
  base = { ap_audience: form.audience, ap_action: form.action };
});
afterAll(() => t.close());

const submissions = () => alice.scope.selectFrom('form_submissions').selectAll().execute();

describe('the form on a served page', () => {
  it('is a real, accessible form, and the page stays the same bytes for every visitor', async () => {
    const first = await formOf(HOST, '/offers/acme');
    const second = await formOf(HOST, '/offers/acme');
    expect(first.html).toBe(second.html);
    expect(first.res.headers.etag).toBe(second.res.headers.etag);
    expect(first.res.headers['cache-control']).toContain('public');
    const html = first.html;
    expect(html).toMatch(/<form method="post" action="#ap-form-action_[0-9a-z]{26}"/);
    expect(html).toMatch(
      /<input id="[^"]+-email" name="email" autocomplete="email" maxlength="254" required type="email"/,
    );
    expect(html).toContain('name="phoneNumber" autocomplete="tel"');
    expect(html).toContain('autocomplete="organization"');
    expect(html).toMatch(/<label for="ap-action_[0-9a-z]{26}-email">Work email/);
    expect(html).toContain('name="website" tabindex="-1" autocomplete="off"');
    expect(html).toContain('Tell us about your team.');
    expect(first.audience).toBe(acme);
    for (const name of ['ap_token', 'ap_session', 'ap_stamp']) expect(html).toContain(`name="${name}" value/>`);
  });
});

describe('submitting without JavaScript', () => {
  it('stores one submission, finds or creates the person through the person log, appends form.submitted, and redirects to the thank-you state', async () => {
    const res = await post('/offers/acme?utm_source=x', {
      ...base,
      email: 'Jane@Acme.example',
      name: 'Jane Doe',
      phoneNumber: '+14155550123',
      company: 'Acme',
      message: 'Hello',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/offers/acme#ap-sent-${base.ap_action}`);
    const [row] = (await submissions()).filter((s) => s.email === 'Jane@Acme.example');
    expect(row).toMatchObject({ page_id: page, audience_id: acme, form_id: 'hubspot-123', company: 'Acme' });
    expect(row!.id).toMatch(/^formsub_[0-9a-z]{26}$/);
    const found = await t.request(alice, { method: 'GET', url: '/v0/persons/search?query=jane%40acme.example' });
    expect(found.json().items).toEqual([expect.objectContaining({ personId: row!.person_id, name: 'Jane Doe' })]);
    const logs = await alice.scope
      .selectFrom('person_logs')
      .selectAll()
      .where('person_id', '=', row!.person_id)
      .execute();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ source: 'page-form', type: 'form-submitted' });
    expect(logs[0]!.payload).toMatchObject({ formSubmissionId: row!.id, email: 'Jane@Acme.example' });
    const events = await alice.scope.selectFrom('events').selectAll().where('type', '=', 'form.submitted').execute();
    const event = events.find(
      (e) => (e.data as { formSubmission: { formSubmissionId: string } }).formSubmission.formSubmissionId === row!.id,
    );
    expect(event!.data).toMatchObject({
      formSubmission: { formSubmissionId: row!.id, personId: row!.person_id, formId: 'hubspot-123' },
      page: { pageId: page },
      audience: { audienceId: acme, name: 'Acme' },
      person: { personId: row!.person_id, email: 'Jane@Acme.example' },
      analyticsSessionId: null,
    });
  });

  it('takes an identical post twice (back and resubmit) as one submission', async () => {
    const body = { ...base, email: 'twice@acme.example', message: 'same' };
    const before = await rowCounts(alice);
    const [a, b] = [await post('/offers/acme', body), await post('/offers/acme', body)];
    expect([a.statusCode, b.statusCode]).toEqual([303, 303]);
    const after = await rowCounts(alice);
    expect(after.form_submissions! - before.form_submissions!).toBe(1);
    expect(after.person_logs! - before.person_logs!).toBe(1);
    expect(after.events! - before.events!).toBe(1);
    // another message is another submission
    expect((await post('/offers/acme', { ...body, message: 'other' })).statusCode).toBe(303);
    expect((await rowCounts(alice)).form_submissions! - before.form_submissions!).toBe(2);
  });

  it('accepts its own origin (the host decides; a TLS proxy may hide the scheme)', async () => {
    const res = await post(
      '/offers/acme',
      { ...base, email: 'origin@acme.example' },
      { headers: { origin: `https://${HOST}`, 'sec-fetch-site': 'same-origin' } },
    );
    expect(res.statusCode).toBe(303);
  });

  it('shows the page again with inline errors and the values kept, escaped', async () => {
    const before = await rowCounts(alice);
    const res = await post('/offers/acme', {
      ...base,
      email: 'not-an-email"><script>alert(1)</script>',
      name: '</textarea><b>x',
      message: '</textarea><script>alert(2)</script>',
      phoneNumber: '0155 12',
    });
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).not.toContain('<script>alert');
    expect(res.body).toContain('value="not-an-email&quot;>&lt;script>alert(1)&lt;/script>"');
    expect(res.body).toContain('&lt;/textarea>&lt;script>alert(2)&lt;/script></textarea>');
    expect(res.body).toMatch(/aria-invalid="true" aria-describedby="[^"]+-email-error"/);
    expect(res.body).toContain('Enter an email address like name@example.com.');
    expect(res.body).toContain('Enter the phone number in international format');
    expect(res.body).toMatch(/class="ap-form-summary"[^>]*role="alert"/);
    expect(await rowCounts(alice)).toEqual(before);
  });
});

describe('submitting with JavaScript (JSON)', () => {
  it('makes one submission, one person log and one event of the same token sent twice at once', async () => {
    const before = await rowCounts(alice);
    const body = { ...base, email: 'token@acme.example', ap_token: crypto.randomUUID() };
    const json = { type: 'application/json', headers: { accept: 'application/json', 'sec-fetch-site': 'same-origin' } };
    const [a, b] = await Promise.all([post('/offers/acme', body, json), post('/offers/acme', body, json)]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 201]);
    expect(a.json().formSubmissionId).toBe(b.json().formSubmissionId);
    const after = await rowCounts(alice);
    expect(after.form_submissions! - before.form_submissions!).toBe(1);
    expect(after.person_logs! - before.person_logs!).toBe(1);
    expect(after.events! - before.events!).toBe(1);
    expect(after.persons! - before.persons!).toBe(1);
  });

  it('marks the visitor’s session: form submitted, a conversion, with the submission’s fields', async () => {
    const view = /<meta name="ap-view" content="([^"]+)"/.exec((await formOf(HOST, '/offers/acme')).html)![1]!;
    const started = await t.app.inject({
      method: 'POST',
      url: '/_ap/collect',
      headers: {
        host: HOST,
        'content-type': 'application/json',
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120',
      },
      payload: { t: 'start', v: view, u: `http://${HOST}/offers/acme` },
    });
    expect(started.statusCode).toBe(201);
    const res = await post(
      '/offers/acme',
      { ...base, email: 'session@acme.example', phoneNumber: '+447700900123', ap_session: started.json().s },
      { type: 'application/json' },
    );
    expect(res.statusCode).toBe(201);
    const sessions = await t.request(alice, { method: 'GET', url: `/v0/pages/${page}/audience_sessions` });
    const session = sessions.json().items.find((s: { formSubmissionEmail: string }) => s.formSubmissionEmail !== '');
    expect(session).toMatchObject({
      hasFormSubmit: true,
      hasConversion: true,
      isBounce: false,
      formSubmissionId: res.json().formSubmissionId,
      formSubmissionIdentifier: 'hubspot-123',
      formSubmissionEmail: 'session@acme.example',
      formSubmissionPhone: '+447700900123',
    });
    const [row] = (await submissions()).filter((s) => s.email === 'session@acme.example');
    expect(row!.analytics_session_id).toBe(session.analyticsSessionId);
  });
});

describe('refusals: a clear answer, never a 5xx, nothing written', () => {
  const json = { type: 'application/json' };
  const cases: [string, () => Promise<{ statusCode: number; body: string }>, number, string][] = [
    ['missing email', () => post('/offers/acme', { ...base, name: 'x' }, json), 422, 'Enter your email address.'],
    ['invalid email', () => post('/offers/acme', { ...base, email: 'a@' }, json), 422, 'email address like'],
    [
      'name over its limit',
      () => post('/offers/acme', { ...base, email: 'a@b.example', name: 'x'.repeat(256) }, json),
      422,
      'at most 255',
    ],
    [
      'message over its limit',
      () => post('/offers/acme', { ...base, email: 'a@b.example', message: 'x'.repeat(5001) }, json),
      422,
      'at most 5000',
    ],
    [
      'phone not E.164',
      () => post('/offers/acme', { ...base, email: 'a@b.example', phoneNumber: '0044 20' }, json),
      422,
      'international format',
    ],
    [
      'text/plain',
      () => post('/offers/acme', JSON.stringify({ ...base, email: 'a@b.example' })),
      415,
      'x-www-form-urlencoded',
    ],
    [
      'multipart',
      () => post('/offers/acme', '--x\r\n', { type: 'multipart/form-data; boundary=x' }),
      415,
      'x-www-form-urlencoded',
    ],
    ['malformed JSON', () => post('/offers/acme', '{"email":', json), 400, 'could not be read'],
    [
      'body over 16 KiB',
      () => post('/offers/acme', { ...base, email: 'a@b.example', message: 'x'.repeat(17_000) }),
      413,
      '16 KiB',
    ],
    ['unknown path', () => post('/nothing', { ...base, email: 'a@b.example' }, json), 404, 'no page'],
    ['archived audience', () => post('/old', { ...base, email: 'a@b.example' }, json), 410, 'taken down'],
    [
      'another tenant’s host',
      () => post('/offers/acme', { ...base, email: 'a@b.example' }, { ...json, host: BOB }),
      404,
      'no page',
    ],
    [
      'audience not the page’s',
      () => post('/offers/acme', { ...base, ap_audience: 'audience_x', email: 'a@b.example' }, json),
      422,
      'reload',
    ],
    [
      'unknown form',
      () => post('/offers/acme', { ...base, ap_action: 'action_x', email: 'a@b.example' }, json),
      422,
      'reload',
    ],
    [
      'honeypot filled',
      () => post('/offers/acme', { ...base, email: 'a@b.example', website: 'http://spam' }, json),
      422,
      'automated',
    ],
    [
      'cross-site',
      () => post('/offers/acme', { ...base, email: 'a@b.example' }, { headers: { 'sec-fetch-site': 'cross-site' } }),
      403,
      'own origin',
    ],
    [
      'another origin',
      () => post('/offers/acme', { ...base, email: 'a@b.example' }, { headers: { origin: 'https://evil.example' } }),
      403,
      'own origin',
    ],
  ];
  it.each(cases)('%s', async (_name, send, status, message) => {
    const before = [await rowCounts(alice), await rowCounts(bob)];
    const res = await send();
    expect(res.statusCode).toBe(status);
    expect(res.body).toContain(message);
    expect([await rowCounts(alice), await rowCounts(bob)]).toEqual(before);
  });

  it('refuses a client address that floods the form (429), without writing', async () => {
    const ip = '10.9.9.9';
    const before = await rowCounts(alice);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await post('/offers/acme', { ...base, email: 'x' }, { ip })).statusCode);
    expect(statuses.slice(0, 10).every((s) => s === 422)).toBe(true);
    const last = await post('/offers/acme', { ...base, email: 'flood@acme.example' }, { ip, type: 'application/json' });
    expect(last.statusCode).toBe(429);
    expect(last.headers['retry-after']).toBeDefined();
    const page = await post('/offers/acme', { ...base, email: 'flood@acme.example' }, { ip });
    expect(page.statusCode).toBe(429);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(await rowCounts(alice)).toEqual(before);
  });
});
