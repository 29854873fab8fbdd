import type { Insertable } from 'kysely';
import { forUpdate } from '../../db/dialect.js';
import type { TopicEntriesTable, TopicsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

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
