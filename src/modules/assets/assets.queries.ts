import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import { forUpdate, jsonArrayHolds } from '../../db/dialect.js';
import { keysetAfter } from '../../db/keyset.js';
import type { AssetsTable, DB } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

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

/**
 * An asset, deleted ones included (they are shown with `lifecycleState: deleted`), with what its
 * URLs need to know about its file. `lock`: held until the transaction ends (PostgreSQL).
 */
export async function findAsset(scope: TenantScope, assetId: string, options: { lock?: boolean } = {}) {
  const query = scope
    .selectFrom('assets')
    .innerJoin('files', 'files.id', 'assets.file_id')
    .select([...ASSET_COLUMNS, 'files.preview_status'])
    .where('assets.id', '=', assetId);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
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

export async function updateAsset(scope: TenantScope, assetId: string, changes: Updateable<AssetsTable>) {
  await scope.updateTable('assets').set(changes).where('assets.id', '=', assetId).execute();
}

/** Which assets a list shows. */
export interface AssetFilter {
  lifecycleState: string;
  purpose: string | null;
  tag: string | null;
}

const NEWEST_FIRST = [{ ref: 'assets.id', direction: 'desc' as const }];

function filtered(scope: TenantScope, filter: AssetFilter) {
  let query = scope.selectFrom('assets').where('assets.lifecycle_state', '=', filter.lifecycleState);
  if (filter.purpose !== null) query = query.where('assets.purpose', '=', filter.purpose);
  if (filter.tag !== null) query = query.where(jsonArrayHolds(scope.engine, sql.ref('assets.tags'), filter.tag));
  return query;
}

export async function listAssets(scope: TenantScope, filter: AssetFilter, window: KeysetWindow) {
  let query = filtered(scope, filter)
    .innerJoin('files', 'files.id', 'assets.file_id')
    .select([...ASSET_COLUMNS, 'files.preview_status']);
  if (window.after) query = query.where(keysetAfter(NEWEST_FIRST, window.after));
  return query
    .orderBy('assets.id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function countAssets(scope: TenantScope, filter: AssetFilter): Promise<number> {
  const row = await filtered(scope, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Operator side (the purge): completed files of any tenant whose assets are all deleted, the last
 * of them before `before` (index assets_deleted). A file no asset ever used is not the purge's.
 */
export async function filesOfDeletedAssets(db: Kysely<DB>, before: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('assets')
    .innerJoin('files', 'files.id', 'assets.file_id')
    .select('files.id')
    .distinct()
    .where('assets.deleted_at', '<', before)
    .where('files.status', '=', 'completed')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('assets as other')
            .select('other.id')
            .whereRef('other.file_id', '=', 'files.id')
            .where((o) => o.or([o('other.deleted_at', 'is', null), o('other.deleted_at', '>=', before)])),
        ),
      ),
    )
    .orderBy('files.id')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}
