import { beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { problem, useTestApp, type Tenant } from '../../../test/harness.js';
import { archiveAudience } from '../audiences/index.js';
import { createTenantDomain } from '../tenant-domains/index.js';
import { createPageLink, normalizePath } from './page-links.service.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const addDomain = async (tenant: Tenant, hostname: string) =>
  (await createTenantDomain(tenant.scope, t.clock, { hostname }, { serviceHostnames: [] })).tenantDomainId;

let audience: string;
let otherAudience: string;
let domain: string;
let otherDomain: string;
let bobsAudience: string;
let bobsDomain: string;

beforeAll(async () => {
  audience = (await makeAudience(alice.scope, t.clock)).audienceId;
  otherAudience = (await makeAudience(alice.scope, t.clock)).audienceId;
  domain = await addDomain(alice, 'go.alice.localhost');
  otherDomain = await addDomain(alice, 'meet.alice.localhost');
  bobsAudience = (await makeAudience(bob.scope, t.clock)).audienceId;
  bobsDomain = await addDomain(bob, 'go.bob.localhost');
});

let n = 0;
async function link(overrides: { path?: string; tenantDomainId?: string | null } = {}) {
  const created = await createPageLink(alice.scope, t.clock, {
    tenantDomainId: overrides.tenantDomainId === undefined ? domain : overrides.tenantDomainId,
    path: overrides.path ?? `/link-${++n}`,
    target: { targetType: 'audience', audienceId: audience },
  });
  return created.pageLinkId;
}

const patch = (tenant: Tenant, id: string, body: unknown) =>
  t.request(tenant, { method: 'PATCH', url: `/v0/page_links/${id}`, payload: body as object });

const rows = () => alice.scope.selectFrom('page_links').selectAll().orderBy('id').execute();

describe('PATCH /v0/page_links/{page_link_id}', () => {
  it('moves a link and retargets it; absent fields stay', async () => {
    const id = await link();
    t.clock.advance(1000);
    const res = await patch(alice, id, {
      path: 'offers/acme/',
      tenantDomainId: otherDomain,
      target: { targetType: 'audience', audienceId: otherAudience },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      pageLinkId: id,
      path: '/offers/acme',
      tenantDomainId: otherDomain,
      target: { targetType: 'audience', audienceId: otherAudience },
      updatedAt: t.clock.now().toISOString(),
      deletedAt: null,
    });
    expect(res.json().createdAt < res.json().updatedAt).toBe(true);

    const onlyDomain = await patch(alice, id, { tenantDomainId: null });
    expect(onlyDomain.json()).toMatchObject({
      path: '/offers/acme',
      tenantDomainId: null,
      target: { audienceId: otherAudience },
    });
    const unchanged = await patch(alice, id, {});
    expect(unchanged.json()).toEqual(onlyDomain.json());
  });

  it('normalizes paths', () => {
    expect(normalizePath('a/b/')).toBe('/a/b');
    expect(normalizePath('//a///b')).toBe('/a/b');
    expect(normalizePath('/')).toBe('/');
    expect(normalizePath('/Pricing%20Q4')).toBe('/Pricing%20Q4');
    for (const bad of ['/a/../b', '/a/./b', '..', '/a/%2e%2e/b', '/a?x=1', '/a#top', '/a b', '/a\\b', '/a\u0000'])
      expect(() => normalizePath(bad), bad).toThrow();
  });

  it('refuses bad paths with 422 and changes nothing', async () => {
    const id = await link();
    const before = await rows();
    for (const path of ['', '/a/../b', '/a?utm=1', '/a#x', 'x'.repeat(2049)]) {
      const res = await patch(alice, id, { path });
      expect(res.statusCode, path).toBe(422);
      expect(problem(res).errors[0]!.path).toBe('/body/path');
    }
    expect(await rows()).toEqual(before);
  });

  it('answers 409 when the path is taken on that domain, and allows it on another', async () => {
    const taken = await link({ path: '/taken' });
    const id = await link();
    const elsewhere = await link({ path: '/taken', tenantDomainId: null });
    const before = await rows();
    const res = await patch(alice, id, { path: '/taken/' });
    expect(res.statusCode).toBe(409);
    expect(problem(res)).toMatchObject({ code: 'page_link_path_taken', conflictingPageLinkId: taken });
    // moving onto the domain where the path is taken is the same conflict
    const move = await patch(alice, elsewhere, { tenantDomainId: domain });
    expect(move.statusCode).toBe(409);
    expect(problem(move).code).toBe('page_link_path_taken');
    expect(await rows()).toEqual(before);

    expect((await patch(alice, id, { path: '/taken', tenantDomainId: otherDomain })).statusCode).toBe(200);
    // a link keeping its own path is no conflict
    expect((await patch(alice, taken, { path: '/taken' })).statusCode).toBe(200);
  });

  it('refuses a target that is not an active audience of the tenant (422) and changes nothing', async () => {
    const id = await link();
    const archived = (await makeAudience(alice.scope, t.clock)).audienceId;
    await archiveAudience(alice.scope, t.clock, archived);
    const before = await rows();
    for (const target of [
      { targetType: 'audience', audienceId: bobsAudience },
      { targetType: 'audience', audienceId: 'audience_01jb0000000000000000000000' },
      { targetType: 'audience', audienceId: archived },
    ]) {
      const res = await patch(alice, id, { target });
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors[0]!.path).toBe('/body/target/audienceId');
    }
    for (const target of [{ targetType: 'page', audienceId: audience }, { audienceId: audience }, 'audience']) {
      const res = await patch(alice, id, { target });
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors[0]!.path).toMatch(/^\/body\/target/);
    }
    expect(await rows()).toEqual(before);
  });

  it('refuses an audience whose page is deleted, as an unknown one (422), on PATCH and POST alike', async () => {
    const id = await link();
    const onDeletedPage = await makeAudience(alice.scope, t.clock);
    await alice.scope
      .updateTable('pages')
      .set({ deleted_at: t.clock.now().toISOString() })
      .where('id', '=', onDeletedPage.pageId)
      .execute();
    const before = await rows();
    const target = { targetType: 'audience', audienceId: onDeletedPage.audienceId };
    const patched = await patch(alice, id, { target });
    const created = await t.request(alice, {
      method: 'POST',
      url: '/v0/page_links',
      payload: { path: '/on-a-deleted-page', tenantDomainId: domain, target },
    });
    for (const res of [patched, created]) {
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors).toEqual([
        { path: '/body/target/audienceId', message: 'must be the id of one of your audiences' },
      ]);
    }
    expect(await rows()).toEqual(before);
    // (a link made before its page was deleted is not served either: site.test.ts)
  });

  it('refuses a tenantDomainId that is not one of the tenant’s domains (422)', async () => {
    const id = await link();
    const before = await rows();
    for (const tenantDomainId of [bobsDomain, 'domain_01jb0000000000000000000000', '']) {
      const res = await patch(alice, id, { tenantDomainId });
      expect(res.statusCode).toBe(422);
      expect(problem(res).errors[0]!.path).toBe('/body/tenantDomainId');
    }
    expect(await rows()).toEqual(before);
  });

  it('answers 404 for another tenant’s link, a deleted link and an unknown id', async () => {
    const { pageLinkId: bobs } = await createPageLink(bob.scope, t.clock, {
      tenantDomainId: null,
      path: '/b',
      target: { targetType: 'audience', audienceId: bobsAudience },
    });
    const deleted = await link();
    await alice.scope
      .updateTable('page_links')
      .set({ deleted_at: t.clock.now().toISOString() })
      .where('id', '=', deleted)
      .execute();
    const before = await rows();
    for (const id of [bobs, deleted, 'link_01jb0000000000000000000000']) {
      const res = await patch(alice, id, { path: '/stolen' });
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect(await rows()).toEqual(before);
    const bobRow = await bob.scope
      .selectFrom('page_links')
      .select('path')
      .where('id', '=', bobs)
      .executeTakeFirstOrThrow();
    expect(bobRow.path).toBe('/b');
  });
});

describe('POST /v0/page_links (extension)', () => {
  const post = (tenant: Tenant, body: unknown) =>
    t.request(tenant, { method: 'POST', url: '/v0/page_links', payload: body as object });

  it('creates a link with the same normalization as PATCH; no tenantDomainId means every domain', async () => {
    const res = await post(alice, { path: 'deals//acme/', target: { targetType: 'audience', audienceId: audience } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      pageLinkId: expect.stringMatching(/^link_/),
      tenantDomainId: null,
      path: '/deals/acme',
      target: { targetType: 'audience', audienceId: audience },
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
      deletedAt: null,
    });
    const onDomain = await post(alice, {
      path: '/deals/acme',
      tenantDomainId: domain,
      target: { targetType: 'audience', audienceId: audience },
    });
    expect(onDomain.statusCode).toBe(201);
    const taken = await post(alice, {
      path: '/deals/acme/',
      target: { targetType: 'audience', audienceId: otherAudience },
    });
    expect(taken.statusCode).toBe(409);
    expect(problem(taken)).toMatchObject({
      code: 'page_link_path_taken',
      conflictingPageLinkId: res.json().pageLinkId,
    });
  });

  it('refuses bad input with 422 at the offending field and writes nothing', async () => {
    const before = await rows();
    const target = { targetType: 'audience', audienceId: audience };
    for (const [body, path] of [
      [{ path: '/a/../b', target }, '/body/path'],
      [{ path: '/_ap/collect', target }, '/body/path'],
      [{ path: '/%5Fap', target }, '/body/path'],
      [{ path: '/x', tenantDomainId: bobsDomain, target }, '/body/tenantDomainId'],
      [{ path: '/x', target: { targetType: 'audience', audienceId: bobsAudience } }, '/body/target/audienceId'],
      [{ path: '/x' }, '/body/target'],
      [{ target }, '/body/path'],
      [{ path: '/x', target, extra: true }, '/body/extra'],
    ] as const) {
      const res = await post(alice, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(problem(res).errors.map((e) => e.path)).toContain(path);
    }
    expect(await rows()).toEqual(before);
  });
});

describe('page links: concurrent writes to one free path', () => {
  it('creates one link; every loser gets page_link_path_taken naming the winner', async () => {
    const results = await Promise.all(
      Array.from({ length: 16 }, () =>
        t.request(alice, {
          method: 'POST',
          url: '/v0/page_links',
          payload: {
            path: '/race/create',
            tenantDomainId: domain,
            target: { targetType: 'audience', audienceId: audience },
          },
        }),
      ),
    );
    const created = results.filter((r) => r.statusCode === 201);
    expect(created).toHaveLength(1);
    const winner = created[0]!.json().pageLinkId;
    for (const res of results.filter((r) => r.statusCode !== 201)) {
      expect(res.statusCode).toBe(409);
      expect(problem(res)).toMatchObject({ code: 'page_link_path_taken', conflictingPageLinkId: winner });
    }
  });

  it('moves one link onto the path; every loser gets page_link_path_taken naming the winner', async () => {
    const movers = await Promise.all(Array.from({ length: 16 }, () => link()));
    const results = await Promise.all(movers.map((id) => patch(alice, id, { path: '/race/patch' })));
    const moved = results.filter((r) => r.statusCode === 200);
    expect(moved).toHaveLength(1);
    const winner = moved[0]!.json().pageLinkId;
    for (const res of results.filter((r) => r.statusCode !== 200)) {
      expect(res.statusCode).toBe(409);
      expect(problem(res)).toMatchObject({ code: 'page_link_path_taken', conflictingPageLinkId: winner });
    }
  });
});

describe('GET and DELETE /v0/page_links (extension)', () => {
  it('lists live links newest first, filtered by audience; a deleted link is gone everywhere', async () => {
    const carol = await t.createTenant('Carol');
    const a = (await makeAudience(carol.scope, t.clock)).audienceId;
    const b = (await makeAudience(carol.scope, t.clock)).audienceId;
    const make = async (path: string, audienceId: string) =>
      (
        await t.request(carol, {
          method: 'POST',
          url: '/v0/page_links',
          payload: { path, target: { targetType: 'audience', audienceId } },
        })
      ).json().pageLinkId as string;
    const l1 = await make('/one', a);
    const l2 = await make('/two', b);
    const l3 = await make('/three', a);
    const all = await t.request(carol, { method: 'GET', url: '/v0/page_links' });
    expect(all.json()).toMatchObject({ totalCount: 3, hasMore: false });
    expect(all.json().items.map((l: { pageLinkId: string }) => l.pageLinkId)).toEqual([l3, l2, l1]);
    const ofA = await t.request(carol, { method: 'GET', url: `/v0/page_links?audienceId=${a}&limit=1` });
    expect(ofA.json()).toMatchObject({ totalCount: 2, hasMore: true });
    expect(ofA.json().items[0].pageLinkId).toBe(l3);

    const del = await t.request(carol, { method: 'DELETE', url: `/v0/page_links/${l3}` });
    expect(del.statusCode).toBe(204);
    expect((await t.request(carol, { method: 'DELETE', url: `/v0/page_links/${l3}` })).statusCode).toBe(404);
    expect((await t.request(carol, { method: 'PATCH', url: `/v0/page_links/${l3}`, payload: {} })).statusCode).toBe(
      404,
    );
    const after = await t.request(carol, { method: 'GET', url: `/v0/page_links?audienceId=${a}` });
    expect(after.json().items.map((l: { pageLinkId: string }) => l.pageLinkId)).toEqual([l1]);
    // its path is free again
    expect(await make('/three', b)).toMatch(/^link_/);
    // another tenant sees none of it and cannot delete it
    expect((await t.request(bob, { method: 'GET', url: `/v0/page_links?audienceId=${a}` })).json().totalCount).toBe(0);
    expect((await t.request(bob, { method: 'DELETE', url: `/v0/page_links/${l1}` })).statusCode).toBe(404);
  });
});
