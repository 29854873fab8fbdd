import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { startTestNameServer, type TestNameServer } from '../../../test/dns-server.js';
import { problem, startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { pageHostsFor } from './tenant-domains.hosts.js';
import { MAX_DOMAINS_PER_TENANT } from './tenant-domains.schemas.js';

let t: TestApp;
let dns: TestNameServer;
let alice: Tenant;
let bob: Tenant;

beforeAll(async () => {
  dns = await startTestNameServer();
  t = await startTestApp({
    config: {
      PUBLIC_BASE_URL: 'https://api.audience-service.com',
      API_HOSTNAMES: 'admin.audience-service.net',
      DNS_SERVERS: dns.address,
    },
  });
  alice = await t.createTenant('Alice');
  bob = await t.createTenant('Bob');
});
afterAll(async () => {
  await t.close();
  await dns.close();
});

const add = (tenant: Tenant, hostname: unknown) =>
  t.request(tenant, { method: 'POST', url: '/v0/tenant_domains', payload: { hostname } });
const verify = (tenant: Tenant, id: string) =>
  t.request(tenant, { method: 'POST', url: `/v0/tenant_domains/${id}/verify` });
const list = (tenant: Tenant, query = '') => t.request(tenant, { method: 'GET', url: `/v0/tenant_domains${query}` });
const listed = async (tenant: Tenant, id: string) =>
  (await list(tenant, '?limit=100')).json().items.find((d: { tenantDomainId: string }) => d.tenantDomainId === id);
const remove = (tenant: Tenant, id: string) => t.request(tenant, { method: 'DELETE', url: `/v0/tenant_domains/${id}` });
const rows = () => t.database.kysely.selectFrom('tenant_domains').selectAll().orderBy('id').execute();
const serves = (hostname: string) => pageHostsFor(t.app.ctx).has(hostname);
const inMs = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** Publishes the claim's proof on the test name server. */
const publish = (domain: { verification: { name: string; value: string } }) =>
  dns.txt(domain.verification.name, [domain.verification.value]);

describe('POST /v0/tenant_domains: a claim', () => {
  it('starts pending, says exactly which TXT record proves it, and serves nothing yet', async () => {
    const res = await add(alice, 'Pages.Bücher.de');
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      tenantDomainId: expect.stringMatching(/^domain_/),
      hostname: 'pages.xn--bcher-kva.de',
      status: 'pending',
      verification: {
        type: 'TXT',
        name: '_audience-pages-challenge.pages.xn--bcher-kva.de',
        value: expect.stringMatching(/^audience-pages-verification=[0-9a-f]{32}$/),
      },
      verifiedAt: null,
      lastCheck: null,
      nextCheckAt: inMs(MINUTE),
      pendingUntil: inMs(7 * DAY),
      stopsServingAt: null,
      createdAt: t.clock.now().toISOString(),
    });
    expect(serves('pages.xn--bcher-kva.de')).toBe(false);
    // Each claim has its own token.
    const other = (await add(bob, 'pages.bücher.de')).json();
    expect(other.verification.value).not.toBe(body.verification.value);
  });

  it('verifies *.localhost names at once (they only reach the visitor’s own machine), without DNS', async () => {
    const asked = dns.asked.length;
    const res = await add(alice, 'Acme-1a2b3c.localhost');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      hostname: 'acme-1a2b3c.localhost',
      status: 'verified',
      verifiedAt: t.clock.now().toISOString(),
      nextCheckAt: null,
      pendingUntil: null,
    });
    expect(serves('acme-1a2b3c.localhost')).toBe(true);
    expect(dns.asked.length).toBe(asked);
    expect((await add(bob, 'acme-1a2b3c.localhost')).statusCode).toBe(409);
  });

  it('answers 409 hostname_taken for a name someone holds verified, or this tenant claims, without saying who', async () => {
    const claim = (await add(alice, 'go.alice-shop.com')).json();
    publish(claim);
    expect((await verify(alice, claim.tenantDomainId)).statusCode).toBe(200);
    const pending = (await add(alice, 'pending.alice-shop.com')).json();
    const before = await rows();
    for (const [tenant, name] of [
      [alice, 'go.alice-shop.com'],
      [bob, 'GO.alice-shop.com.'],
      [alice, pending.hostname],
    ] as const) {
      const res = await add(tenant, name);
      expect(res.statusCode, name).toBe(409);
      const body = problem(res);
      expect(body.code).toBe('hostname_taken');
      expect(body.errors[0]!.path).toBe('/body/hostname');
      expect(JSON.stringify(body)).not.toMatch(/Alice|Bob|tenant_[0-9a-z]{26}/);
    }
    expect(await rows()).toEqual(before);
    // Someone else's pending claim is no obstacle: the name is not proven yet.
    expect((await add(bob, pending.hostname)).statusCode).toBe(201);
  });

  it('refuses what is not a host name, names no one may claim and the service’s own names, with 422', async () => {
    const before = await rows();
    for (const hostname of [
      'https://x.acme.com',
      'x.acme.com:443',
      'x.acme.com/path',
      '10.0.0.1',
      'localhost',
      // special-use and internal names
      'api.example.test',
      'go.northwind.example',
      'www.example.com',
      'x.invalid',
      'printer.local',
      'nas.home.arpa',
      'metadata.google.internal',
      'abc.onion',
      'router.lan',
      // public suffixes themselves
      'co.uk',
      'github.io',
      // the service's own host names (PUBLIC_BASE_URL, API_HOSTNAMES) and every name under them
      'api.audience-service.com',
      'API.audience-service.com',
      'pages.api.audience-service.com',
      'admin.audience-service.net',
      'x.admin.audience-service.net',
      '',
    ]) {
      const res = await add(alice, hostname);
      expect(res.statusCode, hostname).toBe(422);
      expect(problem(res).errors[0]!.path).toBe('/body/hostname');
    }
    expect(problem(await add(alice, 'co.uk')).detail).toMatch(/public suffix/);
    expect(problem(await add(alice, 'x.admin.audience-service.net')).detail).toMatch(/admin\.audience-service\.net/);
    for (const body of [{}, { hostname: 5 }, { hostname: 'a.acme.com', extra: 1 }]) {
      const res = await t.request(alice, { method: 'POST', url: '/v0/tenant_domains', payload: body });
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors[0]!.path).toMatch(/^\/body/);
    }
    expect(await rows()).toEqual(before);
    // The parent of the service's name is someone's domain like any other.
    expect((await add(bob, 'www.audience-service.com')).statusCode).toBe(201);
  });

  it('needs an API key', async () => {
    const res = await t.request(null, {
      method: 'POST',
      url: '/v0/tenant_domains',
      payload: { hostname: 'x.acme.com' },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /v0/tenant_domains/{id}/verify', () => {
  it('says what it found when the proof is not there (no name, no TXT, other values, a DNS error), and records it', async () => {
    const claim = (await add(alice, 'shop.verify-me.com')).json();
    const { name, value } = claim.verification;
    const cases: [string, () => void, string, RegExp][] = [
      [
        'no name',
        () => dns.txt(name, undefined),
        'no_record',
        /No TXT record at _audience-pages-challenge\.shop.*does not exist/,
      ],
      ['no TXT', () => dns.txt(name, []), 'no_record', /No TXT record at/],
      [
        'other values',
        () => dns.txt(name, ['v=spf1 -all', 'audience-pages-verification=0000']),
        'other_values',
        /2 other values.*"v=spf1 -all"/,
      ],
      ['SERVFAIL', () => dns.txt(name, 'SERVFAIL'), 'dns_error', /failed \(SERVFAIL\)/],
    ];
    for (const [label, setUp, result, detail] of cases) {
      setUp();
      t.clock.advance(MINUTE);
      const res = await verify(alice, claim.tenantDomainId);
      expect(res.statusCode, label).toBe(422);
      const body = problem(res);
      expect(body.code).toBe('domain_not_verified');
      expect(body.detail).toMatch(detail);
      expect(body.detail).toContain(value); // and what to publish instead
      expect(body.check).toMatchObject({ result });
      expect(body.tenantDomain).toMatchObject({ status: 'pending', lastCheck: { result } });
      expect(await listed(alice, claim.tenantDomainId)).toMatchObject({
        status: 'pending',
        lastCheck: { checkedAt: t.clock.now().toISOString(), result, detail: expect.stringMatching(detail) },
        // the tenant's call restarts the period the service keeps checking for
        pendingUntil: inMs(7 * DAY),
        nextCheckAt: inMs(2 * MINUTE),
      });
    }
    expect((problem(await verify(alice, claim.tenantDomainId)).check as { values: string[] }).values).toEqual([]);
    expect(serves('shop.verify-me.com')).toBe(false);
  });

  it('verifies a claim whose record is published: it serves its links at once', async () => {
    const { audienceId } = await makeAudience(alice.scope, t.clock);
    const claim = (await add(alice, 'offers.proven-shop.com')).json();
    await linkOnHost(t, alice, { tenantDomainId: claim.tenantDomainId, path: '/offer', audienceId });
    expect((await visit(t, 'offers.proven-shop.com', '/offer')).statusCode).toBe(404);

    dns.txt(claim.verification.name, ['unrelated', ` ${claim.verification.value} `]);
    const res = await verify(alice, claim.tenantDomainId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...claim,
      status: 'verified',
      verifiedAt: t.clock.now().toISOString(),
      lastCheck: { checkedAt: t.clock.now().toISOString(), result: 'found', detail: expect.any(String) },
      nextCheckAt: inMs(6 * 60 * MINUTE),
      pendingUntil: null,
    });
    expect(serves('offers.proven-shop.com')).toBe(true);
    const page = await visit(t, 'offers.proven-shop.com', '/offer');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    // verifying again re-checks and answers the same
    expect((await verify(alice, claim.tenantDomainId)).json().status).toBe('verified');
  });

  it('lets the first tenant to prove a name win; the other claims end as superseded', async () => {
    const carol = await t.createTenant('Carol');
    const [a, b, c] = [
      (await add(alice, 'www.contested.com')).json(),
      (await add(bob, 'www.contested.com')).json(),
      (await add(carol, 'www.contested.com')).json(),
    ];
    expect([a, b, c].map((d) => d.status)).toEqual(['pending', 'pending', 'pending']);
    dns.txt(b.verification.name, [a.verification.value, b.verification.value]); // both published
    expect((await verify(bob, b.tenantDomainId)).statusCode).toBe(200);
    expect(await listed(alice, a.tenantDomainId)).toMatchObject({ status: 'superseded', nextCheckAt: null });
    expect(await listed(carol, c.tenantDomainId)).toMatchObject({ status: 'superseded', nextCheckAt: null });
    const late = await verify(alice, a.tenantDomainId);
    expect(late.statusCode).toBe(409);
    expect(problem(late).code).toBe('hostname_taken');
    expect(problem(late).detail).toMatch(/superseded/);
    expect(JSON.stringify(problem(late))).not.toMatch(/Bob|tenant_[0-9a-z]{26}/);
    expect(pageHostsFor(t.app.ctx).tenantOf('www.contested.com')).toBe(bob.tenantId);
    // Removing a claim that never served leaves the winner serving.
    expect((await remove(alice, a.tenantDomainId)).statusCode).toBe(204);
    expect(pageHostsFor(t.app.ctx).tenantOf('www.contested.com')).toBe(bob.tenantId);
    // Once the winner lets go, a superseded claim can be proven again.
    expect((await remove(bob, b.tenantDomainId)).statusCode).toBe(204);
    expect(serves('www.contested.com')).toBe(false);
    dns.txt(b.verification.name, [c.verification.value]);
    expect((await verify(carol, c.tenantDomainId)).json().status).toBe('verified');
  });

  it('answers 404 for another tenant’s domain and an unknown id', async () => {
    const bobs = (await add(bob, 'own.bob-shop.com')).json();
    for (const id of [bobs.tenantDomainId, 'domain_01jb0000000000000000000000']) {
      const res = await verify(alice, id);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
  });
});

describe('GET /v0/tenant_domains', () => {
  it('lists the tenant’s claims of every status, newest first, in the envelope, and nobody else’s', async () => {
    const dave = await t.createTenant('Dave');
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await add(dave, `d${n}.dave-shop.com`)).json().tenantDomainId);
    await add(bob, 'b.bob-shop.com');
    const first = await list(dave, '?limit=2');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(first.json().items.map((d: { tenantDomainId: string }) => d.tenantDomainId)).toEqual([ids[2], ids[1]]);
    expect(first.json().items[0]).toMatchObject({ status: 'pending', verification: { type: 'TXT' } });
    const second = await list(dave, `?limit=2&cursor=${first.json().nextCursor}`);
    expect(second.json()).toMatchObject({ hasMore: false, nextCursor: null, totalCount: 3 });
    expect(second.json().items.map((d: { tenantDomainId: string }) => d.tenantDomainId)).toEqual([ids[0]]);
    expect((await list(dave, '?limit=0')).statusCode).toBe(422);
  });
});

describe('DELETE /v0/tenant_domains/{id}', () => {
  it('removes the domain and its links (which stop serving), frees the host name, then 404s', async () => {
    const erin = await t.createTenant('Erin');
    const { audienceId } = await makeAudience(erin.scope, t.clock);
    const domain = (await add(erin, 'go.erin.localhost')).json();
    const link = await linkOnHost(t, erin, { tenantDomainId: domain.tenantDomainId, path: '/offer', audienceId });
    const elsewhere = await linkOnHost(t, erin, { path: '/offer', audienceId });
    expect((await visit(t, 'go.erin.localhost', '/offer')).statusCode).toBe(200);

    const res = await remove(erin, domain.tenantDomainId);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(serves('go.erin.localhost')).toBe(false);
    const links = await t.request(erin, { method: 'GET', url: '/v0/page_links' });
    expect(links.json().items.map((l: { pageLinkId: string }) => l.pageLinkId)).toEqual([elsewhere.pageLinkId]);
    const gone = await t.request(erin, { method: 'PATCH', url: `/v0/page_links/${link.pageLinkId}`, payload: {} });
    expect(gone.statusCode).toBe(404);
    // a removed domain is no longer a place for links
    const onRemoved = await t.request(erin, {
      method: 'PATCH',
      url: `/v0/page_links/${elsewhere.pageLinkId}`,
      payload: { tenantDomainId: domain.tenantDomainId },
    });
    expect(onRemoved.statusCode).toBe(422);

    expect((await remove(erin, domain.tenantDomainId)).statusCode).toBe(404);
    expect((await add(bob, 'go.erin.localhost')).statusCode).toBe(201);
  });

  it('answers 404 for another tenant’s domain and an unknown id, and removes nothing', async () => {
    const bobs = (await add(bob, 'keep.bob-shop.com')).json();
    const before = await rows();
    for (const id of [bobs.tenantDomainId, 'domain_01jb0000000000000000000000']) {
      const res = await remove(alice, id);
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect(await rows()).toEqual(before);
  });
});

describe('limits', () => {
  it(`allows at most ${MAX_DOMAINS_PER_TENANT} live claims per tenant (409 domain_limit_reached)`, async () => {
    const frank = await t.createTenant('Frank');
    await fillUpTo(frank, MAX_DOMAINS_PER_TENANT);
    const res = await add(frank, 'one-more.frank-shop.com');
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('domain_limit_reached');
  });

  // PostgreSQL runs these claims really at once (each on its own connection): without the
  // tenant's lock, each counted 99 and inserted (seen: 5 of 8 got 201, in 3 runs of 3). SQLite's single
  // writer serializes them anyway.
  it('holds under concurrent claims: one slot left, one claim wins', async () => {
    for (let round = 0; round < 3; round++) {
      const grace = await t.createTenant(`Grace ${round}`);
      await fillUpTo(grace, MAX_DOMAINS_PER_TENANT - 1);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => add(grace, `race-${round}-${i}.grace-shop.com`)),
      );
      expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      const live = await grace.scope
        .selectFrom('tenant_domains')
        .select('id')
        .where('deleted_at', 'is', null)
        .execute();
      expect(live).toHaveLength(MAX_DOMAINS_PER_TENANT);
    }
  });
});

async function fillUpTo(tenant: Tenant, count: number) {
  await tenant.scope
    .insertInto(
      'tenant_domains',
      Array.from({ length: count }, (_, i) => ({
        id: `domain_${tenant.tenantId.slice(-8)}${String(i).padStart(3, '0')}`,
        hostname: `d${i}.filler-${tenant.tenantId.slice(-8)}.com`,
        status: 'pending' as const,
        verification_token: 'token',
        created_at: t.clock.now().toISOString(),
      })),
    )
    .execute();
}
