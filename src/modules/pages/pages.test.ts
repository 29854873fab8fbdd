import { describe, expect, it } from 'vitest';
import { problem, useTestApp, type Tenant } from '../../../test/harness.js';
import { makePage } from '../../../test/factories/pages.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const patch = (tenant: Tenant, pageId: string, body: unknown) =>
  t.request(tenant, { method: 'PATCH', url: `/v0/pages/${pageId}`, payload: body as object });

async function getPage(tenant: Tenant, pageId: string) {
  // Walk the list: there is no single-page GET in the spec.
  let cursor: string | null = null;
  do {
    const res = await t.request(tenant, {
      method: 'GET',
      url: `/v0/pages?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    });
    const body = res.json();
    const found = body.items.find((p: { pageId: string }) => p.pageId === pageId);
    if (found) return found;
    cursor = body.nextCursor;
  } while (cursor);
  return undefined;
}

describe('GET /v0/pages', () => {
  it('keeps totalCount exact through soft deletes, restores and removals, whoever writes them', async () => {
    const tenant = await t.createTenant();
    const total = async (url = '/v0/pages?limit=1') =>
      (await t.request(tenant, { method: 'GET', url })).json().totalCount as number;
    expect(await total()).toBe(0);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await makePage(tenant.scope, t.clock, { name: `P${i}` }));
    await makePage(tenant.scope, t.clock, { name: 'Born deleted', deleted: true });
    expect(await total()).toBe(5);
    // Written straight to the table (as an operator script would): the count follows.
    const db = t.database.kysely;
    await db.updateTable('pages').set({ deleted_at: t.clock.now().toISOString() }).where('id', '=', ids[0]!).execute();
    await db.updateTable('pages').set({ name: 'Renamed' }).where('id', '=', ids[1]!).execute();
    expect(await total()).toBe(4);
    await db.updateTable('pages').set({ deleted_at: null }).where('id', '=', ids[0]!).execute();
    expect(await total()).toBe(5);
    await db.deleteFrom('pages').where('id', '=', ids[2]!).execute();
    expect(await total()).toBe(4);
    // A rolled-back write leaves it as it was.
    await expect(
      tenant.scope.transaction(async (tx) => {
        await makePage(tx, t.clock, { name: 'Rolled back' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await total()).toBe(4);
    // Every page of a walk carries the same exact count, and past the end too.
    const first = (await t.request(tenant, { method: 'GET', url: '/v0/pages?limit=3' })).json();
    expect(first.totalCount).toBe(4);
    const second = (
      await t.request(tenant, { method: 'GET', url: `/v0/pages?limit=3&cursor=${first.nextCursor}` })
    ).json();
    expect(second).toMatchObject({ totalCount: 4, hasMore: false });
    expect(second.items).toHaveLength(1);
  });

  it('lists only the tenant’s visible pages, newest first, with an exact totalCount', async () => {
    const tenant = await t.createTenant();
    const older = await makePage(tenant.scope, t.clock, { name: 'Older' });
    t.clock.advance(1000);
    const newer = await makePage(tenant.scope, t.clock, { name: 'Newer', status: 'published' });
    await makePage(tenant.scope, t.clock, { name: 'Gone', deleted: true });
    await makePage(bob.scope, t.clock, { name: 'Not yours' });

    const res = await t.request(tenant, { method: 'GET', url: '/v0/pages' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items.map((p: { pageId: string }) => p.pageId)).toEqual([newer, older]);
    expect(body).toMatchObject({ hasMore: false, nextCursor: null, totalCount: 2 });
    const page = body.items[0];
    expect(page).toMatchObject({
      name: 'Newer',
      status: 'published',
      pageType: 'inbound',
      audiencesCount: 0,
      archivedAt: null,
      deletedAt: null,
      headerActionId: page.actions[0].actionId,
    });
    expect(page.actions.map((a: { actionIndex: number }) => a.actionIndex)).toEqual([0, 1]);
    expect(page.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('walks every page exactly once with cursors, even while pages are added', async () => {
    const tenant = await t.createTenant();
    const ids = new Set<string>();
    for (let i = 0; i < 25; i++) ids.add(await makePage(tenant.scope, t.clock, { name: `P${i}` }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let first = true;
    do {
      const res = await t.request(tenant, {
        method: 'GET',
        url: `/v0/pages?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.totalCount).toBeGreaterThanOrEqual(25);
      seen.push(...body.items.map((p: { pageId: string }) => p.pageId));
      cursor = body.nextCursor;
      expect(body.hasMore).toBe(cursor !== null);
      if (first) {
        await makePage(tenant.scope, t.clock, { name: 'Inserted meanwhile' });
        first = false;
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
  });

  it.each([
    ['0', 'limit'],
    ['101', 'limit'],
    ['-1', 'limit'],
    ['abc', 'limit'],
    ['1.5', 'limit'],
  ])('rejects limit=%s with 422', async (value) => {
    const res = await t.request(alice, { method: 'GET', url: `/v0/pages?limit=${value}` });
    expect(res.statusCode).toBe(422);
    const body = problem(res);
    expect(body.code).toBe('validation_failed');
    expect(body.errors[0]?.path).toBe('/query/limit');
  });

  it('rejects garbage, tampered and foreign cursors with 400 invalid_cursor', async () => {
    for (let i = 0; i < 3; i++) await makePage(alice.scope, t.clock);
    const first = (await t.request(alice, { method: 'GET', url: '/v0/pages?limit=1' })).json();
    const cursor: string = first.nextCursor;
    expect(cursor).toBeTruthy();
    const [payload, sig] = cursor.split('.');
    const tamperedPayload = Buffer.from(JSON.stringify(['page_00000000000000000000000000'])).toString('base64url');
    for (const bad of ['garbage', `${tamperedPayload}.${sig}`, `${payload}.AAAA${sig!.slice(4)}`, `${payload}`]) {
      const res = await t.request(alice, { method: 'GET', url: `/v0/pages?cursor=${encodeURIComponent(bad)}` });
      expect(res.statusCode, bad).toBe(400);
      expect(problem(res).code).toBe('invalid_cursor');
    }
    // Bob cannot use Alice's cursor, and a list cursor is no search cursor.
    expect((await t.request(bob, { method: 'GET', url: `/v0/pages?cursor=${cursor}` })).statusCode).toBe(400);
    expect(
      (await t.request(alice, { method: 'GET', url: `/v0/pages/search?query=a&cursor=${cursor}` })).statusCode,
    ).toBe(400);
  });

  it('rejects unknown query parameters', async () => {
    const res = await t.request(alice, { method: 'GET', url: '/v0/pages?status=draft' });
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors[0]).toEqual({ path: '/query/status', message: 'is not a known field' });
  });
});

describe('GET /v0/pages/search', () => {
  it('matches a case-insensitive substring of the name, only in the tenant, never deleted pages', async () => {
    const tenant = await t.createTenant();
    const a = await makePage(tenant.scope, t.clock, { name: 'Enterprise Outbound Q4' });
    const b = await makePage(tenant.scope, t.clock, { name: 'SMB outbound' });
    await makePage(tenant.scope, t.clock, { name: 'Inbound pricing' });
    await makePage(tenant.scope, t.clock, { name: 'Outbound deleted', deleted: true });
    await makePage(bob.scope, t.clock, { name: 'Bob outbound' });

    const res = await t.request(tenant, { method: 'GET', url: '/v0/pages/search?query=OUTBOUND' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items.map((p: { pageId: string }) => p.pageId).sort()).toEqual([a, b].sort());
    expect(body.items[0]).toEqual({ pageId: expect.any(String), name: expect.any(String), audiencesCount: 0 });
    expect(body.totalCount).toBeNull();
  });

  it('matches short queries and special characters literally', async () => {
    const tenant = await t.createTenant();
    const pct = await makePage(tenant.scope, t.clock, { name: '100% off_sale' });
    await makePage(tenant.scope, t.clock, { name: '1000 offers' });
    const short = await t.request(tenant, { method: 'GET', url: '/v0/pages/search?query=%25' });
    expect(short.json().items.map((p: { pageId: string }) => p.pageId)).toEqual([pct]);
    const underscore = await t.request(tenant, { method: 'GET', url: '/v0/pages/search?query=f_s' });
    expect(underscore.json().items.map((p: { pageId: string }) => p.pageId)).toEqual([pct]);
    const quote = await t.request(tenant, {
      method: 'GET',
      url: `/v0/pages/search?query=${encodeURIComponent('"off')}`,
    });
    expect(quote.statusCode).toBe(200);
    expect(quote.json().items).toEqual([]);
  });

  it('pages through results with a cursor', async () => {
    const tenant = await t.createTenant();
    for (let i = 0; i < 5; i++) await makePage(tenant.scope, t.clock, { name: `Campaign ${i}` });
    const first = (await t.request(tenant, { method: 'GET', url: '/v0/pages/search?query=campaign&limit=3' })).json();
    expect(first.items).toHaveLength(3);
    expect(first.hasMore).toBe(true);
    const second = (
      await t.request(tenant, {
        method: 'GET',
        url: `/v0/pages/search?query=campaign&limit=3&cursor=${first.nextCursor}`,
      })
    ).json();
    expect(second.items).toHaveLength(2);
    expect(second.hasMore).toBe(false);
    // Reusing the cursor with another query is refused rather than answered wrongly.
    const other = await t.request(tenant, {
      method: 'GET',
      url: `/v0/pages/search?query=other&cursor=${first.nextCursor}`,
    });
    expect(other.statusCode).toBe(400);
  });

  it('requires a query of 1..200 characters', async () => {
    for (const url of ['/v0/pages/search', '/v0/pages/search?query=', `/v0/pages/search?query=${'x'.repeat(10_000)}`]) {
      const res = await t.request(alice, { method: 'GET', url });
      expect(res.statusCode, url.slice(0, 40)).toBe(422);
      expect(problem(res).errors[0]?.path).toBe('/query/query');
    }
  });
});

describe('PATCH /v0/pages/{page_id}', () => {
  it('updates every field of the PATCH body and returns the page', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    t.clock.advance(5000);
    const body = {
      name: 'Renamed',
      pageContext: 'New context',
      pageType: 'sales_deck',
      brandId: 'brand_2',
      actions: [
        {
          actionId: 'cta-main',
          purpose: 'Buy',
          buttonTitle: 'Buy now',
          actionType: 'link',
          url: 'https://x.example/buy',
        },
        { purpose: 'Talk', buttonTitle: 'Talk to us', actionType: 'calendar', url: 'https://x.example/talk' },
      ],
      headerActionId: 'cta-main',
      actionCardWidgets: [
        {
          type: 'logos',
          title: 'Customers',
          logos: [{ image: { altText: 'A', url: 'https://a', fileId: 'f', assetId: 'a' } }],
        },
      ],
      footerLinks: [{ id: 'g', title: 'Legal', links: [{ id: 'l', text: 'Terms', url: 'https://x.example/terms' }] }],
      scripts: [{ name: 'chat', description: 'Chat widget', content: '/* chat */', enabled: false }],
      metadata: { description: 'Fresh', keywords: ['a', 'b'] },
    };
    const res = await patch(alice, pageId, body);
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({
      pageId,
      name: 'Renamed',
      pageContext: 'New context',
      pageType: 'sales_deck',
      brandId: 'brand_2',
      headerActionId: 'cta-main',
      actionCardWidgets: body.actionCardWidgets,
      footerLinks: body.footerLinks,
      scripts: body.scripts,
    });
    expect(page.actions[0]).toEqual({ ...body.actions[0], actionIndex: 0 });
    expect(page.actions[1]).toMatchObject({
      ...body.actions[1],
      actionIndex: 1,
      actionId: expect.stringMatching(/^action_/),
    });
    // metadata is merged: the title and the image URL set earlier survive.
    expect(page.metadata).toEqual({
      title: 'Welcome',
      ogImageUrl: 'https://cdn.example.com/og.png',
      description: 'Fresh',
      keywords: ['a', 'b'],
    });
    expect(page.updatedAt).not.toBe(page.createdAt);
    expect(await getPage(alice, pageId)).toEqual(page);
  });

  it('removes a metadata key with null and clears the header action with null', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const res = await patch(alice, pageId, { metadata: { title: null }, headerActionId: null });
    expect(res.statusCode).toBe(200);
    expect(res.json().metadata).toEqual({ ogImageUrl: 'https://cdn.example.com/og.png' });
    expect(res.json()).not.toHaveProperty('headerActionId');
  });

  it('reorders actions: actionIndex follows the array order', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const before = await getPage(alice, pageId);
    const reversed = [...before.actions].reverse().map(({ actionIndex: _, ...a }: { actionIndex: number }) => a);
    const res = await patch(alice, pageId, { actions: reversed });
    expect(res.statusCode).toBe(200);
    expect(
      res.json().actions.map((a: { actionId: string; actionIndex: number }) => [a.actionId, a.actionIndex]),
    ).toEqual([
      [before.actions[1].actionId, 0],
      [before.actions[0].actionId, 1],
    ]);
  });

  const invalid: [string, unknown, string][] = [
    ['empty name', { name: '' }, '/body/name'],
    ['name of 256 characters', { name: 'x'.repeat(256) }, '/body/name'],
    ['empty pageContext', { pageContext: '' }, '/body/pageContext'],
    ['unknown pageType', { pageType: 'landing' }, '/body/pageType'],
    ['name of the wrong type', { name: 42 }, '/body/name'],
    ['actions not an array', { actions: {} }, '/body/actions'],
    ['action without url', { actions: [{ purpose: 'p', buttonTitle: 'b', actionType: 't' }] }, '/body/actions/0/url'],
    [
      'action with actionIndex',
      { actions: [{ purpose: 'p', buttonTitle: 'b', actionType: 't', url: 'u', actionIndex: 0 }] },
      '/body/actions/0/actionIndex',
    ],
    [
      'script enabled not boolean',
      { scripts: [{ name: 'n', description: 'd', content: 'c', enabled: 'yes' }] },
      '/body/scripts/0/enabled',
    ],
    ['metadata image field', { metadata: { ogImageUrl: 'https://x' } }, '/body/metadata/ogImageUrl'],
    ['unknown field', { status: 'published' }, '/body/status'],
    ['headerActionId not among the actions', { headerActionId: 'nope' }, '/body/headerActionId'],
    [
      'duplicate action ids',
      { actions: [1, 2].map(() => ({ actionId: 'same', purpose: 'p', buttonTitle: 'b', actionType: 't', url: 'u' })) },
      '/body/actions/1/actionId',
    ],
    [
      'removing the header action',
      { actions: [{ actionId: 'other', purpose: 'p', buttonTitle: 'b', actionType: 't', url: 'u' }] },
      '/body/actions',
    ],
    ['brandId empty', { brandId: '' }, '/body/brandId'],
  ];
  it.each(invalid)('rejects %s with 422 and changes nothing', async (_name, body, path) => {
    const pageId = await makePage(alice.scope, t.clock);
    const before = await getPage(alice, pageId);
    const res = await patch(alice, pageId, body);
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('validation_failed');
    expect(p.errors.map((e) => e.path)).toContain(path);
    expect(await getPage(alice, pageId)).toEqual(before);
  });

  it.each([
    ['a JSON array', '[]', 'application/json', 422],
    ['a JSON string', '"name"', 'application/json', 422],
    ['malformed JSON', '{"name": ', 'application/json', 400],
    ['an empty body', '', 'application/json', 400],
    ['text/plain', '{"name":"x"}', 'text/plain', 415],
    ['form data', 'name=x', 'application/x-www-form-urlencoded', 415],
  ])('rejects %s as body', async (_name, payload, contentType, status) => {
    const pageId = await makePage(alice.scope, t.clock);
    const before = await getPage(alice, pageId);
    const res = await t.request(alice, {
      method: 'PATCH',
      url: `/v0/pages/${pageId}`,
      payload,
      headers: { 'content-type': contentType },
    });
    expect(res.statusCode).toBe(status);
    expect(problem(res).status).toBe(status);
    expect(await getPage(alice, pageId)).toEqual(before);
  });

  it('rejects a body over 1 MiB with 413', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const res = await patch(alice, pageId, { pageContext: 'x'.repeat(1024 * 1024 + 10) });
    expect(res.statusCode).toBe(413);
    expect(problem(res)).toMatchObject({
      code: 'payload_too_large',
      detail: 'The request body is larger than the limit of 1 MiB.',
    });
  });

  it('answers 404 for unknown, deleted and other tenants’ pages, and changes nothing', async () => {
    const bobs = await makePage(bob.scope, t.clock, { name: 'Bob’s' });
    const deleted = await makePage(alice.scope, t.clock, { deleted: true });
    for (const id of [bobs, deleted, 'page_01h00000000000000000000000', 'not-an-id']) {
      const res = await patch(alice, id, { name: 'Hijacked' });
      expect(res.statusCode).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect((await getPage(bob, bobs)).name).toBe('Bob’s');
  });

  it('refuses to change an archived page with 409', async () => {
    const pageId = await makePage(alice.scope, t.clock, { status: 'archived' });
    const res = await patch(alice, pageId, { name: 'New' });
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('page_archived');
    const page = await getPage(alice, pageId);
    expect(page).toMatchObject({ status: 'archived', archivedAt: expect.any(String), name: 'Welcome page' });
  });
});
