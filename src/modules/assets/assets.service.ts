import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { conflict, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { withIdempotency } from '../../idempotency/idempotency.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { findCompletedFile } from '../files/index.js';
import { ASSETS_CHANNEL } from './assets.describer.js';
import * as q from './assets.queries.js';
import type { Asset, AssetCreateBody, AssetLifecycleState, AssetPatchBody } from './assets.schemas.js';

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

/**
 * URLs are made at read time (they expire), so they are never stored, not even for a replay. A
 * deleted asset has none: its bytes are on their way out.
 */
function withLinks(asset: StoredAsset, previewReady: boolean, links: FileLinks): Asset {
  if (asset.lifecycleState === 'deleted') return { ...asset, downloadUrl: null, previewDownloadUrl: null };
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

/** The asset as the API shows it, from a row read with its file's preview status. */
function shown(row: q.AssetRow, links: FileLinks): Asset {
  return withLinks(toStoredAsset(row), row.preview_status === 'ready', links);
}

export async function listAssets(
  scope: TenantScope,
  filter: q.AssetFilter,
  window: KeysetWindow,
  links: FileLinks,
): Promise<{ items: Asset[]; totalCount: number }> {
  const [rows, totalCount] = await Promise.all([q.listAssets(scope, filter, window), q.countAssets(scope, filter)]);
  return { items: rows.map((row) => shown(row, links)), totalCount };
}

const assetDeleted = (assetId: string) =>
  conflict('asset_deleted', `Asset ${assetId} is deleted; a deleted asset cannot change.`, { assetId });

/**
 * Changes an asset of the tenant in one transaction on its locked row: `change` says what to set
 * (or nothing) given the row. A deleted asset is a 409 `asset_deleted`; an unknown one a 404.
 */
async function changeAsset(
  scope: TenantScope,
  assetId: string,
  links: FileLinks,
  change: (row: q.AssetRow) => Partial<Omit<q.AssetRow, 'tags'>> & { tags?: string[] },
): Promise<Asset> {
  return scope.transaction(async (tx) => {
    const row = await q.findAsset(tx, assetId, { lock: true });
    if (row === undefined) throw notFound('asset', assetId);
    if (row.lifecycle_state === 'deleted') throw assetDeleted(assetId);
    const changes = change(row);
    if (Object.keys(changes).length === 0) return shown(row, links);
    const { tags, ...rest } = changes;
    const updated_at = changes.updated_at ?? row.updated_at;
    await q.updateAsset(tx, assetId, { ...rest, updated_at, ...(tags === undefined ? {} : { tags: json(tags) }) });
    return shown({ ...row, ...rest, updated_at, ...(tags === undefined ? {} : { tags }) }, links);
  });
}

/**
 * `PATCH /v0/assets/{asset_id}`: name, purpose, tags (replaced; duplicates collapse, first kept),
 * hidden. Fields that already hold the value change nothing, and `updatedAt` moves only when
 * something changed. Trashed assets may be edited; deleted ones are a 409.
 */
export async function patchAsset(
  scope: TenantScope,
  clock: Clock,
  assetId: string,
  body: AssetPatchBody,
  links: FileLinks,
): Promise<Asset> {
  return changeAsset(scope, assetId, links, (row) => {
    const changes: Partial<Omit<q.AssetRow, 'tags'>> & { tags?: string[] } = {};
    if (body.name !== undefined && body.name !== row.name) changes.name = body.name;
    if (body.purpose !== undefined && body.purpose !== row.purpose) changes.purpose = body.purpose;
    if (body.hidden !== undefined && body.hidden !== row.hidden) changes.hidden = body.hidden;
    if (body.tags !== undefined) {
      const tags = [...new Set(body.tags)];
      if (JSON.stringify(tags) !== JSON.stringify(row.tags)) changes.tags = tags;
    }
    if (Object.keys(changes).length > 0) changes.updated_at = isoNow(clock);
    return changes;
  });
}

/**
 * Moves an asset between `active` and `trashed` (docs/api.md, Assets: lifecycle). Moving it where it
 * already is changes nothing and answers 200, so a retried request never fails.
 */
export async function moveAsset(
  scope: TenantScope,
  clock: Clock,
  assetId: string,
  to: Exclude<AssetLifecycleState, 'deleted'>,
  links: FileLinks,
): Promise<Asset> {
  return changeAsset(scope, assetId, links, (row) => {
    if (row.lifecycle_state === to) return {};
    const now = isoNow(clock);
    return { lifecycle_state: to, trashed_at: to === 'trashed' ? now : null, updated_at: now };
  });
}

/**
 * `DELETE /v0/assets/{asset_id}`: the asset is `deleted` for good (it cannot be restored, pages stop
 * showing its image at once and show its alt text). Its file's bytes are removed once the grace
 * period has passed, if no other asset uses the file (assets.purge.ts). A second DELETE answers the
 * deleted asset again.
 */
export async function deleteAsset(scope: TenantScope, clock: Clock, assetId: string, links: FileLinks) {
  return scope.transaction(async (tx) => {
    const row = await q.findAsset(tx, assetId, { lock: true });
    if (row === undefined) throw notFound('asset', assetId);
    if (row.lifecycle_state === 'deleted') return shown(row, links);
    const now = isoNow(clock);
    const changes = { lifecycle_state: 'deleted', deleted_at: now, updated_at: now };
    await q.updateAsset(tx, assetId, changes);
    return shown({ ...row, ...changes }, links);
  });
}

/** The file behind a live (not deleted) asset of the tenant, for serving it on a page; else null. */
export async function liveAssetFileId(scope: TenantScope, assetId: string): Promise<string | null> {
  const row = await q.findAsset(scope, assetId);
  return row === undefined || row.lifecycle_state !== 'active' ? null : row.file_id;
}
