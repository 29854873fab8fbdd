import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainGeneration, makeAudience, publishPageDrafts } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { startTestApp, undocumented, type Tenant, type TestApp } from '../../../test/harness.js';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { buildApp } from '../../app.js';

let t: TestApp;
let alice: Tenant;
let bob: Tenant;
/** Alice's page with two audiences: Acme's (linked at /offers/acme) and Jane's (route key jane-doe-1f3a). */
let page: string;
let acme: string;
let jane: string;

const HOST = 'go.alice.localhost';
const BOB = 'pages.bob.localhost';

beforeAll(async () => {
  t = await startTestApp();
  alice = await t.createTenant('Alice');
  bob = await t.createTenant('Bob');
  page = await makePage(alice.scope, t.clock, { title: 'Offers for {{company}}' });
  acme = (await makeAudience(alice.scope, t.clock, { pageId: page, computedName: 'Acme', personRouteKey: null }))
    .audienceId;
  jane = (
    await makeAudience(alice.scope, t.clock, { pageId: page, computedName: 'Jane', personRouteKey: 'jane-doe-1f3a' })
  ).audienceId;
  await linkOnHost(t, alice, { hostname: HOST, path: '/offers/acme', audienceId: acme });
  await linkOnHost(t, alice, { hostname: 'meet.alice.localhost', path: '/other', audienceId: jane });
  const bobs = await makeAudience(bob.scope, t.clock, { computedName: 'Bob’s audience' });
  await linkOnHost(t, bob, { hostname: BOB, path: '/bob-only', audienceId: bobs.audienceId });
});
afterAll(() => t.close());

const h1 = (html: string) => /<h1>(.*?)<\/h1>/.exec(html)?.[1];

describe('routing', () => {
  it('serves the published page of a link on its domain, host case-insensitive and port ignored', async () => {
    for (const host of [HOST, 'GO.Alice.LocalHost:3000', `${HOST}.`]) {
      const res = await visit(t, host, '/offers/acme/');
      expect(res.statusCode, host).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(h1(res.body)).toBe('Offers for Acme');
    }
    expect((await visit(t, HOST, '/offers/acme?utm_source=x')).statusCode).toBe(200);
  });

  it('falls back to the tenant’s link on no domain, and prefers the domain’s own link', async () => {
    await linkOnHost(t, alice, { path: '/everywhere', audienceId: jane });
    expect(h1((await visit(t, HOST, '/everywhere')).body)).toBe('Offers for Jane');
    expect(h1((await visit(t, 'meet.alice.localhost', '/everywhere')).body)).toBe('Offers for Jane');
    await linkOnHost(t, alice, { path: '/offers/acme', audienceId: jane });
    // the domain's own link at the same path wins; other domains get the no-domain link
    expect(h1((await visit(t, HOST, '/offers/acme')).body)).toBe('Offers for Acme');
    expect(h1((await visit(t, 'meet.alice.localhost', '/offers/acme')).body)).toBe('Offers for Jane');
  });

  it('reaches a person’s own audience of the page at {link path}/{personRouteKey}', async () => {
    const res = await visit(t, HOST, '/offers/acme/jane-doe-1f3a');
    expect(res.statusCode).toBe(200);
    expect(h1(res.body)).toBe('Offers for Jane');
  });

  it('answers one identical 404 for a wrong key, an unknown path and an unknown page', async () => {
    const bodies = new Set<string>();
    for (const path of ['/offers/acme/jane-doe-0000', '/offers/nothing/here', '/nope', '/offers/acme/..', '/a%00b']) {
      const res = await visit(t, HOST, path);
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).not.toMatch(/Alice|Acme|Jane|audience_|tenant_|stack|Error:/);
      bodies.add(res.body);
    }
    expect(bodies.size).toBe(1);
  });

  it('never serves another tenant’s content: a host with a path only the other tenant uses is a 404', async () => {
    expect((await visit(t, HOST, '/bob-only')).statusCode).toBe(404);
    expect((await visit(t, BOB, '/offers/acme')).statusCode).toBe(404);
    expect((await visit(t, BOB, '/offers/acme/jane-doe-1f3a')).statusCode).toBe(404);
    expect((await visit(t, BOB, '/bob-only/jane-doe-1f3a')).statusCode).toBe(404);
    expect((await visit(t, BOB, '/bob-only')).statusCode).toBe(200);
  });

  it('keeps the API off tenant hosts, and pages off the API host', async () => {
    for (const path of ['/v0/pages', '/docs', '/openapi.json', '/healthz', '/readyz', '/files/file_x']) {
      const res = await undocumented('a tenant host serves pages, not the API of the document', () =>
        t.app.inject({ method: 'GET', url: path, headers: { host: HOST, 'x-api-key': alice.apiKey } }),
      );
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type'], path).toBe('text/html; charset=utf-8');
    }
    // POST on a page host is a form submission (docs/forms.md): an API path is no page
    const post = await undocumented('a tenant host serves pages, not the API of the document', () =>
      t.app.inject({
        method: 'POST',
        url: '/v0/tenant_domains',
        headers: {
          host: HOST,
          'x-api-key': alice.apiKey,
          'content-type': 'application/x-www-form-urlencoded',
          // a browser's: a declared bot's form post is refused before the path is looked at (403)
          'user-agent':
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
        },
        payload: 'hostname=x.example',
      }),
    );
    expect(post.statusCode).toBe(404);
    expect(post.headers['content-type']).toBe('text/html; charset=utf-8');
    const del = await undocumented('a tenant host serves pages, not the API of the document', () =>
      visit(t, HOST, '/v0/tenant_domains', {}, 'DELETE'),
    );
    expect(del.statusCode).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD, POST');
    const api = await t.app.inject({ method: 'GET', url: '/offers/acme', headers: { host: 'localhost:3000' } });
    expect(api.statusCode).toBe(404);
    expect(api.headers['content-type']).toMatch(/problem\+json/);
    const browser = await t.app.inject({
      method: 'GET',
      url: '/offers/acme',
      headers: { host: 'unknown.example', accept: 'text/html,*/*' },
    });
    expect(browser.statusCode).toBe(404);
    expect(browser.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(browser.body).not.toMatch(/Alice|Acme/);
    expect((await t.request(alice, { method: 'GET', url: '/v0/pages' })).statusCode).toBe(200);
  });

  it('stops serving a deleted link and a removed domain at once', async () => {
    const carol = await t.createTenant('Carol');
    const { audienceId } = await makeAudience(carol.scope, t.clock);
    const { tenantDomainId, pageLinkId } = await linkOnHost(t, carol, {
      hostname: 'c.carol.localhost',
      path: '/x',
      audienceId,
    });
    await linkOnHost(t, carol, { tenantDomainId, path: '/y', audienceId });
    expect((await visit(t, 'c.carol.localhost', '/x')).statusCode).toBe(200);
    await t.request(carol, { method: 'DELETE', url: `/v0/page_links/${pageLinkId}` });
    expect((await visit(t, 'c.carol.localhost', '/x')).statusCode).toBe(404);
    expect((await visit(t, 'c.carol.localhost', '/y')).statusCode).toBe(200);
    await t.request(carol, { method: 'DELETE', url: `/v0/tenant_domains/${tenantDomainId}` });
    const gone = await visit(t, 'c.carol.localhost', '/y', { accept: 'text/html' });
    expect(gone.statusCode).toBe(404);
    expect(gone.body).not.toMatch(/Carol/);
  });

  it('answers 410 for an archived audience or page behind a link, 404 for a deleted page', async () => {
    const dave = await t.createTenant('Dave');
    const a = await makeAudience(dave.scope, t.clock, { personRouteKey: 'pat-1' });
    const b = await makeAudience(dave.scope, t.clock, { pageId: a.pageId, personRouteKey: 'sam-2' });
    const { tenantDomainId } = await linkOnHost(t, dave, {
      hostname: 'd.dave.localhost',
      path: '/a',
      audienceId: a.audienceId,
    });
    await linkOnHost(t, dave, { tenantDomainId, path: '/b', audienceId: b.audienceId });
    const now = t.clock.now().toISOString();
    await dave.scope.updateTable('audiences').set({ archived_at: now }).where('id', '=', b.audienceId).execute();
    const archived = await visit(t, 'd.dave.localhost', '/b');
    expect(archived.statusCode).toBe(410);
    expect(archived.body).toContain('no longer available');
    // reached by its key, an archived audience is simply not there
    expect((await visit(t, 'd.dave.localhost', '/a/sam-2')).statusCode).toBe(404);
    expect((await visit(t, 'd.dave.localhost', '/a/pat-1')).statusCode).toBe(200);
    await dave.scope
      .updateTable('pages')
      .set({ status: 'archived', archived_at: now })
      .where('id', '=', a.pageId)
      .execute();
    expect((await visit(t, 'd.dave.localhost', '/a')).statusCode).toBe(410);
    await dave.scope.updateTable('pages').set({ deleted_at: now }).where('id', '=', a.pageId).execute();
    expect((await visit(t, 'd.dave.localhost', '/a')).statusCode).toBe(404);
  });

  it('serves the published version only: a newer draft waits until it is published', async () => {
    const erin = await t.createTenant('Erin');
    const pageId = await makePage(erin.scope, t.clock, { status: 'draft', title: 'Version one' });
    const { audienceId } = await makeAudience(erin.scope, t.clock, { pageId });
    await linkOnHost(t, erin, { hostname: 'e.erin.localhost', path: '/p', audienceId });
    const first = await visit(t, 'e.erin.localhost', '/p');
    expect(h1(first.body)).toBe('Version one');

    await erin.scope.updateTable('pages').set({ title: 'Version two' }).where('id', '=', pageId).execute();
    const created = await t.request(erin, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
      payload: {},
    });
    expect(created.statusCode).toBe(201);
    // queued: still the published one
    expect(h1((await visit(t, 'e.erin.localhost', '/p')).body)).toBe('Version one');
    await drainGeneration(t.database, t.clock);
    // generated as a draft (the page is a draft): still the published one, same bytes
    const draft = await visit(t, 'e.erin.localhost', '/p');
    expect(draft.body).toBe(first.body);
    await publishPageDrafts(erin.scope, t.clock, pageId);
    const published = await visit(t, 'e.erin.localhost', '/p', { 'if-none-match': first.headers.etag as string });
    expect(published.statusCode).toBe(200);
    expect(h1(published.body)).toBe('Version two');
    expect(published.headers.etag).not.toBe(first.headers.etag);
  });
});

describe('HTTP', () => {
  it('sends a strong ETag of the bytes and 304 on If-None-Match (any encoding’s tag)', async () => {
    const res = await visit(t, HOST, '/offers/acme');
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    const again = await visit(t, HOST, '/offers/acme');
    expect(again.body).toBe(res.body);
    expect(again.headers.etag).toBe(etag);
    for (const tag of [etag, `W/${etag}`, `"x", ${etag}`, `${etag.slice(0, -1)}-br"`, '*']) {
      const cached = await visit(t, HOST, '/offers/acme', { 'if-none-match': tag });
      expect(cached.statusCode, tag).toBe(304);
      expect(cached.body).toBe('');
      expect(cached.headers.etag).toBe(etag);
      expect(cached.headers['cache-control']).toBe(res.headers['cache-control']);
    }
    expect((await visit(t, HOST, '/offers/acme', { 'if-none-match': '"other"' })).statusCode).toBe(200);
  });

  it('answers HEAD like GET without a body', async () => {
    const get = await visit(t, HOST, '/offers/acme');
    const head = await visit(t, HOST, '/offers/acme', {}, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    for (const name of ['content-type', 'etag', 'cache-control', 'content-security-policy', 'content-length'])
      expect(head.headers[name], name).toBe(get.headers[name]);
    expect((await visit(t, HOST, '/nope', {}, 'HEAD')).statusCode).toBe(404);
  });

  it('compresses with br or gzip as accepted, each with its own tag of the same bytes', async () => {
    const plain = await visit(t, HOST, '/offers/acme');
    const br = await visit(t, HOST, '/offers/acme', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    expect(br.headers.vary).toBe('Accept-Encoding');
    const gzip = await visit(t, HOST, '/offers/acme', { 'accept-encoding': 'gzip;q=1, br;q=0' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain.body);
    expect(new Set([plain.headers.etag, br.headers.etag, gzip.headers.etag]).size).toBe(3);
    expect(Number(br.headers['content-length'])).toBeLessThan(plain.body.length);
    const none = await visit(t, HOST, '/offers/acme', { 'accept-encoding': 'identity' });
    expect(none.headers['content-encoding']).toBeUndefined();
  });

  it('sends the security headers and a CSP that allows exactly the page’s scripts', async () => {
    const res = await visit(t, HOST, '/offers/acme');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(res.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=600');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toMatch(/script-src 'self' 'strict-dynamic' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(csp).not.toMatch(/unsafe-eval|nonce-/);
  });

  it('serves the runtime’s stylesheet and script from the page host, immutable', async () => {
    const html = (await visit(t, HOST, '/offers/acme')).body;
    const css = /href="(\/_ap\/page\.[0-9a-f]{12}\.css)"/.exec(html)![1]!;
    const js = /src=\\?"(\/_ap\/page\.[0-9a-f]{12}\.js)\\?"/.exec(html)![1]!;
    const style = await visit(t, HOST, css);
    expect(style.statusCode).toBe(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(style.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const script = await visit(t, HOST, js, { 'accept-encoding': 'gzip' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['content-encoding']).toBe('gzip');
    expect((await visit(t, HOST, '/_ap/page.000000000000.js')).statusCode).toBe(404);
    // not on the API host
    expect((await t.app.inject({ method: 'GET', url: css, headers: { host: 'localhost' } })).statusCode).toBe(404);
  });
});

describe('several processes on one database', () => {
  it('a second process learns a new host within a second, and serves a publish made elsewhere at once', async () => {
    const other = await buildApp({
      config: t.app.ctx.config,
      database: t.database,
      logger: pino({ level: 'silent' }),
      clock: t.clock,
    });
    await other.ready();
    try {
      const frank = await t.createTenant('Frank');
      const pageId = await makePage(frank.scope, t.clock, { status: 'published', title: 'First' });
      const { audienceId } = await makeAudience(frank.scope, t.clock, { pageId });
      await linkOnHost(t, frank, { hostname: 'f.frank.localhost', path: '/f', audienceId });
      const inOther = () => other.inject({ method: 'GET', url: '/f', headers: { host: 'f.frank.localhost' } });
      const deadline = Date.now() + 1_500;
      let res = await inOther();
      while (res.statusCode !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        res = await inOther();
      }
      expect(res.statusCode).toBe(200);
      expect(h1(res.body)).toBe('First');

      // published through the first process: the other one's cache is keyed by the version
      await frank.scope.updateTable('pages').set({ title: 'Second' }).where('id', '=', pageId).execute();
      await t.request(frank, {
        method: 'POST',
        url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
        payload: {},
      });
      await drainGeneration(t.database, t.clock);
      expect(h1((await inOther()).body)).toBe('Second');
    } finally {
      await other.close();
    }
  });
});
