import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound, validationFailed } from '../../http/errors.js';
import { withIdempotency } from '../../idempotency/idempotency.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { findCompletedFile } from '../files/index.js';
import { ASSETS_CHANNEL } from './assets.describer.js';
import * as q from './assets.queries.js';
import type { Asset, AssetCreateBody } from './assets.schemas.js';

/** Builds the signed URLs of a file; the routes make one per request (it knows the origin). */
export interface FileLinks {
  download(tenantId: string, fileId: string): string;
  preview(tenantId: string, fileId: string): string;
}

type StoredAsset = Omit<Asset, 'downloadUrl' | 'previewDownloadUrl'>;

function toStoredAsset(row: Omit<q.AssetRow, 'preview_status'>): StoredAsset {
  return {
    assetId: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    purpose: row.purpose,
    tags: row.tags,
    aiDescription: row.ai_description,
    parentAssetId: row.parent_asset_id,
    hidden: row.hidden,
    data: { type: row.asset_type, fileId: row.file_id },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    trashedAt: row.trashed_at,
    deletedAt: row.deleted_at,
    lifecycleState: row.lifecycle_state as Asset['lifecycleState'],
  };
}

/** URLs are made at read time (they expire), so they are never stored, not even for a replay. */
function withLinks(asset: StoredAsset, previewReady: boolean, links: FileLinks): Asset {
  return {
    ...asset,
    downloadUrl: links.download(asset.tenantId, asset.data.fileId),
    previewDownloadUrl: previewReady ? links.preview(asset.tenantId, asset.data.fileId) : null,
  };
}

export async function getAsset(scope: TenantScope, assetId: string, links: FileLinks): Promise<Asset> {
  const row = await q.findAsset(scope, assetId);
  if (row === undefined) throw notFound('asset', assetId);
  return withLinks(toStoredAsset(row), row.preview_status === 'ready', links);
}

/**
 * Creates an image asset (docs/api.md, endpoint 16). `fileId` must be a completed upload of the
 * tenant and `parentAssetId` an asset of the tenant, else 422. With an `idempotencyKey`, a repeat
 * returns the first result (status 201, the same asset, with fresh URLs) and writes nothing. A new
 * asset wakes the describer once committed.
 */
export async function createAsset(
  scope: TenantScope,
  clock: Clock,
  input: AssetCreateBody,
  links: FileLinks,
): Promise<{ status: number; body: Asset; replayed: boolean }> {
  const result = await withIdempotency<StoredAsset>(
    scope,
    clock,
    { operation: 'assets.create', key: input.idempotencyKey, body: input },
    async (tx) => {
      const file = await findCompletedFile(tx, input.fileId);
      if (file === undefined) {
        throw validationFailed('/body/fileId', 'must be the fileId of a completed image upload of this tenant');
      }
      if (input.parentAssetId !== undefined && !(await q.assetExists(tx, input.parentAssetId))) {
        throw validationFailed('/body/parentAssetId', 'must be the assetId of an asset of this tenant');
      }
      const now = isoNow(clock);
      const row = {
        id: newId('asset'),
        tenant_id: tx.tenantId,
        asset_type: input.assetType,
        name: input.name,
        purpose: input.purpose ?? '',
        file_id: file.id,
        parent_asset_id: input.parentAssetId ?? null,
        hidden: input.hidden ?? false,
        tags: [] as string[],
        ai_description: null,
        lifecycle_state: 'active',
        created_at: now,
        updated_at: now,
        trashed_at: null,
        deleted_at: null,
      };
      const { tenant_id: _tenant, ...values } = row;
      await q.insertAsset(tx, { ...values, tags: json(row.tags) });
      tx.afterCommit(ASSETS_CHANNEL);
      return { status: 201, body: toStoredAsset(row) };
    },
  );
  const current = await q.findAsset(scope, result.body.assetId);
  return { ...result, body: withLinks(result.body, current?.preview_status === 'ready', links) };
}

/** The file behind a live (not deleted) asset of the tenant, for serving it on a page; else null. */
export async function liveAssetFileId(scope: TenantScope, assetId: string): Promise<string | null> {
  const row = await q.findAsset(scope, assetId);
  return row === undefined || row.lifecycle_state !== 'active' ? null : row.file_id;
}
