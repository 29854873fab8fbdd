import { describe, expect, it } from 'vitest';
import { problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import { makePage } from '../../../test/factories/pages.js';
import { AppError } from '../../http/errors.js';
import { PAGE_LIMITS } from './pages.schemas.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

const CAP = PAGE_LIMITS.pageJsonBytes;
/** docs/api.md: the largest legal `GET /v0/pages?limit=100` body. */
const LIST_BOUND = 100 * CAP + 1024;

const patch = (tenant: Tenant, pageId: string, body: unknown) =>
  t.request(tenant, { method: 'PATCH', url: `/v0/pages/${pageId}`, payload: body as object });

async function pageJsonBytes(tenant: Tenant, pageId: string): Promise<number> {
  const res = await t.request(tenant, { method: 'GET', url: '/v0/pages?limit=100' });
  const page = (res.json() as { items: { pageId: string }[] }).items.find((p) => p.pageId === pageId);
  return Buffer.byteLength(JSON.stringify(page));
}

/** The JSON size of the factory's page with an empty pageContext (ids and timestamps have fixed lengths). */
async function basePageBytes(tenant: Tenant): Promise<number> {
  return pageJsonBytes(tenant, await makePage(tenant.scope, t.clock, { pageContext: '' }));
}

/** A page whose JSON is `CAP - slack` bytes: its pageContext is filled with '€' (3 bytes in UTF-8). */
async function pageNearCap(tenant: Tenant, base: number, slack = 0): Promise<string> {
  const room = CAP - slack - base;
  return makePage(tenant.scope, t.clock, { pageContext: `${'€'.repeat(Math.floor(room / 3))}${'x'.repeat(room % 3)}` });
}

describe(`a page is at most ${CAP} bytes of JSON`, () => {
  it('accepts a PATCH up to the limit and refuses one byte more (422 page_too_large at /body), writing nothing', async () => {
    const pageId = await pageNearCap(alice, await basePageBytes(alice), 10);
    expect(await pageJsonBytes(alice, pageId)).toBe(CAP - 10);
    const ok = await patch(alice, pageId, { name: `Welcome page${'x'.repeat(10)}` });
    expect(ok.statusCode).toBe(200);
    expect(await pageJsonBytes(alice, pageId)).toBe(CAP);

    const before = await rowCounts(alice);
    const listed = (await t.request(alice, { method: 'GET', url: '/v0/pages?limit=100' })).body;
    const res = await patch(alice, pageId, { name: `Welcome page${'x'.repeat(11)}` });
    expect(res.statusCode).toBe(422);
    const body = problem(res);
    expect(body.code).toBe('page_too_large');
    expect(body.errors).toEqual([
      { path: '/body', message: `would make the page ${CAP + 1} bytes of JSON; a page is at most ${CAP} bytes` },
    ]);
    expect(await rowCounts(alice)).toEqual(before);
    expect((await t.request(alice, { method: 'GET', url: '/v0/pages?limit=100' })).body).toBe(listed);
  });

  it('refuses growing a page field by field beyond the limit, each PATCH being small enough on its own', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const script = (i: number) => ({ content: 'x'.repeat(100_000), enabled: true, name: `s${i}`, description: '' });
    expect((await patch(alice, pageId, { scripts: [script(1), script(2)] })).statusCode).toBe(200);
    const res = await patch(alice, pageId, { pageContext: '€'.repeat(100_000) });
    expect(res.statusCode).toBe(422);
    expect(problem(res).code).toBe('page_too_large');
    expect(await pageJsonBytes(alice, pageId)).toBeLessThan(CAP);
  });

  it('holds for pages created by the operator side too', async () => {
    await expect(makePage(alice.scope, t.clock, { pageContext: '€'.repeat(100_000) })).rejects.toThrow(AppError);
  });

  it(`keeps the largest GET /v0/pages?limit=100 within the documented bound (${LIST_BOUND} bytes)`, async () => {
    const tenant = await t.createTenant();
    const base = await basePageBytes(tenant);
    for (let i = 0; i < 100; i++) await pageNearCap(tenant, base);
    const res = await t.request(tenant, { method: 'GET', url: '/v0/pages?limit=100' });
    expect(res.statusCode).toBe(200);
    const bytes = res.rawPayload.length;
    expect(bytes).toBeGreaterThan(100 * (CAP - 100));
    expect(bytes).toBeLessThanOrEqual(LIST_BOUND);
  }, 120_000);
});
