import { describe, expect, it } from 'vitest';
import { drainGeneration } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { makePerson } from '../../../test/factories/persons.js';
import { problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const json = { 'content-type': 'application/json' };
const create = (tenant: Tenant | null, pageId: string, payload: unknown) =>
  t.request(tenant, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences`,
    headers: json,
    payload: JSON.stringify(payload),
  });
const get = (tenant: Tenant | null, pageId: string, audienceId: string) =>
  t.request(tenant, { method: 'GET', url: `/v0/pages/${pageId}/audiences/${audienceId}` });
const patch = (tenant: Tenant, pageId: string, audienceId: string, payload: unknown) =>
  t.request(tenant, {
    method: 'PATCH',
    url: `/v0/pages/${pageId}/audiences/${audienceId}`,
    headers: json,
    payload: JSON.stringify(payload),
  });
const archive = (tenant: Tenant, pageId: string, audienceId: string, payload: unknown = {}) =>
  t.request(tenant, {
    method: 'POST',
    url: `/v0/pages/${pageId}/audiences/${audienceId}/archive`,
    headers: json,
    payload: JSON.stringify(payload),
  });

async function createAccountForTest(tenant: Tenant, body: { domain: string; name: string }): Promise<string> {
  const res = await t.request(tenant, { method: 'POST', url: '/v0/accounts', payload: body });
  if (res.statusCode !== 201) throw new Error(`account: ${res.body}`);
  return res.json().accountId;
}

describe('POST /v0/pages/{page_id}/audiences (extension)', () => {
  it('creates an audience for a person: a published first version at once, the requested one queued', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const personId = await makePerson(alice.scope, t.clock, { name: 'Sam Lee', email: 'sam@globex.example' });
    const res = await create(alice, pageId, { personId, supplementaryContext: 'Three new regions.' });
    expect(res.statusCode).toBe(201);
    const audience = res.json();
    expect(audience).toMatchObject({
      pageId,
      personId,
      accountId: null,
      status: 'queued',
      computedName: expect.stringMatching(/^Sam Lee · globex\.example$/),
      customName: null,
      supplementaryContext: 'Three new regions.',
      archivedAt: null,
      publishedVersion: { versionNumber: 1, status: 'published' },
      latestVersion: { versionNumber: 2, status: 'queued', supplementaryContext: 'Three new regions.' },
    });
    // Random and unguessable: 128 bits, nothing of the person's name in it.
    expect(audience.personRouteKey).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(audience.personRouteKey.toLowerCase()).not.toContain('sam');
    const other = (await create(alice, pageId, { personId })).json();
    expect(other.personRouteKey).not.toBe(audience.personRouteKey);
    expect(t.notified).toContain('audience-versions');

    // The page counts it; the list shows it; GET answers the same audience.
    const page = await t.request(alice, { method: 'GET', url: `/v0/pages/${pageId}/audiences` });
    expect(page.json().totalCount).toBe(2);
    const got = await get(alice, pageId, audience.audienceId);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(audience);

    // The worker makes the requested version; on a draft page it waits as a draft.
    await drainGeneration(t.database, t.clock);
    const after = (await get(alice, pageId, audience.audienceId)).json();
    expect(after.status).toBe('draft');
    expect(after.latestVersion).toMatchObject({ versionNumber: 2, status: 'draft' });
    expect(after.publishedVersion.versionNumber).toBe(1);
  });

  it('on a published page the generated version goes live', async () => {
    const pageId = await makePage(alice.scope, t.clock, { status: 'published' });
    const res = await create(alice, pageId, { customName: 'Everyone at trade shows' });
    expect(res.statusCode).toBe(201);
    await drainGeneration(t.database, t.clock);
    const after = (await get(alice, pageId, res.json().audienceId)).json();
    expect(after).toMatchObject({ status: 'published', publishedVersion: { versionNumber: 2 } });
  });

  it('creates one for an account, and a named segment with customName', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const accountId = await createAccountForTest(alice, { domain: 'initech.example', name: 'Initech' });
    const forAccount = await create(alice, pageId, { accountId });
    expect(forAccount.statusCode).toBe(201);
    expect(forAccount.json()).toMatchObject({ accountId, personId: null, computedName: 'Initech' });

    const segment = await create(alice, pageId, {
      customName: 'Finance leaders',
      personRouteKey: 'finance-leaders',
      isNewPageAgent: true,
      actionUrlOverride: 'https://example.com/finance',
      actionFormIdOverride: 'form_1',
      actionFormInstructionsOverride: 'Ask for the budget.',
      metadataOverride: { title: 'For finance', description: null },
    });
    expect(segment.statusCode).toBe(201);
    expect(segment.json()).toMatchObject({
      computedName: 'Finance leaders',
      customName: 'Finance leaders',
      effectiveName: 'Finance leaders',
      personRouteKey: 'finance-leaders',
      isNewPageAgent: true,
      actionUrlOverride: 'https://example.com/finance',
      actionFormIdOverride: 'form_1',
      actionFormInstructionsOverride: 'Ask for the budget.',
      metadataOverride: { title: 'For finance' },
      effectiveMetadata: { title: 'For finance', ogImageUrl: 'https://cdn.example.com/og.png' },
    });
  });

  it('refuses bad input with a problem at the field, writing nothing', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const personId = await makePerson(alice.scope, t.clock);
    const bobsPerson = await makePerson(bob.scope, t.clock);
    const accountId = await createAccountForTest(alice, { domain: 'umbrella.example', name: 'Umbrella' });
    await create(alice, pageId, { customName: 'Taken', personRouteKey: 'taken-key' });
    const before = await rowCounts(alice);
    const cases: [unknown, number, string, string][] = [
      [{}, 422, 'validation_failed', '/body/customName'],
      [{ personId, accountId }, 422, 'validation_failed', '/body/accountId'],
      [{ personId: bobsPerson }, 422, 'validation_failed', '/body/personId'],
      [{ accountId: 'account_00000000000000000000000000' }, 422, 'validation_failed', '/body/accountId'],
      [{ customName: 'x', personRouteKey: '..' }, 422, 'validation_failed', '/body/personRouteKey'],
      [{ customName: 'x', personRouteKey: 'a/b' }, 422, 'validation_failed', '/body/personRouteKey'],
      [{ customName: 'x', personRouteKey: 'k'.repeat(129) }, 422, 'validation_failed', '/body/personRouteKey'],
      [{ customName: 'x', personRouteKey: 'taken-key' }, 409, 'route_key_taken', '/body/personRouteKey'],
      [{ customName: 'x'.repeat(256) }, 422, 'validation_failed', '/body/customName'],
      [
        { customName: 'x', supplementaryContext: 'x'.repeat(10_001) },
        422,
        'validation_failed',
        '/body/supplementaryContext',
      ],
      [{ customName: 'x', unknown: 1 }, 422, 'validation_failed', '/body'],
    ];
    for (const [payload, status, code, path] of cases) {
      const res = await create(alice, pageId, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      const body = problem(res);
      expect(body.code).toBe(code);
      expect(body.errors.map((e) => e.path).join(' ')).toContain(path);
    }
    expect(await rowCounts(alice)).toEqual(before);
  });

  it('404s for another tenant’s or an unknown page, 409s on an archived page, 401s without a key', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    expect((await create(bob, pageId, { customName: 'x' })).statusCode).toBe(404);
    expect((await create(alice, 'page_00000000000000000000000000', { customName: 'x' })).statusCode).toBe(404);
    expect((await create(null, pageId, { customName: 'x' })).statusCode).toBe(401);
    const archivedPage = await makePage(alice.scope, t.clock, { status: 'archived' });
    const res = await create(alice, archivedPage, { customName: 'x' });
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('page_archived');
  });

  it('an idempotencyKey makes one audience however often it is sent', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const payload = { customName: 'Retried', idempotencyKey: 'create-1' };
    const first = await create(alice, pageId, payload);
    const again = await create(alice, pageId, payload);
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().audienceId).toBe(first.json().audienceId);
    const list = await t.request(alice, { method: 'GET', url: `/v0/pages/${pageId}/audiences` });
    expect(list.json().totalCount).toBe(1);
    const changed = await create(alice, pageId, { ...payload, customName: 'Other' });
    expect(changed.statusCode).toBe(422);
    expect(problem(changed).code).toBe('idempotency_key_reused');
  });
});

describe('GET, PATCH and archive of one audience (extension)', () => {
  it('GET is 404 under another page, for another tenant, and 401 without a key', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const otherPage = await makePage(alice.scope, t.clock);
    const { audienceId } = (await create(alice, pageId, { customName: 'A' })).json();
    expect((await get(alice, otherPage, audienceId)).statusCode).toBe(404);
    expect((await get(bob, pageId, audienceId)).statusCode).toBe(404);
    expect((await get(null, pageId, audienceId)).statusCode).toBe(401);
  });

  it('PATCH changes the name at once and the content for the next version, queueing nothing', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const created = (
      await create(alice, pageId, { customName: 'Before', metadataOverride: { title: 'T', description: 'D' } })
    ).json();
    await drainGeneration(t.database, t.clock);
    const res = await patch(alice, pageId, created.audienceId, {
      customName: 'After',
      supplementaryContext: 'New context',
      isNewPageAgent: true,
      metadataOverride: { description: null, keywords: ['a'] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      customName: 'After',
      effectiveName: 'After',
      supplementaryContext: 'New context',
      isNewPageAgent: true,
      metadataOverride: { title: 'T', keywords: ['a'] },
      latestVersion: { versionNumber: 2, supplementaryContext: null, isNewPageAgent: false },
    });
    expect(res.json().metadataOverride).not.toHaveProperty('description');
    // The next version carries the new content.
    const version = await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences/${created.audienceId}/versions`,
      headers: json,
      payload: '{}',
    });
    expect(version.json()).toMatchObject({
      versionNumber: 3,
      supplementaryContext: 'New context',
      isNewPageAgent: true,
    });
    // An empty PATCH changes nothing.
    const same = await patch(alice, pageId, created.audienceId, {});
    expect(same.statusCode).toBe(200);
    expect(same.json().customName).toBe('After');
  });

  it('PATCH refuses bad fields, other tenants and archived audiences', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const { audienceId } = (await create(alice, pageId, { customName: 'A' })).json();
    for (const payload of [{ customName: '' }, { personId: 'x' }, { isNewPageAgent: 'yes' }, []]) {
      const res = await patch(alice, pageId, audienceId, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
    }
    expect((await patch(bob, pageId, audienceId, { customName: 'B' })).statusCode).toBe(404);
    await archive(alice, pageId, audienceId);
    const res = await patch(alice, pageId, audienceId, { customName: 'B' });
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('audience_archived');
  });

  it('archive sets archivedAt, is idempotent, and restore brings back the status', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const { audienceId } = (await create(alice, pageId, { customName: 'A' })).json();
    const res = await archive(alice, pageId, audienceId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'archived', archivedAt: t.clock.now().toISOString() });
    t.clock.advance(1000);
    const again = await archive(alice, pageId, audienceId);
    expect(again.json().archivedAt).toBe(res.json().archivedAt);
    expect((await archive(alice, pageId, audienceId, { x: 1 })).statusCode).toBe(422);
    expect((await archive(bob, pageId, audienceId)).statusCode).toBe(404);
    const restored = await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences/${audienceId}/restore`,
      headers: json,
      payload: '{}',
    });
    expect(restored.json()).toMatchObject({ status: 'queued', archivedAt: null });
  });
});
