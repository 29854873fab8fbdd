import type { Insertable, Updateable } from 'kysely';
import { forUpdate } from '../../db/dialect.js';
import { keysetAfter, type KeysetColumn } from '../../db/keyset.js';
import type { TopicEntriesTable, TopicsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

const TOPIC_COLUMNS = [
  'topics.id',
  'topics.title',
  'topics.purpose',
  'topics.sort_order',
  'topics.is_default',
  'topics.created_at',
  'topics.updated_at',
] as const;

const ENTRY_COLUMNS = [
  'topic_entries.id',
  'topic_entries.topic_id',
  'topic_entries.sort_order',
  'topic_entries.content_type',
  'topic_entries.content',
  'topic_entries.created_at',
  'topic_entries.updated_at',
] as const;

export type TopicRow = Awaited<ReturnType<typeof findTopic>> & {};
export type EntryRow = Awaited<ReturnType<typeof listEntries>>[number];

export async function findTopic(scope: TenantScope, topicId: string, options: { lock?: boolean } = {}) {
  const query = scope.selectFrom('topics').select(TOPIC_COLUMNS).where('topics.id', '=', topicId);
  return (options.lock ? forUpdate(scope.engine, query) : query).executeTakeFirst();
}

/** The highest sortOrder of the tenant's topics, null when it has none (one index probe). */
export async function maxTopicSortOrder(scope: TenantScope): Promise<number | null> {
  const row = await scope
    .selectFrom('topics')
    .select((eb) => eb.fn.max('topics.sort_order').as('max'))
    .executeTakeFirstOrThrow();
  return row.max === null ? null : Number(row.max);
}

export async function insertTopic(scope: TenantScope, row: Omit<Insertable<TopicsTable>, 'tenant_id'>) {
  await scope.insertInto('topics', row).execute();
}

/** The listing order of topics: sortOrder, then creation (ids are time-ordered). */
const TOPIC_ORDER: KeysetColumn[] = [
  { ref: 'topics.sort_order', direction: 'asc' },
  { ref: 'topics.id', direction: 'asc' },
];

/** A page of the tenant's topics in listing order (up to `limit + 1` rows, see Pager). */
export async function listTopics(scope: TenantScope, window: KeysetWindow) {
  let query = scope.selectFrom('topics').select(TOPIC_COLUMNS);
  if (window.after) query = query.where(keysetAfter(TOPIC_ORDER, window.after));
  return query
    .orderBy('topics.sort_order')
    .orderBy('topics.id')
    .limit(window.limit + 1)
    .execute();
}

export async function countTopics(scope: TenantScope): Promise<number> {
  const row = await scope
    .selectFrom('topics')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The tenant's first topic in listing order (the one made default when the default goes). */
export async function firstTopic(scope: TenantScope) {
  return scope
    .selectFrom('topics')
    .select('topics.id')
    .orderBy('topics.sort_order')
    .orderBy('topics.id')
    .limit(1)
    .executeTakeFirst();
}

export async function updateTopic(scope: TenantScope, topicId: string, changes: Updateable<TopicsTable>) {
  await scope.updateTable('topics').set(changes).where('topics.id', '=', topicId).execute();
}

/** Deletes a topic and its entries. */
export async function deleteTopic(scope: TenantScope, topicId: string) {
  await scope.deleteFrom('topic_entries').where('topic_entries.topic_id', '=', topicId).execute();
  await scope.deleteFrom('topics').where('topics.id', '=', topicId).execute();
}

export async function touchTopic(scope: TenantScope, topicId: string, updatedAt: string) {
  await scope.updateTable('topics').set({ updated_at: updatedAt }).where('topics.id', '=', topicId).execute();
}

/** A topic's entries by sortOrder, then creation (ids are time-ordered). */
export async function listEntries(scope: TenantScope, topicId: string) {
  return scope
    .selectFrom('topic_entries')
    .select(ENTRY_COLUMNS)
    .where('topic_entries.topic_id', '=', topicId)
    .orderBy('topic_entries.sort_order')
    .orderBy('topic_entries.id')
    .execute();
}

/** The entries of several topics, each topic's in order (for a page of the topic list). */
export async function listEntriesOf(scope: TenantScope, topicIds: string[]) {
  if (topicIds.length === 0) return [];
  return scope
    .selectFrom('topic_entries')
    .select(ENTRY_COLUMNS)
    .where('topic_entries.topic_id', 'in', topicIds)
    .orderBy('topic_entries.topic_id')
    .orderBy('topic_entries.sort_order')
    .orderBy('topic_entries.id')
    .execute();
}

export async function findEntry(scope: TenantScope, topicId: string, entryId: string) {
  return scope
    .selectFrom('topic_entries')
    .select(ENTRY_COLUMNS)
    .where('topic_entries.topic_id', '=', topicId)
    .where('topic_entries.id', '=', entryId)
    .executeTakeFirst();
}

export async function updateEntry(scope: TenantScope, entryId: string, changes: Updateable<TopicEntriesTable>) {
  await scope.updateTable('topic_entries').set(changes).where('topic_entries.id', '=', entryId).execute();
}

export async function deleteEntry(scope: TenantScope, entryId: string) {
  await scope.deleteFrom('topic_entries').where('topic_entries.id', '=', entryId).execute();
}

export async function entryStats(scope: TenantScope, topicId: string) {
  const row = await scope
    .selectFrom('topic_entries')
    .where('topic_entries.topic_id', '=', topicId)
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.max('topic_entries.sort_order').as('max')])
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), max: row.max === null ? null : Number(row.max) };
}

export async function insertEntry(scope: TenantScope, row: Omit<Insertable<TopicEntriesTable>, 'tenant_id'>) {
  await scope.insertInto('topic_entries', row).execute();
}

/**
 * The tenant's topic entries with their topic, the default topic first, then topics and entries by
 * sortOrder (creation breaking ties): what generation reads of the tenant's knowledge.
 */
export async function listKnowledge(scope: TenantScope, limit: number) {
  return scope
    .selectFrom('topic_entries')
    .innerJoin('topics', (join) =>
      join.onRef('topics.id', '=', 'topic_entries.topic_id').onRef('topics.tenant_id', '=', 'topic_entries.tenant_id'),
    )
    .select([
      'topics.id as topic_id',
      'topics.title',
      'topics.is_default',
      'topic_entries.content_type',
      'topic_entries.content',
    ])
    .orderBy('topics.is_default', 'desc')
    .orderBy('topics.sort_order')
    .orderBy('topics.id')
    .orderBy('topic_entries.sort_order')
    .orderBy('topic_entries.id')
    .limit(limit)
    .execute();
}
