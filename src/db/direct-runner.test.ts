import { describe, expect, it, vi } from 'vitest';
import { ENGINE, useTestApp } from '../../test/harness.js';
import { directRunner } from './direct-runner.js';
import { PoolRunner } from './pg-adapter.js';
import { preparedQuery } from './prepared.js';
import { SqliteReaderRunner } from './sqlite-adapter.js';

const t = useTestApp({ tenants: ['Tenant'] });
const [tenant] = t.tenants;

const now = '2026-11-01T09:00:00.000Z';
const accountByDomain = preparedQuery((scope, p: { domain: string }) =>
  scope.selectFrom('accounts').select('accounts.domain').where('accounts.domain', '=', p.domain),
);
const insertAccount = preparedQuery((scope, p: { id: string; domain: string }) =>
  scope.insertInto('accounts', { id: p.id, domain: p.domain, name: null, created_at: now, updated_at: now }),
);

describe('compiled statements outside a transaction (db/prepared.ts, db/direct-runner.ts)', () => {
  it('skip Kysely, run inside a transaction on its connection, and never see what it has not committed', async () => {
    expect(directRunner(t.database.kysely)).toBeInstanceOf(ENGINE === 'sqlite' ? SqliteReaderRunner : PoolRunner);
    let seenInside: unknown[] = [];
    let seenOutside: unknown[] = ['not read'];
    await tenant.scope.transaction(async (tx) => {
      await insertAccount(tx, { id: 'account_direct', domain: 'direct.example' });
      seenInside = await accountByDomain(tx, { domain: 'direct.example' });
      // A request outside the transaction, while it is open on its connection.
      seenOutside = await accountByDomain(tenant.scope, { domain: 'direct.example' });
    });
    expect(seenInside).toEqual([{ domain: 'direct.example' }]);
    expect(seenOutside).toEqual([]);
    // Once the transaction is acknowledged (committed), the next read sees it, without Kysely's executor.
    const executor = vi.spyOn(t.database.kysely, 'executeQuery');
    try {
      expect(await accountByDomain(tenant.scope, { domain: 'direct.example' })).toEqual([{ domain: 'direct.example' }]);
      expect(executor).not.toHaveBeenCalled();
    } finally {
      executor.mockRestore();
    }
  });

  it.runIf(ENGINE === 'postgres')('keep the connection of a refused statement in the pool', async () => {
    const pool = (directRunner(t.database.kysely) as PoolRunner).pool;
    await insertAccount(tenant.scope, { id: 'account_once', domain: 'once.example' });
    const connections = pool.totalCount;
    await expect(insertAccount(tenant.scope, { id: 'account_once', domain: 'twice.example' })).rejects.toMatchObject({
      code: '23505',
    });
    expect(pool.totalCount).toBe(connections);
    expect(await accountByDomain(tenant.scope, { domain: 'once.example' })).toEqual([{ domain: 'once.example' }]);
  });

  it.runIf(ENGINE === 'sqlite')('leave writes to Kysely (the writer), reads to the read-only connection', async () => {
    const executor = vi.spyOn(t.database.kysely, 'executeQuery');
    try {
      await insertAccount(tenant.scope, { id: 'account_write', domain: 'write.example' });
      expect(executor).toHaveBeenCalledTimes(1);
    } finally {
      executor.mockRestore();
    }
    expect(await accountByDomain(tenant.scope, { domain: 'write.example' })).toEqual([{ domain: 'write.example' }]);
  });
});
