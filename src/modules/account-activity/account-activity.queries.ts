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
