import { describe, expect, it } from 'vitest';
import { drainGeneration, makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { useTestApp, type Tenant } from '../../../test/harness.js';
import { questionTerms, termsByFrequency } from './agent.passages.js';
import { retrieve } from './agent.knowledge.js';
import { replacePassages } from './agent.queries.js';

const t = useTestApp({ tenants: ['Alice', 'Bob', 'Carol'] });
// Carol's knowledge is the ranking tests' own (every test of a tenant searches all its entries).
const [alice, bob, carol] = t.tenants;

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

describe('termsByFrequency', () => {
  it('tells distinctive words (in fewer passages than the threshold) from common ones, and drops words found nowhere', () => {
    expect(termsByFrequency(['acme', 'pricing', 'zebra', 'plan'], [3, 500, 0, 499], 500)).toEqual({
      distinctive: ['acme', 'plan'],
      common: ['pricing'],
    });
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

describe('ranking with common words (docs/agent.md, Retrieval; small thresholds stand in for 500 and 100)', () => {
  const bodies = async (tenant: Tenant, versionId: string, question: string, rule: object) =>
    (await retrieve(tenant.scope, versionId, question, rule)).passages.map((p) => p.body);

  it('finds passages by their distinctive words, ordered by all the question’s words, then fills with common-word passages', async () => {
    const { versionId } = await makeAudience(carol.scope, t.clock);
    const topicId = await topicOf(carol, 'Notes');
    for (const content of [
      'Quokka billing runs monthly.',
      'Quokka billing is in euros.',
      'Quokka billing quokka billing for charities.',
      'Quokka billing can be paused.',
    ]) {
      await entryOf(carol, topicId, content);
    }
    await entryOf(carol, topicId, 'Wallaby customers get the annual rate.');
    await entryOf(carol, topicId, 'Wallaby onboarding takes a week.');
    await entryOf(carol, topicId, 'Wallaby quokka billing: 20 percent off.');
    // "quokka" and "billing" are in 5 passages (common at 4), "wallaby" in 3 (distinctive).
    const found = await bodies(carol, versionId, 'Wallaby quokka billing?', { commonWordPassages: 4 });
    expect(found[0]).toBe('Wallaby quokka billing: 20 percent off.');
    expect(found.slice(1, 3).sort()).toEqual([
      'Wallaby customers get the annual rate.',
      'Wallaby onboarding takes a week.',
    ]);
    // Fewer than 4 with the distinctive word: the best passage with every common word follows.
    expect(found[3]).toBe('Quokka billing quokka billing for charities.');
  });

  it('a question of common words only: passages with every word, then with any, of the first few matching', async () => {
    const { versionId } = await makeAudience(carol.scope, t.clock);
    const topicId = await topicOf(carol, 'More notes');
    for (const content of ['Numbat export is daily.', 'Numbat export is free.', 'Numbat export has no limits.']) {
      await entryOf(carol, topicId, content);
    }
    await entryOf(carol, topicId, 'Numbat numbat numbat.');
    await entryOf(carol, topicId, 'Our webhook export runs hourly.');
    await entryOf(carol, topicId, 'Export export export export.');
    // Both words are common (in 3 or more passages); all three with both come before the rest.
    const found = await bodies(carol, versionId, 'numbat export', { commonWordPassages: 3 });
    expect(found.slice(0, 3).sort()).toEqual([
      'Numbat export has no limits.',
      'Numbat export is daily.',
      'Numbat export is free.',
    ]);
    expect(found).toHaveLength(4);
    // Only the first 2 passages with every word are ranked, then the first 2 with any.
    const bounded = await bodies(carol, versionId, 'numbat export', { commonWordPassages: 3, commonOnlyRanked: 2 });
    expect(bounded.slice(0, 2).sort()).toEqual(['Numbat export is daily.', 'Numbat export is free.']);
    expect(bounded).toHaveLength(2);
    // One common word: the first 2 passages that hold it (the best, written last, is not among them).
    expect(await bodies(carol, versionId, 'export', { commonWordPassages: 3, commonOnlyRanked: 2 })).toEqual(
      expect.not.arrayContaining(['Export export export export.']),
    );
  });

  it('ranks the same, and only the tenant’s own, when another tenant’s knowledge is full of the words', async () => {
    const { versionId } = await makeAudience(carol.scope, t.clock);
    const topicId = await topicOf(carol, 'Fruit notes');
    await entryOf(carol, topicId, 'Kiwi billing is yearly, invoiced in advance for the whole team.');
    await entryOf(carol, topicId, 'Kiwi support answers.');
    // Bob's 1,000 passages with "kiwi": the whole index is full of it (SQLite then ranks within Carol's scopes).
    await replacePassages(
      bob.scope,
      { id: 'bulk_kiwi', scopeKey: bob.scope.tenantId },
      Array.from({ length: 1_000 }, (_, i) => ({ kind: 'topic_entry' as const, label: 'Kiwi', body: `Kiwi ${i}.` })),
    );
    // "billing" is common for Carol (in the quokka passages too); "kiwi" is distinctive.
    const found = await bodies(carol, versionId, 'kiwi billing', { commonWordPassages: 3 });
    expect(found.slice(0, 2)).toEqual([
      'Kiwi billing is yearly, invoiced in advance for the whole team.',
      'Kiwi support answers.',
    ]);
    expect(found.filter((body) => /^Kiwi \d+\.$/.test(body))).toEqual([]);
  });
});
