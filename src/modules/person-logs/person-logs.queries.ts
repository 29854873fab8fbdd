import type { Insertable } from 'kysely';
import type { PersonLogsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

export type NewPersonLogRow = Omit<Insertable<PersonLogsTable>, 'tenant_id'>;

export async function insertPersonLog(scope: TenantScope, row: NewPersonLogRow) {
  await scope.insertInto('person_logs', row).execute();
}

export async function insertPersonLogs(scope: TenantScope, rows: NewPersonLogRow[]) {
  await scope.insertInto('person_logs', rows).execute();
}
