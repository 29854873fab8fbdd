import type { Insertable } from 'kysely';
import type { PersonLogsTable } from '../../db/schema.js';
import { preparedQuery } from '../../db/prepared.js';
import type { TenantScope } from '../../db/tenant-scope.js';

export type NewPersonLogRow = Omit<Insertable<PersonLogsTable>, 'tenant_id'>;

// Every person-log write runs this: prepared once (ADR 0002).
const insertOne = preparedQuery((scope, p: Required<NewPersonLogRow>) =>
  scope.insertInto('person_logs', {
    id: p.id,
    person_id: p.person_id,
    source: p.source,
    type: p.type,
    payload: p.payload,
    created_at: p.created_at,
  }),
);

export async function insertPersonLog(scope: TenantScope, row: Required<NewPersonLogRow>) {
  await insertOne(scope, row);
}

export async function insertPersonLogs(scope: TenantScope, rows: NewPersonLogRow[]) {
  await scope.insertInto('person_logs', rows).execute();
}
