import { Type, type Static } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, ResourceId, Timestamp, strict, StringEnum } from '../../http/schemas.js';

/** Limits the spec leaves open (docs/api.md, Assets). */
const ASSET_LIMITS = { name: 255, purpose: 1000 } as const;

const LIFECYCLE_STATES = ['active', 'trashed', 'deleted'] as const;

const Reference = Type.String({ minLength: 1, maxLength: 200 });

export const AssetCreateBody = Type.Object(
  {
    assetType: Type.Literal('image', { description: 'Only `image`.' }),
    name: Type.String({ minLength: 1, maxLength: ASSET_LIMITS.name }),
    purpose: Type.Optional(Type.String({ maxLength: ASSET_LIMITS.purpose, default: '' })),
    fileId: { ...Reference, description: 'A completed upload of this tenant (POST /v0/files).' },
    parentAssetId: Type.Optional({ ...Reference, description: 'An asset of this tenant.' }),
    idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    hidden: Type.Optional(Type.Boolean({ default: false })),
  },
  strict,
);

export const Asset = Type.Object(
  {
    assetId: Type.String(),
    tenantId: Type.String(),
    name: Type.String(),
    purpose: Type.String(),
    tags: Type.Array(Type.String()),
    aiDescription: Nullable(Type.String()),
    parentAssetId: Nullable(Type.String()),
    hidden: Type.Boolean(),
    data: Type.Object({ type: Type.String(), fileId: Type.String() }, strict),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    trashedAt: NullableTimestamp,
    deletedAt: NullableTimestamp,
    lifecycleState: StringEnum(LIFECYCLE_STATES),
    downloadUrl: Nullable(Type.String({ description: 'Signed; valid for at least an hour.' })),
    previewDownloadUrl: Nullable(
      Type.String({ description: 'Signed 512 px WebP preview; null until the preview is ready.' }),
    ),
  },
  { $id: 'Asset', ...strict },
);

export const AssetParams = Type.Object({ asset_id: ResourceId }, strict);

export type Asset = Static<typeof Asset>;
export type AssetCreateBody = Static<typeof AssetCreateBody>;

export const assetSchemas = [Asset];
