import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Nullable, PaginationQuery, ResourceId, Timestamp, strict } from '../../http/schemas.js';

/** Limits the spec leaves open (docs/api.md, Topics). */
export const TOPIC_LIMITS = {
  title: 255,
  purpose: 2000,
  contentType: 100,
  content: 100_000,
  entriesPerTopic: 1000,
} as const;

export const MAX_SORT_ORDER = Number.MAX_SAFE_INTEGER;

const SortOrder = Type.Integer({
  minimum: 0,
  maximum: MAX_SORT_ORDER,
  description: 'Position, 0..2^53-1; ties keep creation order. Default: after the last one.',
});

export const TopicCreateBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: TOPIC_LIMITS.title }),
    sortOrder: Type.Optional(SortOrder),
  },
  strict,
);

const TopicEntryContent = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: TOPIC_LIMITS.contentType }),
    content: Type.String({ maxLength: TOPIC_LIMITS.content }),
  },
  strict,
);

export const TopicEntryCreateBody = Type.Object(
  { content: TopicEntryContent, sortOrder: Type.Optional(SortOrder) },
  strict,
);

export const TopicPatchBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: TOPIC_LIMITS.title })),
    purpose: Type.Optional(Nullable(Type.String({ maxLength: TOPIC_LIMITS.purpose }))),
    sortOrder: Type.Optional(SortOrder),
  },
  strict,
);

export const TopicEntryPatchBody = Type.Object(
  { content: Type.Optional(TopicEntryContent), sortOrder: Type.Optional(SortOrder) },
  strict,
);

export const TopicListQuery = Type.Object({ ...PaginationQuery }, strict);

export const TopicEntry = Type.Object(
  {
    topicEntryId: Type.String(),
    topicId: Type.String(),
    sortOrder: Type.Number(),
    content: Type.Object({ type: Type.String(), content: Type.String() }, strict),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'TopicEntry', ...strict },
);

export const Topic = Type.Object(
  {
    topicId: Type.String(),
    title: Type.String(),
    purpose: Nullable(Type.String()),
    sortOrder: Type.Number(),
    isDefault: Type.Boolean({ description: "True for the tenant's first topic." }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    entries: Type.Array(Type.Ref('TopicEntry'), { description: 'By sortOrder, then creation.' }),
  },
  { $id: 'Topic', ...strict },
);

export const TopicParams = Type.Object({ topic_id: ResourceId }, strict);
export const TopicEntryParams = Type.Object({ topic_id: ResourceId, topic_entry_id: ResourceId }, strict);

export const TopicList = Envelope(Type.Ref('Topic'), { $id: 'TopicList' });

export type TopicEntry = Static<typeof TopicEntry>;
export type Topic = Omit<Static<typeof Topic>, 'entries'> & { entries: TopicEntry[] };
export type TopicCreateBody = Static<typeof TopicCreateBody>;
export type TopicEntryCreateBody = Static<typeof TopicEntryCreateBody>;
export type TopicPatchBody = Static<typeof TopicPatchBody>;
export type TopicEntryPatchBody = Static<typeof TopicEntryPatchBody>;

export const topicSchemas = [TopicEntry, Topic];
