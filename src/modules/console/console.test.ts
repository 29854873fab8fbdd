import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../lib/clock.js';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { consoleCommands } from './console.cli.js';
import { inviteAsOperator } from './console.auth.service.js';

const HOST = 'localhost:3000';
const FORM = 'application/x-www-form-urlencoded';

/** Cookie name in development (no https): unprefixed, without Secure. */
const COOKIE = 'ap-console';

function tokenOf(url: string): string {
  return new URL(url).searchParams.get('token')!;
}

function cookieOf(response: LightMyRequestResponse): string {
  const header = String(response.headers['set-cookie']);
  return header.split(';')[0]!;
}

function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF field on the page');
  return match[1]!;
}

describe('console sign-in', () => {
  let t: TestApp;
  let acme: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    t = await startTestApp();
    acme = await t.createTenant('Acme');
    other = await t.createTenant('Other');
  });
  afterAll(() => t.close());

  async function invite(tenant: Tenant, email = 'ana@acme.test') {
    const invitation = await inviteAsOperator(t.database, t.clock, { tenantId: tenant.tenantId, email });
    return invitation.token;
  }

  function post(url: string, body: Record<string, string>, headers: Record<string, string> = {}) {
    return t.app.inject({
      method: 'POST',
      url,
      headers: { host: HOST, 'content-type': FORM, origin: `http://${HOST}`, ...headers },
      payload: new URLSearchParams(body).toString(),
    });
  }

  function get(url: string, cookie?: string) {
    return t.app.inject({ method: 'GET', url, headers: { host: HOST, ...(cookie ? { cookie } : {}) } });
  }

  async function signIn(tenant: Tenant, email?: string): Promise<string> {
    const response = await post('/console/sign-in', { token: await invite(tenant, email) });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/console/pages');
    return cookieOf(response);
  }

  it('the CLI prints a one-time link for a new user of the tenant', async () => {
    const [command] = consoleCommands;
    const ctx = {
      database: t.database,
      db: t.database.kysely,
      config: t.app.ctx.config,
      clock: t.clock,
      migrations: {},
    };
    const out = await command!.run(ctx, {
      values: { tenant: acme.tenantId, email: ' Bo@Acme.test ' },
      positionals: [],
    });
    expect(out.email).toBe('bo@acme.test');
    expect(out.signInUrl).toMatch(/^http:\/\/localhost:3000\/console\/sign-in\?token=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(String(out.expiresAt)) - t.clock.now().getTime()).toBe(15 * MINUTE_MS);
    await expect(
      command!.run(ctx, { values: { tenant: 'tenant_nope', email: 'a@b.test' }, positionals: [] }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      command!.run(ctx, { values: { tenant: acme.tenantId, email: 'not an address' }, positionals: [] }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('a link opens a page with a sign-in button; pressing it starts a session behind an HttpOnly cookie', async () => {
    const token = await invite(acme);
    const page = await get(`/console/sign-in?token=${token}`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.body).toContain('<form method="post" action="/console/sign-in"');
    // opening the link used nothing: it still signs in
    const signedIn = await post('/console/sign-in', { token });
    expect(signedIn.statusCode).toBe(303);
    const setCookie = String(signedIn.headers['set-cookie']);
    expect(setCookie).toMatch(new RegExp(`^${COOKIE}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Lax$`));
    const pages = await get('/console/pages', cookieOf(signedIn));
    expect(pages.statusCode).toBe(200);
    expect(pages.body).toContain('ana@acme.test');
  });

  it('a used, an expired or a made-up link is refused', async () => {
    const token = await invite(acme);
    expect((await post('/console/sign-in', { token })).statusCode).toBe(303);
    const replayed = await post('/console/sign-in', { token });
    expect(replayed.statusCode).toBe(403);
    expect(replayed.headers['set-cookie']).toBeUndefined();
    expect(replayed.body).toContain('expired or was already used');
    expect((await get(`/console/sign-in?token=${token}`)).statusCode).toBe(403);

    const late = await invite(acme);
    t.clock.advance(15 * MINUTE_MS);
    expect((await post('/console/sign-in', { token: late })).statusCode).toBe(403);
    expect((await post('/console/sign-in', { token: 'x'.repeat(43) })).statusCode).toBe(403);
  });

  it('signing in from another site is refused', async () => {
    const token = await invite(acme);
    const response = await post(
      '/console/sign-in',
      { token },
      { origin: 'https://evil.test', 'sec-fetch-site': 'cross-site' },
    );
    expect(response.statusCode).toBe(403);
    expect((await post('/console/sign-in', { token })).statusCode).toBe(303);
  });

  it('without a session the screens send you to sign in, and POSTs are refused', async () => {
    const response = await get('/console/pages');
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/console');
    expect((await get('/console')).body).toContain('Sign in with the link you were sent');
    expect((await post('/console/users', { email: 'x@acme.test' })).statusCode).toBe(401);
    expect((await get('/console/pages', `${COOKIE}=${'a'.repeat(43)}`)).statusCode).toBe(303);
  });

  it('every state-changing request needs the session’s CSRF token and its own origin', async () => {
    const cookie = await signIn(acme);
    const users = await get('/console/users', cookie);
    const csrf = csrfOf(users.body);
    const send = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      post('/console/users', body, { cookie, ...headers });
    expect((await send({ email: 'no-token@acme.test' })).statusCode).toBe(403);
    expect((await send({ email: 'wrong@acme.test', _csrf: csrf.slice(1) + 'x' })).statusCode).toBe(403);
    expect((await send({ email: 'cross@acme.test', _csrf: csrf }, { origin: 'https://evil.test' })).statusCode).toBe(
      403,
    );
    const ok = await send({ email: 'cy@acme.test', _csrf: csrf });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('cy@acme.test');
    const listed = await get('/console/users', cookie);
    expect(listed.body).not.toContain('no-token@acme.test');
    expect(listed.body).not.toContain('cross@acme.test');
  });

  it('a signed-in user invites a colleague: the link signs them in to the same tenant', async () => {
    const cookie = await signIn(acme);
    const csrf = csrfOf((await get('/console/users', cookie)).body);
    const invited = await post('/console/users', { email: 'dee@acme.test', _csrf: csrf }, { cookie });
    const url = /(http:\/\/localhost:3000\/console\/sign-in\?token=[A-Za-z0-9_-]+)/.exec(invited.body)![1]!;
    const dee = await post('/console/sign-in', { token: tokenOf(url) });
    expect(dee.statusCode).toBe(303);
    const page = await get('/console/users', cookieOf(dee));
    expect(page.body).toContain('dee@acme.test');
    expect(page.body).toContain('ana@acme.test');

    const bad = await post('/console/users', { email: 'nope', _csrf: csrf }, { cookie });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('aria-invalid="true"');
  });

  it('a user sees only their own tenant, and what tenants wrote is escaped', async () => {
    await makePage(acme.scope, t.clock, { name: 'Acme <script>alert(1)</script> launch' });
    const mine = await signIn(acme);
    const theirs = await signIn(other, 'zed@other.test');
    const acmePages = await get('/console/pages', mine);
    expect(acmePages.body).toContain('Acme &lt;script>alert(1)&lt;/script> launch');
    expect(acmePages.body).not.toContain('<script>alert(1)');
    expect((await get('/console/pages?q=launch', mine)).body).toContain('launch');
    expect((await get('/console/pages', theirs)).body).not.toContain('launch');
    expect((await get('/console/pages?q=launch', theirs)).body).not.toContain('Acme');
    expect((await get('/console/users', theirs)).body).not.toContain('acme.test');
    expect((await get('/console/users', mine)).body).not.toContain('zed@other.test');
  });

  it('a page screen shows its brief and audiences; its actions need the CSRF token; other tenants’ pages are 404', async () => {
    const { pageId, audienceId } = await makeAudience(acme.scope, t.clock, {
      computedName: 'Globex <b>VP</b> Sales',
    });
    const cookie = await signIn(acme);
    const screen = await get(`/console/pages/${pageId}`, cookie);
    expect(screen.statusCode).toBe(200);
    expect(screen.body).toContain('Context for the page generator.');
    expect(screen.body).toContain('Globex &lt;b>VP&lt;/b> Sales');
    expect(screen.body).toContain(audienceId);
    const csrf = csrfOf(screen.body);
    expect((await post(`/console/pages/${pageId}/publish-drafts`, {}, { cookie })).statusCode).toBe(403);
    const published = await post(`/console/pages/${pageId}/publish-drafts`, { _csrf: csrf }, { cookie });
    expect(published.statusCode).toBe(200);
    expect(published.body).toMatch(/no draft to publish|Published \d+ drafts/);
    const regenerated = await post(`/console/pages/${pageId}/regenerate`, { _csrf: csrf }, { cookie });
    expect(regenerated.statusCode).toBe(200);
    expect(regenerated.body).toContain('Queued 1 new versions');

    const theirs = await signIn(other, 'yan@other.test');
    expect((await get(`/console/pages/${pageId}`, theirs)).statusCode).toBe(404);
    const theirCsrf = csrfOf((await get('/console/pages', theirs)).body);
    expect(
      (await post(`/console/pages/${pageId}/regenerate`, { _csrf: theirCsrf }, { cookie: theirs })).statusCode,
    ).toBe(404);
    expect((await get('/console/pages/page_nope', cookie)).statusCode).toBe(404);
  });

  it('sign-out ends the session (needs the CSRF token); inactivity ends it too', async () => {
    const cookie = await signIn(acme);
    const csrf = csrfOf((await get('/console/pages', cookie)).body);
    expect((await post('/console/sign-out', {}, { cookie })).statusCode).toBe(403);
    const out = await post('/console/sign-out', { _csrf: csrf }, { cookie });
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await get('/console/pages', cookie)).statusCode).toBe(303);

    const idle = await signIn(acme);
    t.clock.advance(59 * MINUTE_MS);
    expect((await get('/console/pages', idle)).statusCode).toBe(200);
    t.clock.advance(59 * MINUTE_MS);
    expect((await get('/console/pages', idle)).statusCode).toBe(200); // each use moves the end
    t.clock.advance(60 * MINUTE_MS);
    const ended = await get('/console/pages', idle);
    expect(ended.statusCode).toBe(303);
  });

  it('the console is not served on a tenant page host', async () => {
    const domain = await t.request(acme, {
      method: 'POST',
      url: '/v0/tenant_domains',
      payload: { hostname: 'acme-pages.localhost' },
    });
    expect(domain.statusCode).toBe(201);
    const onPageHost = await t.app.inject({
      method: 'GET',
      url: '/console',
      headers: { host: 'acme-pages.localhost' },
    });
    expect(onPageHost.statusCode).toBe(404);
    expect(onPageHost.body).not.toContain('Sign in');
  });
});

describe('console cookie outside development', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { PUBLIC_BASE_URL: 'https://pages.example.com' } });
  });
  afterAll(() => t.close());

  it('is a __Host- cookie with Secure, and links point at the public origin', async () => {
    const tenant = await t.createTenant();
    const [command] = consoleCommands;
    const out = await command!.run(
      { database: t.database, db: t.database.kysely, config: t.app.ctx.config, clock: t.clock, migrations: {} },
      { values: { tenant: tenant.tenantId, email: 'a@acme.test' }, positionals: [] },
    );
    expect(String(out.signInUrl)).toMatch(/^https:\/\/pages\.example\.com\/console\/sign-in\?token=/);
    const response = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { host: 'pages.example.com', 'content-type': FORM },
      payload: new URLSearchParams({ token: tokenOf(String(out.signInUrl)) }).toString(),
    });
    expect(response.statusCode).toBe(303);
    expect(String(response.headers['set-cookie'])).toMatch(
      /^__Host-ap-console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    );
  });
});
