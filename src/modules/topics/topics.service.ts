import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { AppError, notFound } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { forgetTopicEntries, indexTopicEntry, relabelTopicEntries } from '../agent/index.js';
import * as q from './topics.queries.js';
import {
  MAX_SORT_ORDER,
  TOPIC_LIMITS,
  type Topic,
  type TopicCreateBody,
  type TopicEntry,
  type TopicEntryCreateBody,
  type TopicEntryPatchBody,
  type TopicPatchBody,
} from './topics.schemas.js';

function toEntry(row: q.EntryRow): TopicEntry {
  return {
    topicEntryId: row.id,
    topicId: row.topic_id,
    sortOrder: Number(row.sort_order),
    content: { type: row.content_type, content: row.content },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toTopic(row: q.TopicRow, entries: q.EntryRow[]): Topic {
  return {
    topicId: row.id,
    title: row.title,
    purpose: row.purpose,
    sortOrder: Number(row.sort_order),
    isDefault: row.is_default,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    entries: entries.map(toEntry),
  };
}

/** The position after the last one; 409 when the last one already sits at 2^53-1. */
function nextSortOrder(max: number | null, what: string): number {
  if (max === null) return 0;
  if (max >= MAX_SORT_ORDER) {
    throw new AppError(
      'sort_order_exhausted',
      `The last ${what} already has the highest sortOrder (${MAX_SORT_ORDER}); send an explicit sortOrder.`,
    );
  }
  return max + 1;
}

export async function getTopic(scope: TenantScope, topicId: string): Promise<Topic> {
  const row = await q.findTopic(scope, topicId);
  if (row === undefined) throw notFound('topic', topicId);
  return toTopic(row, await q.listEntries(scope, topicId));
}

/**
 * Creates a topic (docs/api.md, endpoint 18). The tenant's first topic is its default one. The
 * tenant's topic creations are serialized, so "first" and "after the last" hold under concurrency.
 */
export async function createTopic(scope: TenantScope, clock: Clock, input: TopicCreateBody): Promise<Topic> {
  return scope.transaction(async (tx) => {
    await tx.lock('topics');
    const max = await q.maxTopicSortOrder(tx);
    const now = isoNow(clock);
    const row = {
      id: newId('topic'),
      title: input.title,
      purpose: null,
      sort_order: input.sortOrder ?? nextSortOrder(max, 'topic'),
      is_default: max === null,
      created_at: now,
      updated_at: now,
    };
    await q.insertTopic(tx, row);
    return toTopic(row, []);
  });
}

/** Adds an entry to a topic of the tenant (endpoint 19); the topic's updatedAt moves with it. */
export async function createEntry(
  scope: TenantScope,
  clock: Clock,
  topicId: string,
  input: TopicEntryCreateBody,
): Promise<TopicEntry> {
  return scope.transaction(async (tx) => {
    const topic = await q.findTopic(tx, topicId, { lock: true });
    if (topic === undefined) throw notFound('topic', topicId);
    const stats = await q.entryStats(tx, topicId);
    if (stats.count >= TOPIC_LIMITS.entriesPerTopic) {
      throw new AppError('topic_full', `A topic holds at most ${TOPIC_LIMITS.entriesPerTopic} entries.`);
    }
    const now = isoNow(clock);
    const row = {
      id: newId('topicEntry'),
      topic_id: topicId,
      sort_order: input.sortOrder ?? nextSortOrder(stats.max, 'entry of the topic'),
      content_type: input.content.type,
      content: input.content.content,
      created_at: now,
      updated_at: now,
    };
    await q.insertEntry(tx, row);
    await q.touchTopic(tx, topicId, now);
    await indexTopicEntry(tx, row, topic.title);
    return toEntry(row);
  });
}

/** A page of the tenant's topics by sortOrder then creation, each with its entries (extension). */
export async function listTopics(scope: TenantScope, window: KeysetWindow) {
  const [rows, totalCount] = await Promise.all([q.listTopics(scope, window), q.countTopics(scope)]);
  const entries = await q.listEntriesOf(
    scope,
    rows.map((r) => r.id),
  );
  const byTopic = new Map<string, q.EntryRow[]>();
  for (const entry of entries) {
    const list = byTopic.get(entry.topic_id) ?? [];
    list.push(entry);
    byTopic.set(entry.topic_id, list);
  }
  return { items: rows.map((row) => toTopic(row, byTopic.get(row.id) ?? [])), totalCount };
}

/**
 * Changes a topic's title, purpose or position (extension). Absent fields stay; a patch that
 * changes nothing leaves `updatedAt` alone.
 */
export async function patchTopic(scope: TenantScope, clock: Clock, topicId: string, input: TopicPatchBody) {
  return scope.transaction(async (tx) => {
    const row = await q.findTopic(tx, topicId, { lock: true });
    if (row === undefined) throw notFound('topic', topicId);
    const changes = {
      ...(input.title !== undefined && input.title !== row.title ? { title: input.title } : {}),
      ...(input.purpose !== undefined && input.purpose !== row.purpose ? { purpose: input.purpose } : {}),
      ...(input.sortOrder !== undefined && input.sortOrder !== Number(row.sort_order)
        ? { sort_order: input.sortOrder }
        : {}),
    };
    if (Object.keys(changes).length === 0) return toTopic(row, await q.listEntries(tx, topicId));
    const updated = { ...row, ...changes, updated_at: isoNow(clock) };
    await q.updateTopic(tx, topicId, { ...changes, updated_at: updated.updated_at });
    const entries = await q.listEntries(tx, topicId);
    if (changes.title !== undefined) {
      await relabelTopicEntries(
        tx,
        entries.map((e) => e.id),
        changes.title,
      );
    }
    return toTopic(updated, entries);
  });
}

/**
 * Deletes a topic with its entries (extension). When it was the default, the first remaining
 * topic (by sortOrder, then creation) becomes the default, so a tenant with topics has one.
 */
export async function deleteTopic(scope: TenantScope, topicId: string): Promise<void> {
  await scope.transaction(async (tx) => {
    await tx.lock('topics');
    const row = await q.findTopic(tx, topicId, { lock: true });
    if (row === undefined) throw notFound('topic', topicId);
    await forgetTopicEntries(
      tx,
      (await q.listEntries(tx, topicId)).map((e) => e.id),
    );
    await q.deleteTopic(tx, topicId);
    if (row.is_default) {
      const next = await q.firstTopic(tx);
      if (next !== undefined) await q.updateTopic(tx, next.id, { is_default: true });
    }
  });
}

/**
 * Changes an entry's content or position (extension); the topic's `updatedAt` moves with it. A
 * patch that changes nothing leaves both alone. An entry of another topic is a 404.
 */
export async function patchEntry(
  scope: TenantScope,
  clock: Clock,
  topicId: string,
  entryId: string,
  input: TopicEntryPatchBody,
): Promise<TopicEntry> {
  return scope.transaction(async (tx) => {
    const topic = await q.findTopic(tx, topicId, { lock: true });
    if (topic === undefined) throw notFound('topic', topicId);
    const row = await q.findEntry(tx, topicId, entryId);
    if (row === undefined) throw notFound('topic entry', entryId);
    const changes = {
      ...(input.content !== undefined && input.content.type !== row.content_type
        ? { content_type: input.content.type }
        : {}),
      ...(input.content !== undefined && input.content.content !== row.content
        ? { content: input.content.content }
        : {}),
      ...(input.sortOrder !== undefined && input.sortOrder !== Number(row.sort_order)
        ? { sort_order: input.sortOrder }
        : {}),
    };
    if (Object.keys(changes).length === 0) return toEntry(row);
    const now = isoNow(clock);
    const updated = { ...row, ...changes, updated_at: now };
    await q.updateEntry(tx, entryId, { ...changes, updated_at: now });
    await q.touchTopic(tx, topicId, now);
    if (changes.content !== undefined) await indexTopicEntry(tx, updated, topic.title);
    return toEntry(updated);
  });
}

/** Deletes an entry (extension); the topic's `updatedAt` moves. */
export async function deleteEntry(scope: TenantScope, clock: Clock, topicId: string, entryId: string) {
  await scope.transaction(async (tx) => {
    const topic = await q.findTopic(tx, topicId, { lock: true });
    if (topic === undefined) throw notFound('topic', topicId);
    const row = await q.findEntry(tx, topicId, entryId);
    if (row === undefined) throw notFound('topic entry', entryId);
    await forgetTopicEntries(tx, [entryId]);
    await q.deleteEntry(tx, entryId);
    await q.touchTopic(tx, topicId, isoNow(clock));
  });
}
