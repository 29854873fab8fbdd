import { Type, type Static } from '@sinclair/typebox';
import {
  Envelope,
  Nullable,
  NullableTimestamp,
  PaginationQuery,
  ResourceId,
  Timestamp,
  strict,
  StringEnum,
} from '../../http/schemas.js';

/** Limits the spec leaves open (docs/api.md, Assets). */
const ASSET_LIMITS = { name: 255, purpose: 1000, tags: 50, tag: 100 } as const;

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

/** `PATCH /v0/assets/{asset_id}` (an extension: docs/api.md, Assets). */
export const AssetPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: ASSET_LIMITS.name })),
    purpose: Type.Optional(Type.String({ maxLength: ASSET_LIMITS.purpose })),
    tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: ASSET_LIMITS.tag }), {
        maxItems: ASSET_LIMITS.tags,
        description: `Replaces the tags: at most ${ASSET_LIMITS.tags}, each 1..${ASSET_LIMITS.tag} characters; duplicates collapse.`,
      }),
    ),
    hidden: Type.Optional(Type.Boolean()),
  },
  strict,
);

export const AssetListQuery = Type.Object(
  {
    ...PaginationQuery,
    purpose: Type.Optional(Type.String({ maxLength: ASSET_LIMITS.purpose, description: 'Exactly this `purpose`.' })),
    tag: Type.Optional(
      Type.String({ minLength: 1, maxLength: ASSET_LIMITS.tag, description: 'Assets carrying this tag.' }),
    ),
    lifecycleState: Type.Optional(
      StringEnum(LIFECYCLE_STATES, { description: 'Assets in this state; without it, the `active` ones.' }),
    ),
  },
  strict,
);

export const AssetList = Envelope(Type.Ref('Asset'), { $id: 'AssetList' });

export type Asset = Static<typeof Asset>;
export type AssetPatchBody = Static<typeof AssetPatchBody>;
export type AssetLifecycleState = (typeof LIFECYCLE_STATES)[number];
export type AssetCreateBody = Static<typeof AssetCreateBody>;

export const assetSchemas = [Asset];
