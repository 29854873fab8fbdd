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

/** What a page link can point at. Today only an audience (its published version is served). */
const TARGET_TYPES = ['audience'] as const;
const PATH_MAX_LENGTH = 2048;

const PageLinkTarget = Type.Object(
  {
    targetType: StringEnum(TARGET_TYPES, {
      description: 'audience: the link serves the published version of the audience.',
    }),
    audienceId: Type.String({ minLength: 1, maxLength: 200 }),
  },
  strict,
);

export const PageLink = Type.Object(
  {
    pageLinkId: Type.String(),
    tenantDomainId: Nullable(Type.String()),
    path: Type.String(),
    target: PageLinkTarget,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { $id: 'PageLink', ...strict },
);

export const PageLinkParams = Type.Object({ page_link_id: ResourceId }, strict);

const TenantDomainId = Nullable(
  Type.String({ minLength: 1, maxLength: 200, description: 'A domain of the tenant; null: every domain.' }),
);
const LinkPath = Type.String({
  minLength: 1,
  maxLength: PATH_MAX_LENGTH,
  description:
    'Normalized: leading slash added, trailing and repeated slashes removed; no . or .. segments, query or ' +
    'fragment; the first segment _ap is reserved for the page runtime.',
});

export const PageLinkPatchBody = Type.Object(
  {
    tenantDomainId: Type.Optional(TenantDomainId),
    path: Type.Optional(LinkPath),
    target: Type.Optional(PageLinkTarget),
  },
  strict,
);

export const PageLinkCreateBody = Type.Object(
  {
    path: LinkPath,
    tenantDomainId: Type.Optional(TenantDomainId),
    target: PageLinkTarget,
  },
  strict,
);

export const PageLinkListQuery = Type.Object(
  {
    ...PaginationQuery,
    audienceId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Only the links that target this audience.' }),
    ),
  },
  strict,
);

export const PageLinkList = Envelope(Type.Ref('PageLink'), { $id: 'PageLinkList' });

export type PageLink = Static<typeof PageLink>;
export type PageLinkPatchBody = Static<typeof PageLinkPatchBody>;
export type PageLinkCreateBody = Static<typeof PageLinkCreateBody>;

export const pageLinkSchemas = [PageLink];
