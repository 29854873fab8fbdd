import type { Insertable, Updateable } from 'kysely';
import type { AudienceImportsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

/** SQL of the console's imports (audience_imports, migration 0100): always in a tenant's scope. */

const IMPORT_COLUMNS = [
  'id',
  'page_id',
  'user_id',
  'file_name',
  'status',
  'attempts',
  'rows',
  'rows_done',
  'items_done',
  'created',
  'existing',
  'failed',
  'errors',
  'failure',
  'created_at',
  'updated_at',
  'finished_at',
] as const;

export function insertImport(scope: TenantScope, row: Omit<Insertable<AudienceImportsTable>, 'tenant_id'>) {
  return scope.insertInto('audience_imports', row).execute();
}

/** An import as the screen shows it (not its file). */
export function findImport(scope: TenantScope, id: string) {
  return scope.selectFrom('audience_imports').select(IMPORT_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** What a run needs: the file and where the last run got to. */
export function findImportForRun(scope: TenantScope, id: string) {
  return scope
    .selectFrom('audience_imports')
    .select(['page_id', 'file_name', 'csv', 'items_done', 'created', 'existing', 'failed', 'errors'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export function updateImport(scope: TenantScope, id: string, changes: Updateable<AudienceImportsTable>) {
  return scope.updateTable('audience_imports').set(changes).where('id', '=', id).execute();
}
