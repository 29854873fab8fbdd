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

const get = (tenant: Tenant, url: string) => t.request(tenant, { method: 'GET', url });
const patch = (tenant: Tenant, url: string, body: unknown) =>
  t.request(tenant, { method: 'PATCH', url, payload: body as object });
const del = (tenant: Tenant, url: string) => t.request(tenant, { method: 'DELETE', url });

describe('GET /v0/topics (extension)', () => {
  it('lists the topics by sortOrder then creation, with their entries, in pages', async () => {
    const tenant = await t.createTenant();
    const a = await topicOf(tenant, 'A');
    const b = await topicOf(tenant, 'B');
    const c = (await createTopic(tenant, { title: 'C', sortOrder: 0 })).json().topicId;
    await createEntry(tenant, b, { content: { type: 'note', content: 'b2' }, sortOrder: 5 });
    await createEntry(tenant, b, { content: { type: 'note', content: 'b1' }, sortOrder: 1 });
    await topicOf(bob, 'Not Alice');

    const first = await get(tenant, '/v0/topics?limit=2');
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(body.items.map((x: { topicId: string }) => x.topicId)).toEqual([a, c]);
    const second = (await get(tenant, `/v0/topics?limit=2&cursor=${body.nextCursor}`)).json();
    expect(second).toMatchObject({ hasMore: false, nextCursor: null, totalCount: 3 });
    expect(second.items).toHaveLength(1);
    expect(second.items[0]).toMatchObject({ topicId: b, title: 'B' });
    expect(second.items[0].entries.map((e: { content: { content: string } }) => e.content.content)).toEqual([
      'b1',
      'b2',
    ]);
    // A cursor of another tenant's list is refused.
    const foreign = await get(bob, `/v0/topics?cursor=${body.nextCursor}`);
    expect(foreign.statusCode).toBe(400);
    expect(problem(foreign).code).toBe('invalid_cursor');
  });

  it('is an empty envelope for a tenant without topics', async () => {
    const tenant = await t.createTenant();
    expect((await get(tenant, '/v0/topics')).json()).toEqual({
      hasMore: false,
      items: [],
      nextCursor: null,
      totalCount: 0,
    });
  });
});

describe('GET /v0/topics/{topic_id} (extension)', () => {
  it('answers the topic with its entries; 404 for another tenant’s or an unknown one', async () => {
    const topicId = await topicOf(alice, 'Pricing');
    await createEntry(alice, topicId, { content: { type: 'note', content: 'x' } });
    const res = await get(alice, `/v0/topics/${topicId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(await getTopic(alice.scope, topicId));
    expect(res.json().entries).toHaveLength(1);
    for (const id of [topicId, newId('topic')]) {
      const other = await get(bob, `/v0/topics/${id}`);
      expect(other.statusCode).toBe(404);
      expect(problem(other).code).toBe('not_found');
    }
    expect((await get(alice, '/v0/topics/x')).statusCode).toBe(404);
  });
});

describe('PATCH /v0/topics/{topic_id} (extension)', () => {
  it('changes title, purpose and position; reorders the list; a no-op keeps updatedAt', async () => {
    const tenant = await t.createTenant();
    const a = await topicOf(tenant, 'A');
    const b = await topicOf(tenant, 'B');
    t.clock.advance(1000);
    const res = await patch(tenant, `/v0/topics/${b}`, { title: 'B2', purpose: 'Answers pricing', sortOrder: 0 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      topicId: b,
      title: 'B2',
      purpose: 'Answers pricing',
      sortOrder: 0,
      isDefault: false,
      updatedAt: t.clock.now().toISOString(),
    });
    // Ties keep creation order: a (0) then b (0).
    const order = (await get(tenant, '/v0/topics')).json().items.map((x: { topicId: string }) => x.topicId);
    expect(order).toEqual([a, b]);
    await patch(tenant, `/v0/topics/${a}`, { sortOrder: 7 });
    expect((await get(tenant, '/v0/topics')).json().items.map((x: { topicId: string }) => x.topicId)).toEqual([b, a]);
    const updatedAt = (await getTopic(tenant.scope, b)).updatedAt;
    t.clock.advance(1000);
    const same = await patch(tenant, `/v0/topics/${b}`, { title: 'B2' });
    expect(same.json().updatedAt).toBe(updatedAt);
    expect((await patch(tenant, `/v0/topics/${b}`, {})).json().updatedAt).toBe(updatedAt);
    expect((await patch(tenant, `/v0/topics/${b}`, { purpose: null })).json().purpose).toBeNull();
  });

  it.each([
    [{ title: '' }, '/body/title'],
    [{ title: null }, '/body/title'],
    [{ purpose: 'p'.repeat(TOPIC_LIMITS.purpose + 1) }, '/body/purpose'],
    [{ sortOrder: -1 }, '/body/sortOrder'],
    [{ sortOrder: 2 ** 53 }, '/body/sortOrder'],
    [{ isDefault: true }, '/body/isDefault'],
  ])('refuses %j with 422 and changes nothing', async (body, field) => {
    const topicId = await topicOf(alice, 'Unchanged');
    const before = await getTopic(alice.scope, topicId);
    const res = await patch(alice, `/v0/topics/${topicId}`, body);
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors.map((e) => e.path)).toContain(field);
    expect(await getTopic(alice.scope, topicId)).toEqual(before);
  });

  it('is 404 on another tenant’s topic and changes nothing', async () => {
    const bobsTopic = await topicOf(bob, 'Bob');
    const res = await patch(alice, `/v0/topics/${bobsTopic}`, { title: 'Stolen' });
    expect(res.statusCode).toBe(404);
    expect((await getTopic(bob.scope, bobsTopic)).title).toBe('Bob');
  });
});

describe('DELETE /v0/topics/{topic_id} (extension)', () => {
  it('deletes the topic and its entries; the next topic becomes the default', async () => {
    const tenant = await t.createTenant();
    const a = await topicOf(tenant, 'A');
    const b = await topicOf(tenant, 'B');
    const c = await topicOf(tenant, 'C');
    await patch(tenant, `/v0/topics/${c}`, { sortOrder: 0 });
    await createEntry(tenant, a, { content: { type: 'note', content: 'gone' } });
    const before = await rows();
    const res = await del(tenant, `/v0/topics/${a}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await rows()).toEqual({ topics: before.topics - 1, entries: before.entries - 1 });
    expect((await get(tenant, `/v0/topics/${a}`)).statusCode).toBe(404);
    expect((await del(tenant, `/v0/topics/${a}`)).statusCode).toBe(404);
    const left = (await get(tenant, '/v0/topics')).json().items;
    expect(left.map((x: { topicId: string; isDefault: boolean }) => [x.topicId, x.isDefault])).toEqual([
      [c, true],
      [b, false],
    ]);
    // Deleting a non-default topic leaves the default alone; deleting all, the next one is default again.
    await del(tenant, `/v0/topics/${b}`);
    expect((await getTopic(tenant.scope, c)).isDefault).toBe(true);
    await del(tenant, `/v0/topics/${c}`);
    expect((await createTopic(tenant, { title: 'New' })).json()).toMatchObject({ isDefault: true, sortOrder: 0 });
  });

  it('is 404 on another tenant’s topic and deletes nothing', async () => {
    const bobsTopic = await topicOf(bob, 'Bob');
    const before = await rows();
    expect((await del(alice, `/v0/topics/${bobsTopic}`)).statusCode).toBe(404);
    expect(await rows()).toEqual(before);
  });
});

describe('PATCH and DELETE /v0/topics/{topic_id}/entries/{topic_entry_id} (extension)', () => {
  it('changes content and position, moving the topic’s updatedAt; a no-op changes nothing', async () => {
    const topicId = await topicOf(alice, 'Entries');
    const one = (await createEntry(alice, topicId, { content: { type: 'note', content: 'one' } })).json();
    const two = (await createEntry(alice, topicId, { content: { type: 'note', content: 'two' } })).json();
    t.clock.advance(1000);
    const res = await patch(alice, `/v0/topics/${topicId}/entries/${two.topicEntryId}`, {
      content: { type: 'answer', content: 'TWO' },
      sortOrder: 0,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...two,
      content: { type: 'answer', content: 'TWO' },
      sortOrder: 0,
      updatedAt: t.clock.now().toISOString(),
    });
    const topic = await getTopic(alice.scope, topicId);
    expect(topic.entries.map((e) => e.topicEntryId)).toEqual([one.topicEntryId, two.topicEntryId]);
    await patch(alice, `/v0/topics/${topicId}/entries/${one.topicEntryId}`, { sortOrder: 3 });
    expect((await getTopic(alice.scope, topicId)).entries.map((e) => e.content.content)).toEqual(['TWO', 'one']);
    expect(topic.updatedAt).toBe(t.clock.now().toISOString());
    t.clock.advance(1000);
    const same = await patch(alice, `/v0/topics/${topicId}/entries/${one.topicEntryId}`, {
      content: { type: 'note', content: 'one' },
    });
    expect(same.json()).toEqual((await getTopic(alice.scope, topicId)).entries[1]);
    expect((await getTopic(alice.scope, topicId)).updatedAt).toBe(topic.updatedAt);
  });

  it('deletes an entry (204), moving the topic’s updatedAt; a second delete is 404', async () => {
    const topicId = await topicOf(alice, 'Deleting');
    const one = (await createEntry(alice, topicId, { content: { type: 'note', content: 'one' } })).json();
    t.clock.advance(1000);
    const url = `/v0/topics/${topicId}/entries/${one.topicEntryId}`;
    expect((await del(alice, url)).statusCode).toBe(204);
    const topic = await getTopic(alice.scope, topicId);
    expect(topic.entries).toEqual([]);
    expect(topic.updatedAt).toBe(t.clock.now().toISOString());
    expect((await del(alice, url)).statusCode).toBe(404);
  });

  it('is 404 for another tenant’s entry, or an entry under another topic, and changes nothing', async () => {
    const bobsTopic = await topicOf(bob, 'Bob');
    const bobsEntry = (await createEntry(bob, bobsTopic, { content: { type: 'note', content: 'b' } })).json();
    const alicesTopic = await topicOf(alice, 'Alice');
    const other = await topicOf(alice, 'Other');
    const alicesEntry = (await createEntry(alice, alicesTopic, { content: { type: 'note', content: 'a' } })).json();
    const before = await rows();
    for (const url of [
      `/v0/topics/${bobsTopic}/entries/${bobsEntry.topicEntryId}`,
      `/v0/topics/${alicesTopic}/entries/${bobsEntry.topicEntryId}`,
      `/v0/topics/${other}/entries/${alicesEntry.topicEntryId}`,
      `/v0/topics/${alicesTopic}/entries/${newId('topicEntry')}`,
    ]) {
      const p = await patch(alice, url, { content: { type: 'note', content: 'hacked' } });
      expect(p.statusCode, url).toBe(404);
      expect((await del(alice, url)).statusCode, url).toBe(404);
    }
    expect(await rows()).toEqual(before);
    expect((await getTopic(bob.scope, bobsTopic)).entries[0]!.content.content).toBe('b');
    expect((await getTopic(alice.scope, alicesTopic)).entries[0]!.content.content).toBe('a');
  });

  it.each([
    [{ content: { type: 'note' } }, '/body/content/content'],
    [{ content: null }, '/body/content'],
    [{ sortOrder: 1.5 }, '/body/sortOrder'],
    [{ topicId: 'x' }, '/body/topicId'],
  ])('refuses %j with 422', async (body, field) => {
    const topicId = await topicOf(alice, 'Validated');
    const entry = (await createEntry(alice, topicId, { content: { type: 'note', content: 'v' } })).json();
    const res = await patch(alice, `/v0/topics/${topicId}/entries/${entry.topicEntryId}`, body);
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors.map((e) => e.path)).toContain(field);
  });
});
