import type { Tenant, TestApp } from '../harness.js';

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

/** Creates a person the way integrations do (a log entry); returns its id. */
export async function makePerson(
  t: TestApp,
  tenant: Tenant,
  fields: { email?: string; name?: string; phoneNumber?: string; socialProfileUrl?: string } = {},
): Promise<string> {
  const res = await t.request(tenant, {
    method: 'POST',
    url: '/v0/person_logs',
    payload: { source: 'factory', payload: {}, email: `p${++seq}@factory.example`, ...fields },
  });
  if (res.statusCode !== 201) throw new Error(`makePerson: ${res.statusCode} ${res.body}`);
  return (res.json() as { personId: string }).personId;
}
let seq = 0;
