import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainGeneration } from '../../../test/factories/audiences.js';
import { linkOnHost } from '../../../test/factories/site.js';
import { startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { inviteAsOperator } from './console.auth.service.js';

const HOST = 'localhost:3000';
const FORM = 'application/x-www-form-urlencoded';

function cookieOf(response: LightMyRequestResponse): string {
  return String(response.headers['set-cookie']).split(';')[0]!;
}

function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF field on the page');
  return match[1]!;
}

/** The text of the error shown next to a field (its `f-…-error` element). */
function fieldError(html: string, field: string): string | null {
  const id = `f-${field.replace(/[^A-Za-z0-9_-]/g, '-')}-error`;
  const match = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html);
  return match ? match[1]! : null;
}

/**
 * The console's authoring screens (issue 28, docs/console.md) over HTTP, both engines: they call
 * the API's services, show the API's refusals next to the fields, keep to the page status table,
 * and another tenant's ids are 404 pages.
 */
describe('console authoring screens', () => {
  let t: TestApp;
  let acme: Tenant;
  let other: Tenant;
  let cookie: string;
  let csrf: string;
  let otherCookie: string;

  beforeAll(async () => {
    t = await startTestApp();
    acme = await t.createTenant('Acme');
    other = await t.createTenant('Other');
    cookie = await signIn(acme);
    csrf = csrfOf((await get('/console/pages', cookie)).body);
    otherCookie = await signIn(other);
  });
  afterAll(() => t.close());

  function post(url: string, body: Record<string, string>, as = cookie, token: string | null = csrf) {
    return t.app.inject({
      method: 'POST',
      url,
      headers: { host: HOST, 'content-type': FORM, origin: `http://${HOST}`, cookie: as },
      payload: new URLSearchParams({ ...body, ...(token === null ? {} : { _csrf: token }) }).toString(),
    });
  }

  function api(url: string) {
    return t.request(acme, { method: 'GET', url });
  }

  function get(url: string, as = cookie) {
    return t.app.inject({ method: 'GET', url, headers: { host: HOST, cookie: as } });
  }

  async function signIn(tenant: Tenant): Promise<string> {
    const invitation = await inviteAsOperator(t.database, t.clock, { tenantId: tenant.tenantId, email: 'a@x.test' });
    const response = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { host: HOST, 'content-type': FORM, origin: `http://${HOST}` },
      payload: new URLSearchParams({ token: invitation.token }).toString(),
    });
    expect(response.statusCode).toBe(303);
    return cookieOf(response);
  }

  async function newPage(name = 'Spring offer'): Promise<string> {
    const response = await post('/console/pages/new', {
      name,
      pageType: 'outbound',
      pageContext: 'Tell them about the spring offer.',
      'actions.0.purpose': 'Book a call',
      'actions.0.buttonTitle': 'Book',
      'actions.0.url': 'https://acme.test/book',
      'actions.0.actionType': 'meeting',
    });
    expect(response.statusCode).toBe(303);
    const location = String(response.headers.location);
    expect(location).toMatch(/^\/console\/pages\/page_[a-z0-9]{26}$/);
    return location.split('/').pop()!;
  }

  it('creates a page with the API’s create: a draft, with its action; the API reads it back', async () => {
    const pageId = await newPage();
    const stored = await api(`/v0/pages/${pageId}`);
    expect(stored.statusCode).toBe(200);
    expect(stored.json()).toMatchObject({
      name: 'Spring offer',
      title: 'Spring offer',
      status: 'draft',
      pageType: 'outbound',
      actions: [{ purpose: 'Book a call', buttonTitle: 'Book', url: 'https://acme.test/book', actionType: 'meeting' }],
    });
    const screen = await get(`/console/pages/${pageId}`);
    expect(screen.statusCode).toBe(200);
    expect(screen.body).toContain('Tell them about the spring offer.');
    expect(screen.body).toContain(`action="/console/pages/${pageId}/publish"`);
  });

  it('shows the API’s refusals next to their fields, keeping what was typed', async () => {
    const response = await post('/console/pages/new', {
      name: '',
      pageType: 'outbound',
      pageContext: 'Kept brief',
      'actions.0.purpose': 'x'.repeat(10_001),
      'actions.0.buttonTitle': 'Go',
    });
    expect(response.statusCode).toBe(422);
    expect(fieldError(response.body, 'name')).toBe('is required');
    expect(fieldError(response.body, 'actions.0.purpose')).toMatch(/characters/);
    expect(response.body).toContain('Kept brief');
    expect(response.body).toContain('aria-invalid="true"');
    const list = await api('/v0/pages/search?query=Kept');
    expect(list.json().items).toEqual([]);
  });

  it('edits the brief and the actions (PATCH) and moves the page through its status table', async () => {
    const pageId = await newPage('Edited');
    const edited = await post(`/console/pages/${pageId}/edit`, {
      name: 'Edited',
      pageType: 'inbound',
      pageContext: 'A new brief',
    });
    expect(edited.statusCode).toBe(200);
    const page = (await api(`/v0/pages/${pageId}`)).json();
    expect(page).toMatchObject({ pageContext: 'A new brief', pageType: 'inbound', actions: [] });
    // the review rule: off unless ticked
    expect(page).toMatchObject({ reviewBeforePublish: false });
    const screen = await get(`/console/pages/${pageId}`);
    expect(screen.body).not.toMatch(/<input[^>]*name="reviewBeforePublish"[^>]*checked/);
    const reviewed = await post(`/console/pages/${pageId}/edit`, {
      name: 'Edited',
      reviewBeforePublish: 'true',
      pageType: 'inbound',
      pageContext: 'A new brief',
    });
    expect(reviewed.statusCode).toBe(200);
    expect((await api(`/v0/pages/${pageId}`)).json()).toMatchObject({ title: 'Edited', reviewBeforePublish: true });
    expect(reviewed.body).toMatch(/<input[^>]*name="reviewBeforePublish"[^>]*checked/);
    const unticked = await post(`/console/pages/${pageId}/edit`, {
      name: 'Edited',
      pageType: 'inbound',
      pageContext: 'A new brief',
    });
    expect(unticked.statusCode).toBe(200);
    expect((await api(`/v0/pages/${pageId}`)).json().reviewBeforePublish).toBe(false);

    expect((await post(`/console/pages/${pageId}/publish`, {})).statusCode).toBe(200);
    expect((await api(`/v0/pages/${pageId}`)).json().status).toBe('published');
    const again = await post(`/console/pages/${pageId}/publish`, {});
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('already published');
    expect((await post(`/console/pages/${pageId}/archive`, {})).statusCode).toBe(200);
    const archived = await get(`/console/pages/${pageId}`);
    expect(archived.body).toContain(`action="/console/pages/${pageId}/restore"`);
    expect(archived.body).not.toContain(`action="/console/pages/${pageId}/edit"`);
    expect(
      (await post(`/console/pages/${pageId}/edit`, { name: 'x', pageType: 'inbound', pageContext: 'y' })).statusCode,
    ).toBe(409);
    expect((await post(`/console/pages/${pageId}/restore`, {})).statusCode).toBe(200);
    expect((await api(`/v0/pages/${pageId}`)).json().status).toBe('published');
  });

  it('an audience: created by identity, edited, regenerated, a draft published, rolled back, archived', async () => {
    const pageId = await newPage('Audience page');
    await t.database.kysely
      .updateTable('pages')
      .set({ review_before_publish: true })
      .where('id', '=', pageId)
      .execute();
    const refused = await post(`/console/pages/${pageId}/audiences`, { 'person.email': 'not-an-address' });
    expect(refused.statusCode).toBe(422);
    expect(fieldError(refused.body, 'person.email')).not.toBeNull();

    const made = await post(`/console/pages/${pageId}/audiences`, {
      'person.email': 'sam@globex.test',
      'person.name': 'Sam Lee',
      supplementaryContext: 'Met at the fair',
    });
    expect(made.statusCode).toBe(303);
    const location = String(made.headers.location);
    expect(location).toMatch(/\/audiences\/audience_[a-z0-9]{26}\?made=created$/);
    const audienceId = /audience_[a-z0-9]{26}/.exec(location)![0];
    const twice = await post(`/console/pages/${pageId}/audiences`, { 'person.email': 'SAM@globex.test' });
    expect(twice.headers.location).toBe(`/console/pages/${pageId}/audiences/${audienceId}?made=existing`);

    const base = `/console/pages/${pageId}/audiences/${audienceId}`;
    const patched = await post(`${base}/edit`, { supplementaryContext: 'Met at the spring fair', customName: 'Sam' });
    expect(patched.statusCode).toBe(200);
    const badUrl = await post(`${base}/edit`, { actionFormIdOverride: 'x'.repeat(101) });
    expect(badUrl.statusCode).toBe(422);
    expect(fieldError(badUrl.body, 'actionFormIdOverride')).toMatch(/100 characters/);
    const stored = (await api(`/v0/pages/${pageId}/audiences/${audienceId}`)).json();
    expect(stored).toMatchObject({ supplementaryContext: 'Met at the spring fair', customName: 'Sam' });

    // The worker writes version 2; the page reviews before publishing: it waits as a draft.
    await drainGeneration(t.database, t.clock);
    const screen = await get(base);
    expect(screen.statusCode).toBe(200);
    expect(screen.body).toMatch(
      /<iframe[^>]+src="http:\/\/localhost:3000\/_ap\/preview\/[^"]+"[^>]*sandbox="allow-scripts"/,
    );
    const versions = (await api(`/v0/pages/${pageId}/audiences/${audienceId}/versions`)).json().items as {
      versionId: string;
      versionNumber: number;
      status: string;
    }[];
    const draft = versions.find((v) => v.status === 'draft')!;
    expect(draft.versionNumber).toBe(2);
    expect(screen.body).toContain(`${base}/versions/${draft.versionId}/publish`);
    expect((await post(`${base}/versions/${draft.versionId}/publish`, {})).statusCode).toBe(200);
    const v1 = versions.find((v) => v.versionNumber === 1)!;
    const rolled = await post(`${base}/versions/${v1.versionId}/publish`, {});
    expect(rolled.statusCode).toBe(200);
    expect(rolled.body).toContain('Rolled back: v3');
    expect((await api(`/v0/pages/${pageId}/audiences/${audienceId}`)).json().publishedVersion.versionNumber).toBe(3);

    const regenerated = await post(`${base}/regenerate`, {});
    expect(regenerated.body).toContain('v4 is queued');
    expect((await post(`${base}/archive`, {})).statusCode).toBe(200);
    expect((await api(`/v0/pages/${pageId}/audiences/${audienceId}`)).json().status).toBe('archived');
    expect((await post(`${base}/regenerate`, {})).statusCode).toBe(409);
    expect((await post(`${base}/restore`, {})).statusCode).toBe(200);
  });

  it('shows an audience’s full URLs: its link, and its key under the page’s links', async () => {
    const pageId = await newPage('Linked');
    const shared = await post(`/console/pages/${pageId}/audiences`, { customName: 'Everyone' });
    const sharedId = /audience_[a-z0-9]{26}/.exec(String(shared.headers.location))![0];
    const person = await post(`/console/pages/${pageId}/audiences`, { 'person.email': 'kim@initech.test' });
    const personId = /audience_[a-z0-9]{26}/.exec(String(person.headers.location))![0];
    await linkOnHost(t, acme, { hostname: 'offers-console.localhost', path: '/offers', audienceId: sharedId });
    const key = (await api(`/v0/pages/${pageId}/audiences/${personId}`)).json().personRouteKey as string;
    const sharedScreen = await get(`/console/pages/${pageId}/audiences/${sharedId}`);
    expect(sharedScreen.body).toContain('data-copy="http://offers-console.localhost:3000/offers"');
    const personScreen = await get(`/console/pages/${pageId}/audiences/${personId}`);
    expect(personScreen.body).toContain(`http://offers-console.localhost:3000/offers/${key}`);
  });

  it('another tenant’s ids are 404 pages; a form without the session’s token is refused', async () => {
    const pageId = await newPage('Private');
    const made = await post(`/console/pages/${pageId}/audiences`, { customName: 'Segment' });
    const audienceId = /audience_[a-z0-9]{26}/.exec(String(made.headers.location))![0];
    for (const url of [`/console/pages/${pageId}`, `/console/pages/${pageId}/audiences/${audienceId}`]) {
      const response = await get(url, otherCookie);
      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toContain('text/html');
      expect(response.body).not.toContain('Private');
    }
    const otherCsrf = csrfOf((await get('/console/pages', otherCookie)).body);
    expect((await post(`/console/pages/${pageId}/archive`, {}, otherCookie, otherCsrf)).statusCode).toBe(404);
    expect(
      (await post(`/console/pages/${pageId}/audiences/${audienceId}/archive`, {}, otherCookie, otherCsrf)).statusCode,
    ).toBe(404);
    expect((await post(`/console/pages/${pageId}/archive`, {}, cookie, null)).statusCode).toBe(403);
    expect(
      (await post('/console/pages/new', { name: 'x', pageType: 'outbound', pageContext: 'y' }, cookie, 'wrong'))
        .statusCode,
    ).toBe(403);
    expect((await api(`/v0/pages/${pageId}`)).json().status).toBe('draft');
  });
});
