import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { problem, startTestApp, type Tenant, type TestApp } from '../../../test/harness.js';
import { canonicalHostname } from '../../lib/domain-name.js';
import { pageHostsFor } from './tenant-domains.hosts.js';
import { MAX_DOMAINS_PER_TENANT } from './tenant-domains.schemas.js';

let t: TestApp;
let alice: Tenant;
let bob: Tenant;

beforeAll(async () => {
  t = await startTestApp({ config: { PUBLIC_BASE_URL: 'https://api.pages.example' } });
  alice = await t.createTenant('Alice');
  bob = await t.createTenant('Bob');
});
afterAll(() => t.close());

const add = (tenant: Tenant, hostname: unknown) =>
  t.request(tenant, { method: 'POST', url: '/v0/tenant_domains', payload: { hostname } });
const list = (tenant: Tenant, query = '') => t.request(tenant, { method: 'GET', url: `/v0/tenant_domains${query}` });
const remove = (tenant: Tenant, id: string) => t.request(tenant, { method: 'DELETE', url: `/v0/tenant_domains/${id}` });
const rows = () => t.database.kysely.selectFrom('tenant_domains').selectAll().orderBy('id').execute();

describe('canonicalHostname', () => {
  it.each([
    ['pages.acme.com', 'pages.acme.com'],
    ['Pages.ACME.com.', 'pages.acme.com'],
    ['www.acme.com', 'www.acme.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['acme-1a2b3c.localhost', 'acme-1a2b3c.localhost'],
  ])('%s → %s', (input, expected) => expect(canonicalHostname(input)).toEqual({ ok: true, domain: expected }));

  it.each([
    'https://pages.acme.com',
    'pages.acme.com:8080',
    'pages.acme.com/offers',
    'pages.acme.com?x',
    '127.0.0.1',
    '[::1]',
    '::1',
    'localhost',
    'intranet',
    '*.acme.com',
    'a_b.acme.com',
    'user@acme.com',
    '-x.acme.com',
    'acme..com',
    'x.invalid',
    `${'a'.repeat(64)}.com`,
    '',
  ])('refuses %j', (input) => expect(canonicalHostname(input).ok).toBe(false));
});

describe('POST /v0/tenant_domains', () => {
  it('registers a host name, stored lowercase and as punycode, and routes it at once', async () => {
    const res = await add(alice, 'Pages.Bücher.example');
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      tenantDomainId: expect.stringMatching(/^domain_/),
      hostname: 'pages.xn--bcher-kva.example',
      createdAt: t.clock.now().toISOString(),
    });
    expect(pageHostsFor(t.app.ctx).has('pages.xn--bcher-kva.example')).toBe(true);
  });

  it('answers 409 hostname_taken for a host name held by anyone, without saying by whom', async () => {
    expect((await add(alice, 'go.alice.example')).statusCode).toBe(201);
    const before = await rows();
    for (const [tenant, name] of [
      [alice, 'go.alice.example'],
      [bob, 'GO.alice.example.'],
    ] as const) {
      const res = await add(tenant, name);
      expect(res.statusCode).toBe(409);
      const body = problem(res);
      expect(body.code).toBe('hostname_taken');
      expect(body.errors[0]!.path).toBe('/body/hostname');
      expect(JSON.stringify(body)).not.toMatch(/Alice|Bob|tenant_[0-9a-z]{26}/);
    }
    expect(await rows()).toEqual(before);
  });

  it('refuses what is not a host name, and the API’s own host, with 422 at /body/hostname', async () => {
    const before = await rows();
    for (const hostname of [
      'https://x.acme.com',
      'x.acme.com:443',
      'x.acme.com/path',
      '10.0.0.1',
      'localhost',
      'api.pages.example',
      'API.pages.example',
      '',
    ]) {
      const res = await add(alice, hostname);
      expect(res.statusCode, hostname).toBe(422);
      expect(problem(res).errors[0]!.path).toBe('/body/hostname');
    }
    for (const body of [{}, { hostname: 5 }, { hostname: 'a.example', extra: 1 }]) {
      const res = await t.request(alice, { method: 'POST', url: '/v0/tenant_domains', payload: body });
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors[0]!.path).toMatch(/^\/body/);
    }
    expect(await rows()).toEqual(before);
  });

  it('needs an API key', async () => {
    const res = await t.request(null, {
      method: 'POST',
      url: '/v0/tenant_domains',
      payload: { hostname: 'x.example' },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('GET /v0/tenant_domains', () => {
  it('lists the tenant’s live domains, newest first, in the envelope, and nobody else’s', async () => {
    const carol = await t.createTenant('Carol');
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await add(carol, `d${n}.carol.example`)).json().tenantDomainId);
    await add(bob, 'b.bob.example');
    const first = await list(carol, '?limit=2');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(first.json().items.map((d: { tenantDomainId: string }) => d.tenantDomainId)).toEqual([ids[2], ids[1]]);
    const second = await list(carol, `?limit=2&cursor=${first.json().nextCursor}`);
    expect(second.json()).toMatchObject({ hasMore: false, nextCursor: null, totalCount: 3 });
    expect(second.json().items.map((d: { tenantDomainId: string }) => d.tenantDomainId)).toEqual([ids[0]]);
    expect((await list(carol, '?limit=0')).statusCode).toBe(422);
  });
});

describe('DELETE /v0/tenant_domains/{id}', () => {
  it('removes the domain and its links (which stop serving), frees the host name, then 404s', async () => {
    const dave = await t.createTenant('Dave');
    const { audienceId } = await makeAudience(dave.scope, t.clock);
    const domain = (await add(dave, 'go.dave.example')).json();
    const link = await t.request(dave, {
      method: 'POST',
      url: '/v0/page_links',
      payload: {
        path: '/offer',
        tenantDomainId: domain.tenantDomainId,
        target: { targetType: 'audience', audienceId },
      },
    });
    expect(link.statusCode).toBe(201);
    const elsewhere = await t.request(dave, {
      method: 'POST',
      url: '/v0/page_links',
      payload: { path: '/offer', target: { targetType: 'audience', audienceId } },
    });
    expect(elsewhere.statusCode).toBe(201);

    const res = await remove(dave, domain.tenantDomainId);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(pageHostsFor(t.app.ctx).has('go.dave.example')).toBe(false);
    const links = await t.request(dave, { method: 'GET', url: '/v0/page_links' });
    expect(links.json().items.map((l: { pageLinkId: string }) => l.pageLinkId)).toEqual([elsewhere.json().pageLinkId]);
    const gone = await t.request(dave, {
      method: 'PATCH',
      url: `/v0/page_links/${link.json().pageLinkId}`,
      payload: {},
    });
    expect(gone.statusCode).toBe(404);
    // a removed domain is no longer a place for links
    const onRemoved = await t.request(dave, {
      method: 'PATCH',
      url: `/v0/page_links/${elsewhere.json().pageLinkId}`,
      payload: { tenantDomainId: domain.tenantDomainId },
    });
    expect(onRemoved.statusCode).toBe(422);

    expect((await remove(dave, domain.tenantDomainId)).statusCode).toBe(404);
    expect((await add(bob, 'go.dave.example')).statusCode).toBe(201);
  });

  it('answers 404 for another tenant’s domain and an unknown id, and removes nothing', async () => {
    const bobs = (await add(bob, 'keep.bob.example')).json();
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
  it(`allows at most ${MAX_DOMAINS_PER_TENANT} live domains per tenant (409 domain_limit_reached)`, async () => {
    const erin = await t.createTenant('Erin');
    for (let i = 0; i < MAX_DOMAINS_PER_TENANT; i++) {
      await erin.scope
        .insertInto('tenant_domains', {
          id: `domain_erin${i}`,
          hostname: `d${i}.erin.example`,
          created_at: t.clock.now().toISOString(),
        })
        .execute();
    }
    const res = await add(erin, 'one-more.erin.example');
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('domain_limit_reached');
  });
});
