import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePerson } from '../../../test/factories/persons.js';
import { makeSessions } from '../../../test/factories/sessions.js';
import { deliveriesOf, emit, failDelivery, subscribe, TEST_SECRET_KEY } from '../../../test/factories/webhooks.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { inviteAsOperator } from './console.auth.service.js';

const HOST = 'localhost:3000';
const FORM = 'application/x-www-form-urlencoded';

function csrfOf(html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
}

/** People and settings screens over inject (both engines): what they show is what the API answers. */
describe('console people and settings', () => {
  let t: TestApp;
  let acme: Tenant;
  let other: Tenant;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_SECRET_KEY: TEST_SECRET_KEY } });
    acme = await t.createTenant('Acme');
    other = await t.createTenant('Other');
    const invitation = await inviteAsOperator(t.database, t.clock, { tenantId: acme.tenantId, email: 'ana@acme.test' });
    const signedIn = await post('/console/sign-in', { token: invitation.token });
    expect(signedIn.statusCode).toBe(303);
    cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    csrf = csrfOf((await get('/console/settings')).body);
  });
  afterAll(() => t.close());

  function get(url: string): Promise<LightMyRequestResponse> {
    return t.app.inject({ method: 'GET', url, headers: { host: HOST, ...(cookie ? { cookie } : {}) } });
  }
  function post(url: string, body: Record<string, string>): Promise<LightMyRequestResponse> {
    return t.app.inject({
      method: 'POST',
      url,
      headers: { host: HOST, 'content-type': FORM, origin: `http://${HOST}`, ...(cookie ? { cookie } : {}) },
      payload: new URLSearchParams(body).toString(),
    });
  }
  const api = (tenant: Tenant, method: 'GET' | 'POST', url: string, payload?: object) =>
    t.request(tenant, { method, url, ...(payload ? { payload } : {}) });

  it('people: search, a profile with account and timeline (logs, questions, visits), accounts; others’ ids 404', async () => {
    const personId = await makePerson(acme.scope, t.clock, { email: 'jane@globex.example', name: 'Jane Roe' });
    await api(acme, 'POST', '/v0/person_logs', {
      source: 'page-agent',
      type: 'agent-question',
      personId,
      payload: { question: 'Does it do SSO?' },
    });
    await api(acme, 'POST', '/v0/accounts', { domain: 'globex.example', name: 'Globex' });
    const { pageId, audienceId } = await makeAudience(acme.scope, t.clock, { personId, personRouteKey: 'jane' });
    await makeSessions(acme.scope, { pageId, audienceId }, [Date.parse('2026-10-30T10:00:00Z')], 2);

    const found = await get('/console/people?q=globex');
    expect(found.statusCode).toBe(200);
    expect(found.body).toContain(`href="/console/people/${personId}"`);
    expect(found.body).toContain('Jane Roe');
    expect((await get('/console/people?q=nobody-here')).body).toContain('No person matches');

    const profile = await get(`/console/people/${personId}`);
    expect(profile.statusCode).toBe(200);
    expect(profile.body).toContain('jane@globex.example');
    expect(profile.body).toContain('Asked: “Does it do SSO?”');
    expect(profile.body.match(/<span class="kind">Visit<\/span>/g)).toHaveLength(2);
    const account = /href="\/console\/accounts\/(account_[a-z0-9]+)">Globex</.exec(profile.body);
    expect(account).not.toBeNull();

    const accounts = await get('/console/accounts');
    expect(accounts.body).toContain('globex.example');
    const accountPage = await get(`/console/accounts/${account![1]}`);
    expect(accountPage.statusCode).toBe(200);
    expect(accountPage.body).toContain(`href="/console/people/${personId}"`);

    const theirs = await makePerson(other.scope, t.clock, { email: 'x@other.example' });
    expect((await get(`/console/people/${theirs}`)).statusCode).toBe(404);
    expect((await get(`/console/people?q=other.example`)).body).not.toContain(theirs);
    const theirAccount = (await api(other, 'POST', '/v0/accounts', { domain: 'other.example' })).json();
    expect((await get(`/console/accounts/${theirAccount.accountId}`)).statusCode).toBe(404);
  });

  it('domains: the exact TXT record the API gives; verify runs the check and says what it found', async () => {
    const created = await api(acme, 'POST', '/v0/tenant_domains', { hostname: 'pages.acme-corp.com' });
    expect(created.statusCode).toBe(201);
    const domain = created.json();
    const screen = await get('/console/settings');
    expect(screen.statusCode).toBe(200);
    expect(screen.body).toContain(`<dd>${domain.verification.name}</dd>`);
    expect(screen.body).toContain(`<dd>${domain.verification.value}</dd>`);

    // without the anti-CSRF field: refused, no check made
    const forged = await post(`/console/settings/domains/${domain.tenantDomainId}/verify`, {});
    expect(forged.statusCode).toBe(403);
    const after = await api(acme, 'GET', '/v0/tenant_domains');
    expect(after.json().items[0].lastCheck).toBeNull();

    const checked = await post(`/console/settings/domains/${domain.tenantDomainId}/verify`, { _csrf: csrf });
    expect(checked.statusCode).toBe(422);
    const lastCheck = (await api(acme, 'GET', '/v0/tenant_domains')).json().items[0].lastCheck;
    expect(lastCheck).not.toBeNull();
    expect(checked.body).toContain('class="notice error"');

    const theirs = (await api(other, 'POST', '/v0/tenant_domains', { hostname: 'pages.other-corp.com' })).json();
    expect((await post(`/console/settings/domains/${theirs.tenantDomainId}/verify`, { _csrf: csrf })).statusCode).toBe(
      404,
    );
  });

  it('API keys: created and shown once, listed by prefix, revoked; another tenant’s key is 404', async () => {
    const created = await post('/console/settings/api-keys', { _csrf: csrf, name: 'Zapier' });
    expect(created.statusCode).toBe(200);
    const key = /<p class="secret" data-api-key="true">([^<]+)<\/p>/.exec(created.body)![1]!;
    expect((await t.app.inject({ method: 'GET', url: '/v0/pages', headers: { 'x-api-key': key } })).statusCode).toBe(
      200,
    );
    const again = await get('/console/settings');
    expect(again.body).not.toContain(key);
    expect(again.body).toContain(`<code>${key.slice(0, 8)}`);
    const keyId = (
      await t.database.kysely
        .selectFrom('api_keys')
        .select('id')
        .where('tenant_id', '=', acme.tenantId)
        .where('name', '=', 'Zapier')
        .executeTakeFirstOrThrow()
    ).id;
    expect(again.body).toContain(`action="/console/settings/api-keys/${keyId}/revoke"`);
    expect((await post(`/console/settings/api-keys/${keyId}/revoke`, {})).statusCode).toBe(403);
    const revoked = await post(`/console/settings/api-keys/${keyId}/revoke`, { _csrf: csrf });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.body).toContain('The key is revoked.');
    // keys are trusted for a second after a look-up (src/auth/api-key-verifier.ts)
    t.clock.advance(2_000);
    expect((await t.app.inject({ method: 'GET', url: '/v0/pages', headers: { 'x-api-key': key } })).statusCode).toBe(
      401,
    );
    const theirs = (
      await t.database.kysely
        .selectFrom('api_keys')
        .select('id')
        .where('tenant_id', '=', other.tenantId)
        .executeTakeFirstOrThrow()
    ).id;
    expect((await post(`/console/settings/api-keys/${theirs}/revoke`, { _csrf: csrf })).statusCode).toBe(404);
    const stillActive = await t.database.kysely
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', theirs)
      .executeTakeFirstOrThrow();
    expect(stillActive.revoked_at).toBeNull();
  });

  it('webhooks: subscriptions, their deliveries with status and attempts, replay of a closed one', async () => {
    const sub = await subscribe(acme.scope, t.clock, 'https://hooks.example.com/acme');
    await emit(acme.scope, t.clock);
    const listed = () => deliveriesOf(acme.scope, sub.subscriptionId);
    let deliveries = await listed();
    for (let i = 0; i < 50 && deliveries.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      deliveries = await listed();
    }
    expect(deliveries).toHaveLength(1);
    const settings = await get('/console/settings');
    expect(settings.body).toContain(`href="/console/settings/webhooks/${sub.subscriptionId}"`);
    const screen = await get(`/console/settings/webhooks/${sub.subscriptionId}`);
    expect(screen.statusCode).toBe(200);
    expect(screen.body).toContain('page.version.published');
    // a pending delivery has no replay button, and replaying it is refused (409)
    const id = deliveries[0]!.deliveryId;
    expect(screen.body).not.toContain(`/deliveries/${id}/replay`);
    expect((await post(`/console/settings/webhooks/deliveries/${id}/replay`, { _csrf: csrf })).statusCode).toBe(409);
    await failDelivery(t.database, id, 3);
    const closed = await get(`/console/settings/webhooks/${sub.subscriptionId}`);
    expect(closed.body).toContain(`action="/console/settings/webhooks/deliveries/${id}/replay"`);
    expect(closed.body).toContain('<td class="num">3</td>');
    expect((await post(`/console/settings/webhooks/deliveries/${id}/replay`, {})).statusCode).toBe(403);
    const replayed = await post(`/console/settings/webhooks/deliveries/${id}/replay`, { _csrf: csrf });
    expect(replayed.statusCode).toBe(200);
    expect((await listed())[0]).toMatchObject({ status: 'pending', attempts: 0 });

    const theirs = await subscribe(other.scope, t.clock, 'https://hooks.example.com/other');
    expect((await get(`/console/settings/webhooks/${theirs.subscriptionId}`)).statusCode).toBe(404);
  });
});
