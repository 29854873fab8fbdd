import { describe, expect, it } from 'vitest';
import { drainGeneration, makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { useTestApp, type Tenant } from '../../../test/harness.js';
import { questionTerms } from './agent.passages.js';
import { retrieve } from './agent.knowledge.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

async function topicOf(tenant: Tenant, title: string): Promise<string> {
  const res = await t.request(tenant, { method: 'POST', url: '/v0/topics', payload: { title } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().topicId;
}

async function entryOf(tenant: Tenant, topicId: string, content: string): Promise<string> {
  const res = await t.request(tenant, {
    method: 'POST',
    url: `/v0/topics/${topicId}/entries`,
    payload: { content: { type: 'answer', content } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().topicEntryId;
}

const found = async (tenant: Tenant, versionId: string, question: string) =>
  (await retrieve(tenant.scope, versionId, question)).passages.map((p) => p.body);

describe('questionTerms', () => {
  it('keeps the words that carry meaning, lower-cased, once each, in any script', () => {
    expect(questionTerms('What is the PRICE of the Pro plan? price!')).toEqual(['price', 'pro', 'plan']);
    expect(questionTerms('Wie viel kostet München?')).toEqual(['wie', 'viel', 'kostet', 'münchen']);
    expect(questionTerms('"; drop table x; -- OR * NEAR(')).toEqual(['drop', 'table', 'near']);
    expect(questionTerms('?? !!')).toEqual([]);
  });
});

describe('retrieval over topic entries and the live version', () => {
  it('finds an entry right after it is written, follows a change, and forgets it right after delete', async () => {
    const { versionId } = await makeAudience(alice.scope, t.clock);
    const topicId = await topicOf(alice, 'Pricing talking points');
    expect(await found(alice, versionId, 'Is there a free trial?')).toEqual([]);

    const entryId = await entryOf(
      alice,
      topicId,
      'Yes: 14 days with every feature, no credit card needed (free trial).',
    );
    const hits = await retrieve(alice.scope, versionId, 'Is there a free trial?');
    expect(hits.passages[0]).toMatchObject({
      source_kind: 'topic_entry',
      source_id: entryId,
      label: 'Pricing talking points',
    });

    // Stemmed: "trials" finds "trial".
    expect(await found(alice, versionId, 'trials')).toHaveLength(1);

    const url = `/v0/topics/${topicId}/entries/${entryId}`;
    await t.request(alice, {
      method: 'PATCH',
      url,
      payload: { content: { type: 'answer', content: 'Onboarding is free.' } },
    });
    expect(await found(alice, versionId, 'trial')).toEqual([]);
    expect(await found(alice, versionId, 'onboarding')).toEqual(['Onboarding is free.']);

    await t.request(alice, { method: 'PATCH', url: `/v0/topics/${topicId}`, payload: { title: 'Getting started' } });
    expect((await retrieve(alice.scope, versionId, 'onboarding')).passages[0]!.label).toBe('Getting started');

    expect((await t.request(alice, { method: 'DELETE', url })).statusCode).toBe(204);
    expect(await found(alice, versionId, 'onboarding')).toEqual([]);
  });

  it('forgets a deleted topic’s entries', async () => {
    const { versionId } = await makeAudience(alice.scope, t.clock);
    const topicId = await topicOf(alice, 'Security');
    await entryOf(alice, topicId, 'We hold a SOC 2 Type II report.');
    expect(await found(alice, versionId, 'soc')).toHaveLength(1);
    await t.request(alice, { method: 'DELETE', url: `/v0/topics/${topicId}` });
    expect(await found(alice, versionId, 'soc')).toEqual([]);
  });

  it('never finds another tenant’s entries or another version’s page', async () => {
    const mine = await makeAudience(alice.scope, t.clock);
    const theirs = await makeAudience(bob.scope, t.clock);
    await entryOf(bob, await topicOf(bob, 'Bob secrets'), 'The zebracorn discount is 40 percent.');
    expect(await found(alice, mine.versionId, 'zebracorn discount')).toEqual([]);
    expect(await found(bob, theirs.versionId, 'zebracorn discount')).toHaveLength(1);
    // Alice asking with Bob's version id still only sees her own tenant's passages.
    expect(await found(alice, theirs.versionId, 'zebracorn discount')).toEqual([]);
  });

  it('retrieves the version’s brief and sections, only for that version', async () => {
    const pageId = await makePage(alice.scope, t.clock, {
      pageContext: 'Northwind sells warehouse robots that pick orders overnight.',
    });
    const { versionId } = await makeAudience(alice.scope, t.clock, { pageId });
    await drainGeneration(t.database, t.clock);
    const hits = await retrieve(alice.scope, versionId, 'Which robots do you sell?');
    expect(hits.passages.map((p) => [p.source_kind, p.source_id])).toContainEqual(['brief', versionId]);
    const other = await makeAudience(alice.scope, t.clock);
    await drainGeneration(t.database, t.clock);
    expect(
      (await retrieve(alice.scope, other.versionId, 'warehouse robots')).passages.filter(
        (p) => p.source_id === versionId,
      ),
    ).toEqual([]);
  });

  it('treats search syntax in a question as words', async () => {
    const { versionId } = await makeAudience(alice.scope, t.clock);
    await entryOf(alice, await topicOf(alice, 'Syntax'), 'Quoting rules: NEAR and OR are words here.');
    for (const question of ['"', 'NEAR(', '* OR -', 'scope_token : x', "'; select 1; --", '{label}: x', '!!&&||']) {
      await expect(retrieve(alice.scope, versionId, question)).resolves.toBeDefined();
    }
    expect(await found(alice, versionId, 'quoting NEAR(')).toHaveLength(1);
  });
});
