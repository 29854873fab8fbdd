import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problem, startTestApp, type Tenant, type TestApp } from '../harness.js';
import { revokeApiKey } from '../../src/modules/tenants/tenants.service.js';
import { generateApiKey } from '../../src/auth/api-keys.js';

// Issue 10, item 13: the key checksum is public, so anyone can mint well-formed keys. Before, each
// one cost a query and a cache slot, and at 10,000 entries the whole cache (valid keys too) was
// cleared; nothing limited how often an address could fail.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const get = (apiKey: string, remoteAddress: string) =>
  t.app.inject({ method: 'GET', url: '/v0/pages?limit=1', headers: { 'x-api-key': apiKey }, remoteAddress });

describe('API keys under a flood of made-up keys', () => {
  it('keeps valid keys cached: 10,001 unknown keys neither flush them nor make them look up again', async () => {
    const tenant: Tenant = await t.createTenant('Flooded');
    expect((await get(tenant.apiKey, '10.0.0.1')).statusCode).toBe(200);
    // Revoked behind the cache's back, with the clock standing still: only a new look-up would see
    // it, so the valid key keeps answering 200 exactly as long as it stays cached.
    await revokeApiKey(t.database.kysely, t.clock, tenant.keyId);
    for (let i = 0; i < 10_001; i += 250) {
      const batch = Array.from({ length: Math.min(250, 10_001 - i) }, (_, k) => {
        const n = i + k;
        return get(generateApiKey(), `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`);
      });
      for (const res of await Promise.all(batch)) expect(res.statusCode).toBe(401);
    }
    expect((await get(tenant.apiKey, '10.0.0.1')).statusCode).toBe(200);
    // The revocation is honoured once the entry is a second old.
    t.clock.advance(1_001);
    expect((await get(tenant.apiKey, '10.0.0.1')).statusCode).toBe(401);
  }, 120_000);

  it('limits failed authentication per client address (429 with Retry-After), not for other addresses or known keys', async () => {
    const tenant = await t.createTenant('Limited');
    expect((await get(tenant.apiKey, '192.0.2.7')).statusCode).toBe(200);
    for (let i = 0; i < 30; i++) expect((await get(generateApiKey(), '192.0.2.7')).statusCode).toBe(401);
    const limited = await get(generateApiKey(), '192.0.2.7');
    expect(limited.statusCode).toBe(429);
    expect(problem(limited).code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A malformed key from that address is limited too; another address is not.
    expect((await get('apsk_nope', '192.0.2.7')).statusCode).toBe(429);
    expect((await get(generateApiKey(), '192.0.2.8')).statusCode).toBe(401);
    // A key that was valid keeps working from the limited address, even once it must be looked up again.
    t.clock.advance(1_001);
    expect((await get(tenant.apiKey, '192.0.2.7')).statusCode).toBe(200);
    // The bucket refills: 30 failures a minute.
    t.clock.advance(60_000);
    expect((await get(generateApiKey(), '192.0.2.7')).statusCode).toBe(401);
  });
});
