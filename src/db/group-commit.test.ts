import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ENGINE, useTestApp } from '../../test/harness.js';
import { groupCommitFor } from './group-commit.js';
import type { DB } from './schema.js';
import { TenantScope } from './tenant-scope.js';

const t = useTestApp({ tenants: ['Tenant'] });
const [tenant] = t.tenants;

const now = '2026-11-01T09:00:00.000Z';
const insertAccount = (scope: TenantScope, domain: string) =>
  scope
    .insertInto('accounts', { id: `account_${domain}`, domain, name: null, created_at: now, updated_at: now })
    .execute();
/** The connection's sync level as a batch sees it: 2 = FULL (the WAL is fsynced at commit), 1 = NORMAL. */
const level = async (db: Kysely<DB>) =>
  (await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0]!.synchronous;
const domains = async () =>
  (await tenant.scope.selectFrom('accounts').select('domain').orderBy('domain').execute()).map((r) => r.domain);

describe.runIf(ENGINE === 'sqlite')('SQLite group commit (TenantScope.transaction)', () => {
  it('commits concurrent transactions together, fewer commits than transactions', async () => {
    const committer = groupCommitFor(t.database.kysely);
    const before = committer.batches;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        tenant.scope.transaction(async (tx) => {
          await insertAccount(tx, `batch${i}.example`);
          return i;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(committer.batches - before).toBeLessThan(50);
    expect((await domains()).filter((d) => d.startsWith('batch'))).toHaveLength(50);
  });

  it('a failing transaction leaves nothing behind and does not affect the others in its batch', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        tenant.scope.transaction(async (tx) => {
          await insertAccount(tx, `mixed${i}.example`);
          // A nested transaction joins the outer one; its writes go with the outer outcome.
          await tx.transaction((inner) => insertAccount(inner, `mixed${i}-nested.example`));
          if (i % 3 === 0) throw new Error(`fail ${i}`);
          return i;
        }),
      ),
    );
    outcomes.forEach((o, i) => {
      if (i % 3 === 0) expect(o).toEqual({ status: 'rejected', reason: new Error(`fail ${i}`) });
      else expect(o).toEqual({ status: 'fulfilled', value: i });
    });
    const stored = (await domains()).filter((d) => d.startsWith('mixed'));
    const expected = Array.from({ length: 20 }, (_, i) => i)
      .filter((i) => i % 3 !== 0)
      .flatMap((i) => [`mixed${i}.example`, `mixed${i}-nested.example`])
      .sort();
    expect(stored).toEqual(expected);
  });

  it('a constraint violation inside one transaction rolls back only that transaction', async () => {
    await insertAccount(tenant.scope, 'taken.example');
    const outcomes = await Promise.allSettled([
      tenant.scope.transaction((tx) => insertAccount(tx, 'before-dup.example')),
      tenant.scope.transaction(async (tx) => {
        await insertAccount(tx, 'dup-partial.example');
        await tx
          .insertInto('accounts', {
            id: 'account_other',
            domain: 'taken.example',
            name: null,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }),
      tenant.scope.transaction((tx) => insertAccount(tx, 'after-dup.example')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const stored = await domains();
    expect(stored).toContain('before-dup.example');
    expect(stored).toContain('after-dup.example');
    expect(stored).not.toContain('dup-partial.example');
  });

  it('when the batch’s transaction is lost, every caller in it gets an error and nothing persists', async () => {
    const outcomes = await Promise.allSettled([
      tenant.scope.transaction((tx) => insertAccount(tx, 'lost-a.example')),
      tenant.scope.transaction(async (tx) => {
        await insertAccount(tx, 'lost-b.example');
        // Simulates SQLite aborting the transaction (as it does on e.g. SQLITE_FULL or IOERR).
        await sql`rollback`.execute(tx.unscopedDb());
        throw new Error('disk trouble');
      }),
      tenant.scope.transaction((tx) => insertAccount(tx, 'lost-c.example')),
    ]);
    expect(outcomes[0]!.status).toBe('rejected');
    expect(outcomes[1]!.status).toBe('rejected');
    const stored = await domains();
    expect(stored.filter((d) => d.startsWith('lost-'))).toEqual(
      outcomes[2]!.status === 'fulfilled' ? ['lost-c.example'] : [],
    );
    // The committer keeps working afterwards.
    await tenant.scope.transaction((tx) => insertAccount(tx, 'after-loss.example'));
    expect(await domains()).toContain('after-loss.example');
  });

  it('a transaction sees what earlier ones in its batch wrote, and a reader sees only committed data', async () => {
    const [, seen] = await Promise.all([
      tenant.scope.transaction((tx) => insertAccount(tx, 'visible.example')),
      tenant.scope.transaction(
        async (tx) =>
          (await tx.selectFrom('accounts').select('domain').where('domain', '=', 'visible.example').execute()).length,
      ),
    ]);
    expect(seen).toBe(1);
  });

  it('commits a batch of writes that may wait for the next sync without an fsync, and any other write syncs its batch', async () => {
    const committer = groupCommitFor(t.database.kysely);
    const deferred = { syncOnCommit: false };
    expect(await Promise.all([committer.run(level, deferred), committer.run(level, deferred)])).toEqual([1, 1]);
    expect(await Promise.all([committer.run(level, deferred), committer.run(level)])).toEqual([2, 2]);
    expect(await committer.run(level)).toBe(2);
    // The level comes back after a batch that failed, too.
    await expect(
      committer.run(async (db) => {
        await sql`rollback`.execute(db);
        throw new Error('disk trouble');
      }, deferred),
    ).rejects.toThrow();
    expect(await committer.run(level)).toBe(2);
  });

  it('a batch of deferred writes that cannot even begin leaves the connection syncing', async () => {
    const committer = groupCommitFor(t.database.kysely);
    // Another process holds the write lock, and this connection does not wait for it.
    const other = new BetterSqlite3(path.join(t.database.dataDir, 'audience-pages.sqlite'));
    await sql`pragma busy_timeout = 0`.execute(t.database.kysely);
    other.exec('begin immediate');
    try {
      await expect(committer.run(level, { syncOnCommit: false })).rejects.toThrow(/locked|busy/i);
    } finally {
      other.exec('rollback');
      other.close();
      await sql`pragma busy_timeout = 5000`.execute(t.database.kysely);
    }
    expect(await committer.run(level)).toBe(2);
  });
});

describe('TenantScope.transaction (both engines)', () => {
  it('rolls back everything a failed transaction wrote', async () => {
    const scope = TenantScope.of(t.database, tenant.tenantId);
    await expect(
      scope.transaction(async (tx) => {
        await insertAccount(tx, 'rolled-back.example');
        throw new Error('nope');
      }),
    ).rejects.toThrow('nope');
    expect(await domains()).not.toContain('rolled-back.example');
  });
});
