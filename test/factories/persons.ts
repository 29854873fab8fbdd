import type { Tenant } from '../harness.js';

/** Rows of a tenant in the tables persons, logs, accounts and idempotency keys touch. */
export async function rowCounts(tenant: Tenant) {
  const count = async (table: 'persons' | 'person_logs' | 'accounts' | 'idempotency_keys') => {
    const row = await tenant.scope
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return {
    persons: await count('persons'),
    person_logs: await count('person_logs'),
    accounts: await count('accounts'),
    idempotency_keys: await count('idempotency_keys'),
  };
}
