import { forShare } from '../../db/dialect.js';
import { preparedQuery } from '../../db/prepared.js';
import type { TenantScope } from '../../db/tenant-scope.js';

/**
 * An account's `latestActivityAt` follows the log entries of the persons linked to it. Both the
 * persons module (a person moving to another account brings its history) and the person-log
 * write path keep it, so the rule lives here, below both, rather than in either.
 */

/** The statement that moves the account's latestActivityAt forward to `at` (never back). */
export function activityForward(scope: TenantScope, domain: string, at: string) {
  return scope
    .updateTable('accounts')
    .set({ latest_activity_at: at })
    .where('accounts.domain', '=', domain)
    .where((eb) => eb.or([eb('accounts.latest_activity_at', 'is', null), eb('accounts.latest_activity_at', '<', at)]));
}

// Run by every person-log write: prepared once (ADR 0002).
const moveActivityForward = preparedQuery((scope, p: { domain: string; at: string }) =>
  activityForward(scope, p.domain, p.at),
);

export async function recordAccountActivity(scope: TenantScope, domain: string, at: string) {
  await moveActivityForward(scope, { domain, at });
}

// A log entry's activity goes to the account of its person's *current* link, read in the same
// statement under a shared lock of the person's row: a concurrent change of the person's domain or
// email (which holds the row locked, moves the link and carries the person's history over) is
// either waited for and seen here, or waits for this entry and carries it (PostgreSQL; SQLite
// serializes writers). Reading the link earlier, unlocked, could credit the old account.
const moveActivityOfPersonForward = preparedQuery((scope, p: { personId: string; at: string }) =>
  scope
    .updateTable('accounts')
    .set({ latest_activity_at: p.at })
    .where('accounts.domain', '=', (eb) =>
      forShare(
        scope.engine,
        eb
          .selectFrom('persons')
          .select('persons.account_domain')
          .where('persons.tenant_id', '=', scope.tenantId)
          .where('persons.id', '=', p.personId),
      ),
    )
    .where((eb) =>
      eb.or([eb('accounts.latest_activity_at', 'is', null), eb('accounts.latest_activity_at', '<', p.at)]),
    ),
);

/** Moves the account the person is linked to now (if any) forward to `at`: a log entry's write. */
export async function recordActivityOfPerson(scope: TenantScope, personId: string, at: string) {
  await moveActivityOfPersonForward(scope, { personId, at });
}

/** The newest log entry of any person linked to `domain` (for an account created after the fact). */
export async function latestActivityOfDomain(scope: TenantScope, domain: string): Promise<string | null> {
  const row = await scope
    .selectFrom('person_logs')
    .innerJoin('persons', (join) =>
      join.onRef('persons.id', '=', 'person_logs.person_id').onRef('persons.tenant_id', '=', 'person_logs.tenant_id'),
    )
    .select((eb) => eb.fn.max('person_logs.created_at').as('latest'))
    .where('persons.account_domain', '=', domain)
    .executeTakeFirst();
  return (row?.latest as string | null | undefined) ?? null;
}
