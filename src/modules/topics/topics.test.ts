import { describe, expect, it } from 'vitest';
import { problem, useTestApp, type Tenant } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';
import { TOPIC_LIMITS } from './topics.schemas.js';
import { topicsDemo } from './topics.demo.js';
import { getTopic } from './topics.service.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const createTopic = (tenant: Tenant, body: unknown) =>
  t.request(tenant, { method: 'POST', url: '/v0/topics', payload: body as object });
const createEntry = (tenant: Tenant, topicId: string, body: unknown) =>
  t.request(tenant, { method: 'POST', url: `/v0/topics/${topicId}/entries`, payload: body as object });

async function rows() {
  const count = async (table: 'topics' | 'topic_entries') =>
    Number(
      (
        await t.database.kysely
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { topics: await count('topics'), entries: await count('topic_entries') };
}

async function topicOf(tenant: Tenant, title = 'A topic'): Promise<string> {
  const res = await createTopic(tenant, { title });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().topicId;
}

describe('POST /v0/topics', () => {
  it('makes the tenant’s first topic its default and places new topics after the last one', async () => {
    const tenant = await t.createTenant();
    const first = await createTopic(tenant, { title: 'Why us' });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      topicId: expect.stringMatching(/^topic_[0-9a-z]{26}$/),
      title: 'Why us',
      purpose: null,
      sortOrder: 0,
      isDefault: true,
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
      entries: [],
    });
    const second = (await createTopic(tenant, { title: 'Objections' })).json();
    expect(second).toMatchObject({ sortOrder: 1, isDefault: false });
    expect((await createTopic(tenant, { title: 'Pinned', sortOrder: 10 })).json().sortOrder).toBe(10);
    expect((await createTopic(tenant, { title: 'Next' })).json().sortOrder).toBe(11);
    // Another tenant's topics neither make Bob's first topic non-default nor shift its position.
    const bobsFirst = (await createTopic(await t.createTenant(), { title: 'B' })).json();
    expect(bobsFirst).toMatchObject({ isDefault: true, sortOrder: 0 });
  });

  it('gives exactly one default and distinct positions to concurrent first topics', async () => {
    const tenant = await t.createTenant();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => createTopic(tenant, { title: `T${i}` })));
    const topics = results.map((r) => r.json());
    expect(results.every((r) => r.statusCode === 201)).toBe(true);
    expect(topics.filter((x) => x.isDefault)).toHaveLength(1);
    expect(topics.map((x) => x.sortOrder).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('accepts sortOrder 0 and 2^53-1, then asks for an explicit sortOrder (409)', async () => {
    const tenant = await t.createTenant();
    expect((await createTopic(tenant, { title: 'Zero', sortOrder: 0 })).json().sortOrder).toBe(0);
    const max = await createTopic(tenant, { title: 'Max', sortOrder: Number.MAX_SAFE_INTEGER });
    expect(max.json().sortOrder).toBe(Number.MAX_SAFE_INTEGER);
    const before = await rows();
    const res = await createTopic(tenant, { title: 'After max' });
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('sort_order_exhausted');
    expect(await rows()).toEqual(before);
  });

  it.each([
    [{ title: '' }, '/body/title'],
    [{}, '/body/title'],
    [{ title: 't'.repeat(TOPIC_LIMITS.title + 1) }, '/body/title'],
    [{ title: 42 }, '/body/title'],
    [{ title: 'T', sortOrder: -1 }, '/body/sortOrder'],
    [{ title: 'T', sortOrder: 1.5 }, '/body/sortOrder'],
    [{ title: 'T', sortOrder: 2 ** 53 }, '/body/sortOrder'],
    [{ title: 'T', sortOrder: '3' }, '/body/sortOrder'],
    [{ title: 'T', purpose: 'x' }, '/body/purpose'],
  ])('refuses %j with 422 and writes nothing', async (body, field) => {
    const before = await rows();
    const res = await createTopic(alice, body);
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('validation_failed');
    expect(p.errors.map((e) => e.path)).toContain(field);
    expect(await rows()).toEqual(before);
  });
});

describe('POST /v0/topics/{topic_id}/entries', () => {
  it('adds entries after the last one, or where asked, and lists them by sortOrder then creation', async () => {
    const topicId = await topicOf(alice);
    t.clock.advance(1000);
    const first = await createEntry(alice, topicId, { content: { type: 'headline', content: 'Hello' } });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      topicEntryId: expect.stringMatching(/^entry_[0-9a-z]{26}$/),
      topicId,
      sortOrder: 0,
      content: { type: 'headline', content: 'Hello' },
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
    });
    const second = (await createEntry(alice, topicId, { content: { type: 'note', content: 'B' } })).json();
    expect(second.sortOrder).toBe(1);
    const front = (await createEntry(alice, topicId, { content: { type: 'note', content: 'C' }, sortOrder: 0 })).json();
    const empty = (await createEntry(alice, topicId, { content: { type: 'note', content: '' }, sortOrder: 5 })).json();
    expect((await createEntry(alice, topicId, { content: { type: 'note', content: 'D' } })).json().sortOrder).toBe(6);

    const topic = await getTopic(alice.scope, topicId);
    expect(topic.entries.map((e) => e.content.content)).toEqual(['Hello', 'C', 'B', '', 'D']);
    expect(topic.entries.slice(0, 4).map((e) => e.topicEntryId)).toEqual([
      first.json().topicEntryId,
      front.topicEntryId,
      second.topicEntryId,
      empty.topicEntryId,
    ]);
    // Adding an entry changes the topic.
    expect(topic.updatedAt).toBe(t.clock.now().toISOString());
    expect(topic.updatedAt > topic.createdAt).toBe(true);
  });

  it.each([
    [{ content: { content: 'no type' } }, '/body/content/type'],
    [{ content: { type: 'note' } }, '/body/content/content'],
    [{}, '/body/content'],
    [{ content: 'text' }, '/body/content'],
    [{ content: { type: '', content: 'x' } }, '/body/content/type'],
    [{ content: { type: 'note', content: 'x'.repeat(TOPIC_LIMITS.content + 1) } }, '/body/content/content'],
    [{ content: { type: 'note', content: 'x', extra: 1 } }, '/body/content/extra'],
    [{ content: { type: 'note', content: 'x' }, sortOrder: -1 }, '/body/sortOrder'],
    [{ content: { type: 'note', content: 'x' }, sortOrder: 1.5 }, '/body/sortOrder'],
    [{ content: { type: 'note', content: 'x' }, sortOrder: 2 ** 53 }, '/body/sortOrder'],
  ])('refuses %j with 422 and writes nothing', async (body, field) => {
    const topicId = await topicOf(alice);
    const before = await rows();
    const res = await createEntry(alice, topicId, body);
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('validation_failed');
    expect(p.errors.map((e) => e.path)).toContain(field);
    expect(await rows()).toEqual(before);
  });

  it('is 404 on another tenant’s topic or an unknown one, and writes nothing', async () => {
    const bobsTopic = await topicOf(bob);
    const before = await rows();
    for (const id of [bobsTopic, newId('topic'), 'nonsense']) {
      const res = await createEntry(alice, id, { content: { type: 'note', content: 'x' } });
      expect(res.statusCode, id).toBe(404);
      expect(problem(res).code).toBe('not_found');
    }
    expect(await rows()).toEqual(before);
    expect((await getTopic(bob.scope, bobsTopic)).entries).toEqual([]);
  });

  it(`holds at most ${TOPIC_LIMITS.entriesPerTopic} entries per topic (409 topic_full)`, async () => {
    const topicId = await topicOf(alice);
    const now = t.clock.now().toISOString();
    const entries = Array.from({ length: TOPIC_LIMITS.entriesPerTopic }, (_, i) => ({
      id: newId('topicEntry'),
      topic_id: topicId,
      sort_order: i,
      content_type: 'note',
      content: `${i}`,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < entries.length; i += 250) {
      await alice.scope.insertInto('topic_entries', entries.slice(i, i + 250)).execute();
    }
    const before = await rows();
    const res = await createEntry(alice, topicId, { content: { type: 'note', content: 'one more' } });
    expect(res.statusCode).toBe(409);
    expect(problem(res).code).toBe('topic_full');
    expect(await rows()).toEqual(before);
  });
});

describe('demo', () => {
  it('creates topics with entries, the first one the default', async () => {
    const tenant = await t.createTenant('Demo');
    const { topicIds } = await topicsDemo({
      scope: tenant.scope,
      clock: t.clock,
      config: t.app.ctx.config,
      created: {},
    });
    const topics = await Promise.all(topicIds.map((id) => getTopic(tenant.scope, id)));
    expect(topics.map((x) => x.isDefault)).toEqual([true, false, false]);
    expect(topics.map((x) => x.sortOrder)).toEqual([0, 1, 2]);
    expect(topics.every((x) => x.entries.length > 0)).toBe(true);
    expect(topics[0]!.entries.map((e) => e.sortOrder)).toEqual([0, 1, 2]);
  });
});
