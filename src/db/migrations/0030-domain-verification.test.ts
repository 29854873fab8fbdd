import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/harness.js';
import { migrateToLatest } from '../migrate.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrateUpTo: '0017-secrets' });
});
afterAll(() => db?.cleanup());

describe('migration 0030: proven tenant domains', () => {
  it('keeps existing domains serving, but due for a check and on the grace clock; *.localhost needs no proof', async () => {
    const k = db.kysely;
    const at = '2026-01-05T10:00:00.000Z';
    await k.insertInto('tenants').values({ id: 'tenant_a', name: 'A', created_at: at }).execute();
    const old = (id: string, hostname: string, deleted_at: string | null = null) =>
      k
        .insertInto('tenant_domains')
        .values({ id, tenant_id: 'tenant_a', hostname, created_at: at, deleted_at } as never);
    await old('domain_live', 'go.acme-shop.com').execute();
    await old('domain_local', 'acme.localhost').execute();
    await old('domain_gone', 'old.acme-shop.com', at).execute();

    const started = new Date().toISOString();
    expect(await migrateToLatest(db)).toContain('0030-domain-verification');
    const rows = await k.selectFrom('tenant_domains').selectAll().orderBy('id').execute();
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));

    expect(byId.domain_live).toMatchObject({ status: 'verified', verified_at: null, check_attempts: 0 });
    expect(byId.domain_live!.proof_missing_since! >= started).toBe(true);
    expect(byId.domain_live!.next_check_at).toBe(byId.domain_live!.proof_missing_since);
    expect(byId.domain_local).toMatchObject({
      status: 'verified',
      verified_at: at,
      proof_missing_since: null,
      next_check_at: null,
    });
    expect(byId.domain_gone).toMatchObject({ proof_missing_since: null, next_check_at: null });
    for (const row of rows) expect(row.verification_token).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(rows.map((r) => r.verification_token)).size).toBe(rows.length);

    // One verified holder per name; claims of other tenants may share it.
    await k.insertInto('tenants').values({ id: 'tenant_b', name: 'B', created_at: at }).execute();
    const claim = (id: string, status: string) =>
      k
        .insertInto('tenant_domains')
        .values({
          id,
          tenant_id: 'tenant_b',
          hostname: 'go.acme-shop.com',
          created_at: at,
          status,
          verification_token: 'x',
        } as never)
        .execute();
    await expect(claim('domain_b_verified', 'verified')).rejects.toThrow();
    await claim('domain_b_pending', 'pending');
  });
});
