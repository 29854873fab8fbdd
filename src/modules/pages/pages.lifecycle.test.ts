import { describe, expect, it } from 'vitest';
import { drainGeneration, makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';

/**
 * The life of a page over the API (issue 23, docs/api.md "The life of a page"): create, get,
 * publish, archive, restore, delete; refusals are problems that change nothing; the next visit
 * after a transition sees it (the page cache is told in the transaction).
 */

const t = useTestApp({ tenants: ['Alice', 'Bob'], config: { PAGE_MISSES_PER_MINUTE: '0' } });
const [alice, bob] = t.tenants;

const create = (tenant: Tenant | null, body: object, headers: Record<string, string> = {}) =>
  t.request(tenant, { method: 'POST', url: '/v0/pages', payload: body, headers });
const get = (tenant: Tenant | null, pageId: string) => t.request(tenant, { method: 'GET', url: `/v0/pages/${pageId}` });
const move = (tenant: Tenant | null, pageId: string, verb: 'publish' | 'archive' | 'restore', body: unknown = {}) =>
  t.request(tenant, { method: 'POST', url: `/v0/pages/${pageId}/${verb}`, payload: body as object });
const remove = (tenant: Tenant | null, pageId: string) =>
  t.request(tenant, { method: 'DELETE', url: `/v0/pages/${pageId}` });

const minimal = { name: 'Spring campaign', pageContext: 'We sell umbrellas to offices.', pageType: 'outbound' };

async function created(tenant: Tenant, body: object = minimal) {
  const res = await create(tenant, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { pageId: string; status: string; [k: string]: unknown };
}

/** The refusal is a 4xx problem with `code`, and the tenant's rows are as they were. */
async function refusedWithoutChange(tenant: Tenant, send: () => Promise<{ statusCode: number }>, code: string) {
  const before = await rowCounts(tenant, ['pages', 'audience_versions', 'idempotency_keys', 'serving_revisions']);
  const snapshot = await tenant.scope.selectFrom('pages').selectAll().orderBy('id').execute();
  const res = (await send()) as Parameters<typeof problem>[0];
  expect(res.statusCode).toBeGreaterThanOrEqual(400);
  expect(res.statusCode).toBeLessThan(500);
  expect(problem(res).code).toBe(code);
  expect(await rowCounts(tenant, ['pages', 'audience_versions', 'idempotency_keys', 'serving_revisions'])).toEqual(
    before,
  );
  expect(await tenant.scope.selectFrom('pages').selectAll().orderBy('id').execute()).toEqual(snapshot);
  return problem(res);
}

describe('POST /v0/pages', () => {
  it('creates a draft page whose title defaults to its name, found by GET, lists, search and counts', async () => {
    const tenant = await t.createTenant();
    const page = await created(tenant);
    expect(page).toMatchObject({
      pageId: expect.stringMatching(/^page_[a-z0-9]{26}$/),
      name: 'Spring campaign',
      title: 'Spring campaign',
      pageContext: minimal.pageContext,
      pageType: 'outbound',
      status: 'draft',
      brandId: 'brand_default',
      actions: [],
      actionCardWidgets: [],
      footerLinks: [],
      scripts: [],
      audiencesCount: 0,
      archivedAt: null,
      deletedAt: null,
      metadata: {},
    });
    expect(page).not.toHaveProperty('headerActionId');
    expect((await get(tenant, page.pageId)).json()).toEqual(page);
    const list = (await t.request(tenant, { method: 'GET', url: '/v0/pages' })).json();
    expect(list).toMatchObject({ totalCount: 1, items: [page] });
    const search = (await t.request(tenant, { method: 'GET', url: '/v0/pages/search?query=spring' })).json();
    expect(search.items).toEqual([{ pageId: page.pageId, name: 'Spring campaign', audiencesCount: 0 }]);
  });

  it('accepts every field PATCH accepts, applied the way PATCH applies them', async () => {
    const page = await created(alice, {
      ...minimal,
      title: 'Umbrellas for {{company}}',
      brandId: 'brand_rain',
      actions: [
        {
          actionId: 'book',
          purpose: 'Book',
          buttonTitle: 'Book a call',
          actionType: 'calendar',
          url: 'https://x.example/b',
        },
        { purpose: 'Read', buttonTitle: 'Read', actionType: 'link', url: 'https://x.example/r' },
      ],
      headerActionId: 'book',
      actionCardWidgets: [{ type: 'logos', title: 'Trusted by', logos: [] }],
      footerLinks: [{ id: 'f', title: 'Legal', links: [{ id: 'l', text: 'Terms', url: 'https://x.example/t' }] }],
      scripts: [{ name: 'analytics', description: 'none', content: 'void 0', enabled: false }],
      metadata: { title: 'Umbrellas', keywords: ['rain'], description: null },
    });
    expect(page).toMatchObject({
      title: 'Umbrellas for {{company}}',
      brandId: 'brand_rain',
      headerActionId: 'book',
      actions: [
        { actionId: 'book', actionIndex: 0, buttonTitle: 'Book a call' },
        { actionId: expect.stringMatching(/^action_/), actionIndex: 1 },
      ],
      metadata: { title: 'Umbrellas', keywords: ['rain'] },
    });
    expect(page.metadata).not.toHaveProperty('description');
  });

  it('refuses what PATCH refuses (one code path), with nothing written', async () => {
    const tenant = await t.createTenant();
    const cases: [object, string, string][] = [
      [{ pageContext: 'x', pageType: 'inbound' }, 'validation_failed', '/body'],
      [{ ...minimal, name: '' }, 'validation_failed', '/body/name'],
      [{ ...minimal, pageType: 'landing' }, 'validation_failed', '/body/pageType'],
      [{ ...minimal, status: 'published' }, 'validation_failed', '/body'],
      [{ ...minimal, headerActionId: 'nope' }, 'validation_failed', '/body/headerActionId'],
      [
        {
          ...minimal,
          actions: [
            { actionId: 'a', purpose: 'p', buttonTitle: 'b', actionType: 'link', url: 'https://x.example' },
            { actionId: 'a', purpose: 'p', buttonTitle: 'b', actionType: 'link', url: 'https://x.example' },
          ],
        },
        'validation_failed',
        '/body/actions/1/actionId',
      ],
      [{ ...minimal, metadata: { ogImageUrl: 'https://x.example/i.png' } }, 'validation_failed', '/body/metadata'],
      // Each field within its limit, the page over 256 KiB: the same rule as PATCH.
      [{ ...minimal, pageContext: '€'.repeat(95_000) }, 'page_too_large', '/body'],
    ];
    for (const [body, code, path] of cases) {
      const p = await refusedWithoutChange(tenant, () => create(tenant, body), code);
      expect(
        p.errors.map((e) => e.path).some((e) => e.startsWith(path)),
        JSON.stringify(p),
      ).toBe(true);
    }
    expect((await t.request(tenant, { method: 'GET', url: '/v0/pages' })).json().totalCount).toBe(0);
  });

  it('answers a retry with the same idempotencyKey with the first page, and refuses the key with another body', async () => {
    const tenant = await t.createTenant();
    const body = { ...minimal, idempotencyKey: 'create-spring' };
    const first = await create(tenant, body);
    expect(first.statusCode).toBe(201);
    const again = await create(tenant, body);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    // Concurrent repeats also make one page.
    const racing = await Promise.all([1, 2, 3].map(() => create(tenant, { ...minimal, idempotencyKey: 'race' })));
    expect(new Set(racing.map((r) => r.json().pageId)).size).toBe(1);
    await refusedWithoutChange(
      tenant,
      () => create(tenant, { ...body, name: 'Another name' }),
      'idempotency_key_reused',
    );
    expect((await t.request(tenant, { method: 'GET', url: '/v0/pages' })).json().totalCount).toBe(2);
    // The key is the tenant's: Bob's same key makes Bob's page.
    const bobs = await create(bob, body);
    expect(bobs.statusCode).toBe(201);
    expect(bobs.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('the page status table', () => {
  it('draft → published → archived → restore → published, and every other move a 409 that changes nothing', async () => {
    const tenant = await t.createTenant();
    const { pageId } = await created(tenant);

    await refusedWithoutChange(tenant, () => move(tenant, pageId, 'restore'), 'page_not_archived');
    t.clock.advance(1000);
    const published = await move(tenant, pageId, 'publish');
    expect(published.statusCode).toBe(200);
    expect(published.json()).toMatchObject({ status: 'published', archivedAt: null });
    await refusedWithoutChange(tenant, () => move(tenant, pageId, 'publish'), 'page_already_published');
    await refusedWithoutChange(tenant, () => move(tenant, pageId, 'restore'), 'page_not_archived');

    t.clock.advance(1000);
    const archived = await move(tenant, pageId, 'archive');
    expect(archived.statusCode).toBe(200);
    expect(archived.json()).toMatchObject({ status: 'archived', archivedAt: t.clock.now().toISOString() });
    await refusedWithoutChange(tenant, () => move(tenant, pageId, 'archive'), 'page_archived');
    await refusedWithoutChange(tenant, () => move(tenant, pageId, 'publish'), 'page_archived');
    await refusedWithoutChange(
      tenant,
      () => t.request(tenant, { method: 'PATCH', url: `/v0/pages/${pageId}`, payload: { name: 'x' } }),
      'page_archived',
    );
    // An archived page is still listed and found (docs/api.md, Pages).
    expect((await get(tenant, pageId)).json().status).toBe('archived');

    const restored = await move(tenant, pageId, 'restore');
    expect(restored.statusCode).toBe(200);
    expect(restored.json()).toMatchObject({ status: 'published', archivedAt: null });
  });

  it('restores a page archived as a draft to draft, and one archived before the status was kept to draft', async () => {
    const { pageId } = await created(alice);
    expect((await move(alice, pageId, 'archive')).json().status).toBe('archived');
    expect((await move(alice, pageId, 'restore')).json()).toMatchObject({ status: 'draft', archivedAt: null });

    const legacy = await makePage(alice.scope, t.clock, { status: 'archived' });
    expect((await move(alice, legacy, 'restore')).json().status).toBe('draft');
  });

  it('lets exactly one of concurrent identical moves through; the others are 409s', async () => {
    const { pageId } = await created(alice);
    for (const verb of ['publish', 'archive', 'restore'] as const) {
      const answers = await Promise.all([1, 2, 3, 4].map(() => move(alice, pageId, verb)));
      expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409]);
    }
    expect((await get(alice, pageId)).json().status).toBe('published');
  });

  it('restoring a published page publishes what was generated while it was archived', async () => {
    const { pageId } = await created(alice);
    await move(alice, pageId, 'publish');
    const audience = await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences`,
      payload: { customName: 'Everyone' },
    });
    expect(audience.statusCode).toBe(201);
    const { audienceId, latestVersion } = audience.json();
    await move(alice, pageId, 'archive');
    await drainGeneration(t.database, t.clock);
    const url = `/v0/pages/${pageId}/audiences/${audienceId}`;
    expect((await t.request(alice, { method: 'GET', url })).json().latestVersion.status).toBe('draft');
    expect((await move(alice, pageId, 'restore')).json().status).toBe('published');
    expect((await t.request(alice, { method: 'GET', url })).json()).toMatchObject({
      status: 'published',
      publishedVersion: { versionId: latestVersion.versionId },
    });
  });

  it('takes exactly {} as the body of a transition', async () => {
    const { pageId } = await created(alice);
    for (const body of [{ force: true }, [], [{}]]) {
      await refusedWithoutChange(alice, () => move(alice, pageId, 'publish', body), 'validation_failed');
    }
    expect((await get(alice, pageId)).json().status).toBe('draft');
  });

  it('publishing a page publishes its audiences’ drafts', async () => {
    const pageId = await makePage(alice.scope, t.clock, { status: 'draft' });
    const { audienceId, versionId: first } = await makeAudience(alice.scope, t.clock, { pageId });
    const queued = await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
      payload: {},
    });
    expect(queued.statusCode).toBe(201);
    await drainGeneration(t.database, t.clock);
    const audience = async () =>
      (await t.request(alice, { method: 'GET', url: `/v0/pages/${pageId}/audiences/${audienceId}` })).json();
    // On a draft page a generated version waits as a draft.
    expect(await audience()).toMatchObject({
      status: 'draft',
      publishedVersion: { versionId: first },
      latestVersion: { versionId: queued.json().versionId, status: 'draft' },
    });
    expect((await move(alice, pageId, 'publish')).statusCode).toBe(200);
    expect(await audience()).toMatchObject({
      status: 'published',
      publishedVersion: { versionId: queued.json().versionId, status: 'published' },
    });
  });
});

describe('DELETE /v0/pages/{page_id}', () => {
  it('answers 204 and the page is gone everywhere: 404, lists, search, counts', async () => {
    const tenant = await t.createTenant();
    const kept = await created(tenant, { ...minimal, name: 'Kept umbrella' });
    const { pageId } = await created(tenant, { ...minimal, name: 'Gone umbrella' });
    await makeAudience(tenant.scope, t.clock, { pageId });
    const res = await remove(tenant, pageId);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const row = await tenant.scope.selectFrom('pages').select('deleted_at').where('id', '=', pageId).executeTakeFirst();
    expect(row?.deleted_at).toEqual(expect.any(String));

    for (const send of [
      () => get(tenant, pageId),
      () => remove(tenant, pageId),
      () => move(tenant, pageId, 'publish'),
      () => move(tenant, pageId, 'archive'),
      () => move(tenant, pageId, 'restore'),
      () => t.request(tenant, { method: 'PATCH', url: `/v0/pages/${pageId}`, payload: { name: 'x' } }),
      () => t.request(tenant, { method: 'GET', url: `/v0/pages/${pageId}/audiences` }),
    ]) {
      await refusedWithoutChange(tenant, send, 'not_found');
    }
    const list = (await t.request(tenant, { method: 'GET', url: '/v0/pages' })).json();
    expect(list).toMatchObject({ totalCount: 1, items: [{ pageId: kept.pageId }] });
    const search = (await t.request(tenant, { method: 'GET', url: '/v0/pages/search?query=umbrella' })).json();
    expect(search.items.map((p: { pageId: string }) => p.pageId)).toEqual([kept.pageId]);
  });

  it('leaves a version queued for its audiences to fail: it ends cancelled, never published', async () => {
    const { pageId } = await created(alice);
    const audience = await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences`,
      payload: { customName: 'Everyone' },
    });
    const queued = audience.json().latestVersion.versionId;
    expect((await remove(alice, pageId)).statusCode).toBe(204);
    for (let i = 0; i < 10; i++) {
      await drainGeneration(t.database, t.clock);
      t.clock.advance(3_600_000);
    }
    const version = await alice.scope
      .selectFrom('audience_versions')
      .select(['status', 'failure_reason'])
      .where('id', '=', queued)
      .executeTakeFirstOrThrow();
    expect(version.status).toBe('cancelled');
  });

  it('deletes an archived page too', async () => {
    const { pageId } = await created(alice);
    await move(alice, pageId, 'archive');
    expect((await remove(alice, pageId)).statusCode).toBe(204);
    expect((await get(alice, pageId)).statusCode).toBe(404);
  });
});

describe('tenancy and keys', () => {
  it('answers 404 for another tenant’s, unknown and malformed ids, changing nothing', async () => {
    const { pageId: bobs } = await created(bob);
    for (const id of [bobs, 'page_01h00000000000000000000000', 'not-an-id']) {
      for (const send of [
        () => get(alice, id),
        () => move(alice, id, 'publish'),
        () => move(alice, id, 'archive'),
        () => move(alice, id, 'restore'),
        () => remove(alice, id),
      ]) {
        await refusedWithoutChange(bob, send, 'not_found');
      }
    }
    expect((await get(bob, bobs)).json()).toMatchObject({ status: 'draft', deletedAt: null });
  });

  it('answers 401 without a key, before anything else, writing nothing', async () => {
    const { pageId } = await created(alice);
    for (const send of [
      () => create(null, minimal),
      () => get(null, pageId),
      () => move(null, pageId, 'publish'),
      () => move(null, pageId, 'archive'),
      () => move(null, pageId, 'restore'),
      () => remove(null, pageId),
    ]) {
      await refusedWithoutChange(alice, send, 'missing_api_key');
    }
    expect((await get(alice, pageId)).json().status).toBe('draft');
  });
});

describe('links: the next visit sees the transition (page cache invalidated in the transaction)', () => {
  const h1 = (html: string) => /<h1>(.*?)<\/h1>/.exec(html)?.[1];

  /** A page with an audience linked at `path` on `host`, visited twice (so it is cached). */
  async function servedPage(host: string, title: string, status: 'draft' | 'published' = 'published') {
    const pageId = await makePage(alice.scope, t.clock, { status, title });
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Acme' });
    await linkOnHost(t, alice, { hostname: host, path: '/p', audienceId });
    expect(h1((await visit(t, host, '/p')).body)).toBe(title);
    expect(h1((await visit(t, host, '/p')).body)).toBe(title);
    return { pageId, audienceId };
  }

  it('archive → 410 at once; restore → served again at once', async () => {
    const host = 'archive.pages.localhost';
    const { pageId } = await servedPage(host, 'Archived soon');
    expect((await move(alice, pageId, 'archive')).statusCode).toBe(200);
    expect((await visit(t, host, '/p')).statusCode).toBe(410);
    expect((await move(alice, pageId, 'restore')).statusCode).toBe(200);
    const back = await visit(t, host, '/p');
    expect(back.statusCode).toBe(200);
    expect(h1(back.body)).toBe('Archived soon');
  });

  it('delete → 404 at once', async () => {
    const host = 'delete.pages.localhost';
    const { pageId } = await servedPage(host, 'Deleted soon');
    expect((await remove(alice, pageId)).statusCode).toBe(204);
    expect((await visit(t, host, '/p')).statusCode).toBe(404);
  });

  it('publish → the drafts it publishes are served at once', async () => {
    const host = 'publish.pages.localhost';
    const { pageId, audienceId } = await servedPage(host, 'Before', 'draft');
    await alice.scope.updateTable('pages').set({ title: 'After' }).where('id', '=', pageId).execute();
    const queued = await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences/${audienceId}/versions`,
      payload: {},
    });
    expect(queued.statusCode).toBe(201);
    await drainGeneration(t.database, t.clock);
    // A draft page: the new version waits, the link still serves the old one.
    expect(h1((await visit(t, host, '/p')).body)).toBe('Before');
    expect((await move(alice, pageId, 'publish')).statusCode).toBe(200);
    expect(h1((await visit(t, host, '/p')).body)).toBe('After');
  });
});
