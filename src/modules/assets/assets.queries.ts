import type { Insertable } from 'kysely';
import type { AssetsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

const ASSET_COLUMNS = [
  'assets.id',
  'assets.tenant_id',
  'assets.asset_type',
  'assets.name',
  'assets.purpose',
  'assets.file_id',
  'assets.parent_asset_id',
  'assets.hidden',
  'assets.tags',
  'assets.ai_description',
  'assets.lifecycle_state',
  'assets.created_at',
  'assets.updated_at',
  'assets.trashed_at',
  'assets.deleted_at',
] as const;

export type AssetRow = Awaited<ReturnType<typeof findAsset>> & {};

/** A visible asset (not deleted) with what its URLs need to know about its file. */
export async function findAsset(scope: TenantScope, assetId: string) {
  return scope
    .selectFrom('assets')
    .innerJoin('files', 'files.id', 'assets.file_id')
    .select([...ASSET_COLUMNS, 'files.preview_status'])
    .where('assets.id', '=', assetId)
    .where('assets.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function assetExists(scope: TenantScope, assetId: string): Promise<boolean> {
  const row = await scope
    .selectFrom('assets')
    .select('assets.id')
    .where('assets.id', '=', assetId)
    .where('assets.deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertAsset(scope: TenantScope, row: Omit<Insertable<AssetsTable>, 'tenant_id'>) {
  await scope.insertInto('assets', row).execute();
}
