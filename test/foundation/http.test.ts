import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/modules/tenants/tenants.service.js';
import { problem, startTestApp, undocumented, useTestApp } from '../harness.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

describe('authentication', () => {
  it('answers 401 missing_api_key without a key', async () => {
    const res = await t.request(null, { method: 'GET', url: '/v0/pages' });
    expect(res.statusCode).toBe(401);
    expect(problem(res)).toMatchObject({ code: 'missing_api_key', status: 401, title: 'Unauthorized' });
  });

  it.each([
    ['a well-formed key that was never issued', 'apsk_00000000000000000000000000000000000000'],
    ['garbage', 'hello'],
    ['an issued key with one character changed', 'FLIP'],
  ])('answers 401 invalid_api_key for %s', async (_name, key) => {
    const apiKey =
      key === 'FLIP'
        ? alice.apiKey.slice(0, 10) + (alice.apiKey[10] === 'a' ? 'b' : 'a') + alice.apiKey.slice(11)
        : key;
    const res = await t.request(null, { method: 'GET', url: '/v0/pages', headers: { 'x-api-key': apiKey } });
    expect(res.statusCode).toBe(401);
    expect(problem(res).code).toBe('invalid_api_key');
  });

  it('stops accepting a revoked key within a second', async () => {
    const tenant = await t.createTenant();
    expect((await t.request(tenant, { method: 'GET', url: '/v0/pages' })).statusCode).toBe(200);
    await revokeApiKey(t.database.kysely, t.clock, tenant.keyId);
    t.clock.advance(1001);
    const res = await t.request(tenant, { method: 'GET', url: '/v0/pages' });
    expect(res.statusCode).toBe(401);
    expect(problem(res).code).toBe('invalid_api_key');
  });

  it('rejects a revoked key at once when it was not cached', async () => {
    const tenant = await t.createTenant();
    await revokeApiKey(t.database.kysely, t.clock, tenant.keyId);
    expect((await t.request(tenant, { method: 'GET', url: '/v0/pages' })).statusCode).toBe(401);
  });

  it('stores only a hash of the key', async () => {
    const rows = await t.database.kysely.selectFrom('api_keys').selectAll().execute();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(alice.apiKey);
    expect(dump).not.toContain(alice.apiKey.slice(12));
  });
});

describe('routing and errors', () => {
  it('answers 405 with Allow for a known path and another method', async () => {
    const res = await t.request(alice, { method: 'PUT', url: '/v0/pages/page_x', payload: {} });
    expect(res.statusCode).toBe(405);
    expect(String(res.headers.allow).split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
    expect(problem(res).code).toBe('method_not_allowed');
    const post = await t.request(alice, { method: 'POST', url: '/v0/pages/search', payload: {} });
    expect(post.statusCode).toBe(405);
    expect(String(post.headers.allow)).toContain('GET');
  });

  it('answers 404 route_not_found for an unknown path', async () => {
    const res = await t.request(alice, { method: 'GET', url: '/v0/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(problem(res).code).toBe('route_not_found');
  });

  it('echoes a well-formed x-request-id and puts it in problems; generates one otherwise', async () => {
    const mine = await t.request(null, { method: 'GET', url: '/v0/pages', headers: { 'x-request-id': 'abc-123' } });
    expect(mine.headers['x-request-id']).toBe('abc-123');
    expect(problem(mine).requestId).toBe('abc-123');
    const bad = await t.request(null, {
      method: 'GET',
      url: '/v0/pages',
      headers: { 'x-request-id': 'no spaces allowed' },
    });
    expect(bad.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    expect(problem(bad).requestId).toBe(bad.headers['x-request-id']);
  });

  it('answers an unexpected failure with a generic 500 that never echoes internals', async () => {
    const broken = await startTestApp();
    const tenant = await broken.createTenant();
    await broken.database.kysely.destroy(); // every query now throws
    // 5xx are bugs or a shutdown, not part of any operation's contract (docs/api.md, Errors).
    const res = await undocumented('a simulated bug', () =>
      broken.request(tenant, { method: 'GET', url: '/v0/pages' }),
    );
    expect(res.statusCode).toBe(500);
    const body = problem(res);
    expect(body.code).toBe('internal_error');
    expect(res.body).not.toMatch(/destroy|sqlite|postgres|driver|stack/i);
    await broken.app.close();
    await broken.database.cleanup().catch(() => {});
  });
});

describe('operational endpoints', () => {
  it('serves health and readiness without a key', async () => {
    expect((await t.request(null, { method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.request(null, { method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('serves the OpenAPI 3.1 document and the docs page without a key', async () => {
    const res = await t.request(null, { method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(doc.paths['/v0/pages'].get.operationId).toBe('pages.list');
    expect(doc.paths['/v0/pages/{page_id}'].patch.operationId).toBe('pages.patch');
    expect(doc.components.schemas.Page).toBeDefined();
    const html = await t.request(null, { method: 'GET', url: '/docs/' });
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toContain('text/html');
  });

  it('has a committed docs/openapi.json that matches the code (run `npm run openapi`)', async () => {
    const generated = (await t.request(null, { method: 'GET', url: '/openapi.json' })).json();
    const committed = JSON.parse(fs.readFileSync('docs/openapi.json', 'utf8'));
    expect(committed).toEqual(generated);
  });
});

describe('rate limiting', () => {
  it('refuses requests over the bucket with 429, Retry-After and RateLimit headers', async () => {
    const limited = await startTestApp({ config: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2' } });
    try {
      const tenant = await limited.createTenant();
      const other = await limited.createTenant();
      const first = await limited.request(tenant, { method: 'GET', url: '/v0/pages' });
      expect(first.statusCode).toBe(200);
      expect(first.headers['ratelimit-policy']).toBe('"default";q=2;w=2');
      expect(first.headers.ratelimit).toMatch(/^"default";r=1;t=\d+$/);
      expect((await limited.request(tenant, { method: 'GET', url: '/v0/pages' })).statusCode).toBe(200);
      const third = await limited.request(tenant, { method: 'GET', url: '/v0/pages' });
      expect(third.statusCode).toBe(429);
      expect(problem(third).code).toBe('rate_limited');
      expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Buckets are per key.
      expect((await limited.request(other, { method: 'GET', url: '/v0/pages' })).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
