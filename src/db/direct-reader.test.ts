import { describe, expect, it, vi } from 'vitest';
import { ENGINE, useTestApp } from '../../test/harness.js';
import { directPool } from './pg-adapter.js';
import { preparedQuery } from './prepared.js';
import { directReader } from './sqlite-adapter.js';

const t = useTestApp({ tenants: ['Tenant'] });
const [tenant] = t.tenants;

const now = '2026-11-01T09:00:00.000Z';
const accountByDomain = preparedQuery((scope, p: { domain: string }) =>
  scope.selectFrom('accounts').select('accounts.domain').where('accounts.domain', '=', p.domain),
);

describe.runIf(ENGINE === 'sqlite')('hot reads on the read-only SQLite connection (db/prepared.ts)', () => {
  it('are taken off the writer, and never see a transaction that has not committed', async () => {
    expect(directReader(t.database.kysely)).toBeDefined();
    let seenInside: unknown[] = [];
    let seenOutside: unknown[] = ['not read'];
    await tenant.scope.transaction(async (tx) => {
      await tx
        .insertInto('accounts', {
          id: 'account_reader',
          domain: 'reader.example',
          name: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      seenInside = await accountByDomain(tx, { domain: 'reader.example' });
      // A request outside the transaction, while it is open on the writer's connection.
      seenOutside = await accountByDomain(tenant.scope, { domain: 'reader.example' });
    });
    expect(seenInside).toEqual([{ domain: 'reader.example' }]);
    expect(seenOutside).toEqual([]);
    // Once the transaction is acknowledged (committed), the next read sees it.
    expect(await accountByDomain(tenant.scope, { domain: 'reader.example' })).toEqual([{ domain: 'reader.example' }]);
  });
});

const insertAccount = preparedQuery((scope, p: { id: string; domain: string }) =>
  scope.insertInto('accounts', { id: p.id, domain: p.domain, name: null, created_at: now, updated_at: now }),
);

describe.runIf(ENGINE === 'postgres')('compiled statements straight on the pool (db/prepared.ts, PostgreSQL)', () => {
  it('run outside a transaction on the pool and inside one on its connection', async () => {
    expect(directPool(t.database.kysely)).toBeDefined();
    let seenInside: unknown[] = [];
    let seenOutside: unknown[] = ['not read'];
    await tenant.scope.transaction(async (tx) => {
      await insertAccount(tx, { id: 'account_pool', domain: 'pool.example' });
      seenInside = await accountByDomain(tx, { domain: 'pool.example' });
      seenOutside = await accountByDomain(tenant.scope, { domain: 'pool.example' });
    });
    expect(seenInside).toEqual([{ domain: 'pool.example' }]);
    expect(seenOutside).toEqual([]);
    // Outside a transaction Kysely's executor is not involved at all.
    const executor = vi.spyOn(t.database.kysely, 'executeQuery');
    try {
      expect(await accountByDomain(tenant.scope, { domain: 'pool.example' })).toEqual([{ domain: 'pool.example' }]);
      expect(executor).not.toHaveBeenCalled();
    } finally {
      executor.mockRestore();
    }
  });

  it('keep the connection of a refused statement in the pool', async () => {
    const pool = directPool(t.database.kysely)!;
    await insertAccount(tenant.scope, { id: 'account_once', domain: 'once.example' });
    const connections = pool.totalCount;
    await expect(insertAccount(tenant.scope, { id: 'account_once', domain: 'twice.example' })).rejects.toMatchObject({
      code: '23505',
    });
    expect(pool.totalCount).toBe(connections);
    expect(await accountByDomain(tenant.scope, { domain: 'once.example' })).toEqual([{ domain: 'once.example' }]);
  });
});
