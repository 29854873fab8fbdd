import { Type, type Static } from '@sinclair/typebox';
import {
  Count,
  Envelope,
  Nullable,
  NullableTimestamp,
  PaginationQuery,
  ResourceId,
  SearchText,
  StringEnum,
  Timestamp,
  strict,
} from '../../http/schemas.js';

/** Limits the spec leaves open (docs/api.md, Pages). */
export const PAGE_LIMITS = {
  name: 255,
  shortText: 255,
  url: 2048,
  text: 10_000,
  pageContext: 100_000,
  scriptContent: 100_000,
  actions: 50,
  widgets: 50,
  logos: 50,
  footerGroups: 20,
  footerLinks: 50,
  scripts: 20,
  keywords: 50,
  /**
   * A whole page, as the JSON text of the Page the API returns (UTF-8 bytes). Each field is
   * bounded, but fields are patched one at a time, so without this a page could grow without end
   * and a list of 100 of them with it (docs/api.md, Pages).
   */
  pageJsonBytes: 256 * 1024,
} as const;

export const PAGE_TYPES = ['inbound', 'outbound', 'call_followup', 'sales_deck', 'custom'] as const;
const PAGE_STATUSES = ['archived', 'draft', 'published'] as const;

const Short = Type.String({ maxLength: PAGE_LIMITS.shortText });
const Url = Type.String({ maxLength: PAGE_LIMITS.url });
const Text = Type.String({ maxLength: PAGE_LIMITS.text });
const ClientId = Type.String({ minLength: 1, maxLength: 100 });

export const PageType = StringEnum(PAGE_TYPES);
export const PageStatus = StringEnum(PAGE_STATUSES);

const PageAction = Type.Object(
  {
    actionId: Type.String(),
    actionIndex: Type.Number({ description: 'Position of the action in `actions`, from 0.' }),
    purpose: Type.String(),
    buttonTitle: Type.String(),
    actionType: Type.String(),
    url: Type.String(),
  },
  { $id: 'PageAction', ...strict },
);

const PageActionInput = Type.Object(
  {
    actionId: Type.Optional({ ...ClientId, description: 'Kept when given; generated (action_…) when omitted.' }),
    purpose: Text,
    buttonTitle: Short,
    actionType: Type.String({ minLength: 1, maxLength: 100 }),
    url: Url,
  },
  strict,
);

const ActionCardWidget = Type.Object(
  {
    type: Type.String({ maxLength: 100 }),
    title: Short,
    logos: Type.Array(
      Type.Object(
        {
          image: Type.Object({ altText: Short, url: Url, fileId: Short, assetId: Short }, strict),
        },
        strict,
      ),
      { maxItems: PAGE_LIMITS.logos },
    ),
  },
  { $id: 'ActionCardWidget', ...strict },
);

const FooterLinkGroup = Type.Object(
  {
    id: Type.String({ maxLength: 100 }),
    title: Short,
    links: Type.Array(Type.Object({ text: Short, url: Url, id: Type.String({ maxLength: 100 }) }, strict), {
      maxItems: PAGE_LIMITS.footerLinks,
    }),
  },
  { $id: 'FooterLinkGroup', ...strict },
);

const PageScript = Type.Object(
  {
    content: Type.String({ maxLength: PAGE_LIMITS.scriptContent }),
    enabled: Type.Boolean(),
    name: Short,
    description: Text,
  },
  { $id: 'PageScript', ...strict },
);

const metadataText = {
  title: Short,
  description: Text,
  author: Short,
  canonicalUrl: Url,
  ogTitle: Short,
  ogDescription: Text,
  ogImageAlt: Short,
  ogSiteName: Short,
  ogUrl: Url,
  twitterTitle: Short,
  twitterDescription: Text,
  twitterImageAlt: Short,
  twitterSite: Short,
  twitterCreator: Short,
  themeColor: Type.String({ maxLength: 100 }),
};
const metadataLists = {
  keywords: Type.Array(Type.String({ maxLength: 100 }), { maxItems: PAGE_LIMITS.keywords }),
  robots: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 }),
};
const metadataImages = { ogImageUrl: Url, ogImageFileId: Short, twitterImageUrl: Url, twitterImageFileId: Short };

/** Page metadata as returned (every field optional). */
export const Metadata = Type.Partial(Type.Object({ ...metadataText, ...metadataLists, ...metadataImages }, strict), {
  $id: 'Metadata',
});

/**
 * Metadata in a PATCH: merged key by key into the stored metadata (RFC 7396); `null` removes a
 * key. The image fields are not settable here (the spec leaves them out).
 */
export const MetadataPatch = Type.Partial(
  Type.Object(
    Object.fromEntries(Object.entries({ ...metadataText, ...metadataLists }).map(([k, v]) => [k, Nullable(v)])),
    strict,
  ),
  { additionalProperties: false },
);

const ReviewBeforePublish = Type.Boolean({
  description:
    'Extension (docs/api.md, Publishing, previewing and rolling back versions): on a published page, a newly ' +
    'generated version waits as a draft for POST …/versions/{version_id}/publish (true) instead of going live by ' +
    'itself (false, the default).',
});

export const Page = Type.Object(
  {
    pageId: Type.String(),
    name: Type.String(),
    title: Type.String(),
    pageContext: Type.String(),
    pageType: PageType,
    status: PageStatus,
    brandId: Type.String(),
    actions: Type.Array(Type.Ref('PageAction')),
    actionCardWidgets: Type.Array(Type.Ref('ActionCardWidget')),
    footerLinks: Type.Array(Type.Ref('FooterLinkGroup')),
    scripts: Type.Array(Type.Ref('PageScript')),
    audiencesCount: Count,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    archivedAt: NullableTimestamp,
    deletedAt: NullableTimestamp,
    headerActionId: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Ref('Metadata')),
    reviewBeforePublish: Type.Optional(ReviewBeforePublish),
  },
  { $id: 'Page', ...strict },
);

const pagePatchFields = {
  actions: Type.Optional(Type.Array(PageActionInput, { maxItems: PAGE_LIMITS.actions })),
  actionCardWidgets: Type.Optional(Type.Array(ActionCardWidget, { maxItems: PAGE_LIMITS.widgets })),
  brandId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  footerLinks: Type.Optional(Type.Array(FooterLinkGroup, { maxItems: PAGE_LIMITS.footerGroups })),
  headerActionId: Type.Optional(Nullable(ClientId)),
  metadata: Type.Optional(MetadataPatch),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: PAGE_LIMITS.name })),
  pageContext: Type.Optional(Type.String({ minLength: 1, maxLength: PAGE_LIMITS.pageContext })),
  pageType: Type.Optional(PageType),
  scripts: Type.Optional(Type.Array(PageScript, { maxItems: PAGE_LIMITS.scripts })),
  reviewBeforePublish: Type.Optional(ReviewBeforePublish),
};

export const PagePatchBody = Type.Object(pagePatchFields, strict);

/** The brand of a page created without `brandId` (docs/api.md, Creating a page). */
export const DEFAULT_BRAND_ID = 'brand_default';

/**
 * A new page (docs/api.md, Creating a page): `name`, `pageContext`, `pageType` required; every
 * field a PATCH accepts may be sent (applied by the same code as a PATCH); `title` defaults to
 * `name`; `idempotencyKey` as on the other creates.
 */
export const PageCreateBody = Type.Object(
  {
    ...pagePatchFields,
    name: Type.String({ minLength: 1, maxLength: PAGE_LIMITS.name }),
    pageContext: Type.String({ minLength: 1, maxLength: PAGE_LIMITS.pageContext }),
    pageType: PageType,
    title: Type.Optional(Type.String({ minLength: 1, maxLength: PAGE_LIMITS.shortText })),
    idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  strict,
);

/** The body of publish, archive and restore: exactly `{}` (as the audiences' restore). */
export const PageTransitionBody = Type.Object({}, { ...strict, description: 'An empty JSON object.' });

export const PageParams = Type.Object({ page_id: ResourceId }, strict);

export const PageListQuery = Type.Object({ ...PaginationQuery }, strict);
export const PageSearchQuery = Type.Object({ ...PaginationQuery, query: SearchText }, strict);

export const PageSearchItem = Type.Object(
  { audiencesCount: Count, name: Type.String(), pageId: Type.String() },
  { $id: 'PageSearchItem', ...strict },
);

export const PageList = Envelope(Type.Ref('Page'), { $id: 'PageList' });
export const PageSearchResult = Envelope(Type.Ref('PageSearchItem'), { $id: 'PageSearchResult', nullableTotal: true });

export type Page = Static<typeof Page>;
type PageAction = Static<typeof PageAction>;
export type PagePatchBody = Static<typeof PagePatchBody>;
export type PageCreateBody = Static<typeof PageCreateBody>;
export type PageSearchItem = Static<typeof PageSearchItem>;
export type Metadata = Static<typeof Metadata>;
export type MetadataPatch = Static<typeof MetadataPatch>;
export type PageType = Static<typeof PageType>;
export type PageStatus = Static<typeof PageStatus>;

/** The named shapes of this module (OpenAPI components, response $refs). */
export const pageSchemas = [PageAction, ActionCardWidget, FooterLinkGroup, PageScript, Metadata, Page, PageSearchItem];
