import { beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { problem, useTestApp, type Tenant } from '../../../test/harness.js';
import { archiveAudience } from '../audiences/index.js';
import { createPageLink, createTenantDomain, normalizePath } from './page-links.service.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

let audience: string;
let otherAudience: string;
let domain: string;
let otherDomain: string;
let bobsAudience: string;
let bobsDomain: string;

beforeAll(async () => {
  audience = (await makeAudience(alice.scope, t.clock)).audienceId;
  otherAudience = (await makeAudience(alice.scope, t.clock)).audienceId;
  domain = await createTenantDomain(alice.scope, t.clock, 'go.alice.example');
  otherDomain = await createTenantDomain(alice.scope, t.clock, 'meet.alice.example');
  bobsAudience = (await makeAudience(bob.scope, t.clock)).audienceId;
  bobsDomain = await createTenantDomain(bob.scope, t.clock, 'go.bob.example');
});

let n = 0;
async function link(overrides: { path?: string; tenantDomainId?: string | null } = {}) {
  return createPageLink(alice.scope, t.clock, {
    tenantDomainId: overrides.tenantDomainId === undefined ? domain : overrides.tenantDomainId,
    path: overrides.path ?? `/link-${++n}`,
    audienceId: audience,
  });
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
    const bobs = await createPageLink(bob.scope, t.clock, {
      tenantDomainId: null,
      path: '/b',
      audienceId: bobsAudience,
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
