import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { ENGINE, useTestApp } from '../../test/harness.js';
import { TenantScope } from './tenant-scope.js';

const t = useTestApp({ tenants: ['Tenant', 'Other'] });
const [tenant, other] = t.tenants;

const now = '2026-11-01T09:00:00.000Z';
const insertAccount = (scope: TenantScope, domain: string) =>
  scope
    .insertInto('accounts', { id: `account_${domain}`, domain, name: null, created_at: now, updated_at: now })
    .execute();

beforeEach(() => {
  t.notified.length = 0;
});

describe('scope.afterCommit', () => {
  it('sends a transaction’s wake-ups once it has committed, each channel once', async () => {
    const during = await tenant.scope.transaction(async (tx) => {
      await insertAccount(tx, 'woken.example');
      tx.afterCommit('jobs');
      await tx.transaction(async (nested) => nested.afterCommit('jobs'));
      tx.afterCommit('events');
      return [...t.notified];
    });
    expect(during).toEqual([]);
    expect(t.notified).toEqual(['jobs', 'events']);
  });

  it('sends nothing for a transaction that rolled back', async () => {
    await expect(
      tenant.scope.transaction(async (tx) => {
        tx.afterCommit('jobs');
        throw new Error('nope');
      }),
    ).rejects.toThrow('nope');
    expect(t.notified).toEqual([]);
  });

  it('drops what a rolled-back savepoint registered, and keeps the rest of the transaction’s', async () => {
    await tenant.scope.transaction(async (tx) => {
      tx.afterCommit('kept');
      await tx
        .savepoint('attempt', async (sp) => {
          sp.afterCommit('undone');
          throw new Error('undo');
        })
        .catch(() => {});
      await tx.savepoint('kept_too', async (sp) => sp.afterCommit('kept-too'));
    });
    expect(t.notified).toEqual(['kept', 'kept-too']);
  });

  it('sends at once outside a transaction: the statement before it has committed', () => {
    tenant.scope.afterCommit('jobs');
    expect(t.notified).toEqual(['jobs']);
  });

  it('of concurrent transactions (one SQLite group commit), sends only the committed ones’', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        tenant.scope.transaction(async (tx) => {
          await insertAccount(tx, `concurrent${i}.example`);
          tx.afterCommit(`channel-${i}`);
          if (i % 3 === 0) throw new Error(`fail ${i}`);
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(4);
    expect([...t.notified].sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => i)
        .filter((i) => i % 3 !== 0)
        .map((i) => `channel-${i}`)
        .sort(),
    );
  });

  it.runIf(ENGINE === 'sqlite')('sends nothing when the batch the transaction was in is lost', async () => {
    const outcomes = await Promise.allSettled([
      tenant.scope.transaction(async (tx) => {
        await insertAccount(tx, 'lost-first.example');
        tx.afterCommit('lost-first');
      }),
      tenant.scope.transaction(async (tx) => {
        tx.afterCommit('lost-second');
        // Simulates SQLite aborting the transaction (as it does on e.g. SQLITE_FULL or IOERR).
        await sql`rollback`.execute(tx.unscopedDb());
        throw new Error('disk trouble');
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(t.notified).toEqual([]);
  });

  it('reaches the scopes of a transaction across tenants (the job runner’s claim)', async () => {
    await TenantScope.acrossTenants(t.database, async (_trx, scopeOf) => {
      await insertAccount(scopeOf(tenant.tenantId), 'across-a.example');
      scopeOf(tenant.tenantId).afterCommit('a');
      await insertAccount(scopeOf(other.tenantId), 'across-b.example');
      scopeOf(other.tenantId).afterCommit('b');
      expect(t.notified).toEqual([]);
    });
    expect(t.notified).toEqual(['a', 'b']);
  });
});
