import { describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { makePerson } from '../../../test/factories/persons.js';
import { useTestApp } from '../../../test/harness.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { gatherGenerationInput, GENERATION_INPUT_BUDGET } from './audiences.generation-input.js';
import type { GenerationInput } from './audiences.generator.js';
import { generationInput as input } from '../../../test/factories/generation-input.js';
import { checkPageCopy, type PageCopy } from './audiences.page-copy.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

const copyOf = async (i: GenerationInput) => (await builtinWriter.generate(i)).content.copy as PageCopy;

describe('the built-in writer', () => {
  it('writes the same bytes for the same input', async () => {
    const [a, b] = [await builtinWriter.generate(input()), await builtinWriter.generate(input())];
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it('composes a valid v2 page from the brief, the supplementary context and the topics', async () => {
    const artifact = await builtinWriter.generate(input());
    expect(artifact.contentType).toBe('application/vnd.audience-page.v2+json');
    const copy = artifact.content.copy as PageCopy;
    expect(checkPageCopy(copy).ok).toBe(true);
    expect(artifact.content.title).toBe('Pricing that fits Globex');
    expect(copy.hero).toEqual({
      eyebrow: 'For Sam Lee · Globex',
      headline: 'Pricing that fits Globex',
      subheadline: 'Pages per account, written from your knowledge.',
    });
    expect(copy.sections).toEqual([
      { kind: 'text', heading: '', body: 'Priced by live pages, not seats.' },
      { kind: 'text', heading: 'For Globex', body: 'Globex opens three regional teams.' },
      {
        kind: 'benefits',
        heading: 'What Globex gets',
        intro: '',
        items: [
          { title: 'A page per account', text: 'Every prospect gets their own page.' },
          { title: 'Reuse', text: 'Answers and proof points come from your topics.' },
        ],
      },
      {
        kind: 'steps',
        heading: 'How buying works',
        intro: '',
        items: [
          { title: 'Try it', text: '14 days free.' },
          { title: 'Go live', text: 'Onboarding included.' },
        ],
      },
      {
        kind: 'benefits',
        heading: 'Security',
        intro: 'Single sign-on on every plan.',
        items: [
          { title: '', text: 'Audit logs' },
          { title: '', text: 'SOC 2 report' },
        ],
      },
      {
        kind: 'proof',
        heading: '',
        items: [{ quote: 'We stopped sending one deck to everyone.', attribution: 'Dana Ortiz, VP Sales' }],
      },
      {
        kind: 'faq',
        heading: 'Frequently asked questions',
        items: [{ question: 'Does it work with our CRM?', answer: 'Yes, both ways.' }],
      },
    ]);
    expect(copy.actions).toEqual([{ actionId: 'a1', buttonTitle: 'Book a demo', purpose: 'Book time with Sam Lee' }]);
    expect(copy.seo).toEqual({
      title: 'Northwind pricing',
      description: 'Pages per account, written from your knowledge.',
    });
  });

  it('writes for whoever the audience is: another person, or no person at all', async () => {
    const other = await copyOf(
      input({
        person: {
          personId: 'p2',
          name: 'Jane Doe',
          emailDomain: 'acme.example',
          accountDomain: 'acme.example',
          accountName: 'Acme',
        },
        version: { versionId: 'v', versionNumber: 2, isNewPageAgent: false, supplementaryContext: null },
      }),
    );
    expect(other.hero.headline).toBe('Pricing that fits Acme');
    expect(other.hero.eyebrow).toBe('For Jane Doe · Acme');
    expect(other.sections.map((s) => s.heading)).not.toContain('For Globex');
    const nobody = await copyOf(
      input({ person: null, knowledge: [], page: { ...input().page, pageContext: 'Short.' } }),
    );
    expect(nobody.hero).toEqual({
      eyebrow: 'For Globex expansion',
      headline: 'Pricing that fits Globex expansion',
      subheadline: 'Short.',
    });
  });

  it('keeps every limit of the schema however long the tenant’s text', async () => {
    const long = 'word '.repeat(5_000);
    const copy = await copyOf(
      input({
        page: { ...input().page, title: long, pageContext: `${long}\n\n## ${long}\n\n- **${long}**: ${long}` },
        version: { versionId: 'v', versionNumber: 2, isNewPageAgent: false, supplementaryContext: long },
      }),
    );
    expect(checkPageCopy(copy)).toEqual({ ok: true, copy });
  });
});

describe('the generation input', () => {
  it('is bounded by the budget, default topic first, newest log entries first, the email’s domain only', async () => {
    const personId = await makePerson(alice.scope, t.clock, { email: 'Sam.Lee@Globex.example', name: 'Sam Lee' });
    for (let i = 0; i < 12; i++) {
      t.clock.advance(1000);
      await t.request(alice, {
        method: 'POST',
        url: '/v0/person_logs',
        payload: {
          source: 'crm',
          type: `step-${i}`,
          personId,
          payload: { note: `mail sam.lee@globex.example ${'x'.repeat(500)}` },
        },
      });
    }
    // topics created in this order; the first is the default one, and is read first whatever sortOrder says
    const topicOf = async (title: string, sortOrder?: number) =>
      (await t.request(alice, { method: 'POST', url: '/v0/topics', payload: { title, sortOrder } })).json().topicId;
    const first = await topicOf('Default', 50);
    const second = await topicOf('Other', 0);
    for (const [topicId, n] of [
      [second, 80],
      [first, 10],
    ] as const) {
      for (let i = 0; i < n; i++) {
        await t.request(alice, {
          method: 'POST',
          url: `/v0/topics/${topicId}/entries`,
          payload: { content: { type: 'note', content: `${topicId === first ? 'D' : 'O'}${i} ${'y'.repeat(400)}` } },
        });
      }
    }
    const pageId = await makePage(alice.scope, t.clock, { pageContext: 'b'.repeat(20_000) });
    const { versionId } = await makeAudience(alice.scope, t.clock, {
      pageId,
      personId,
      supplementaryContext: 's'.repeat(9_000),
    });
    const got = await gatherGenerationInput(alice.scope, versionId);

    expect(got.person).toEqual({
      personId,
      name: 'Sam Lee',
      emailDomain: 'globex.example',
      accountDomain: 'globex.example',
      accountName: null,
    });
    expect(got.page.pageContext.length).toBeLessThanOrEqual(GENERATION_INPUT_BUDGET.briefChars);
    expect(got.version.supplementaryContext!.length).toBeLessThanOrEqual(GENERATION_INPUT_BUDGET.supplementaryChars);
    expect(got.activity).toHaveLength(GENERATION_INPUT_BUDGET.activityEntries);
    expect(got.activity[0]!.type).toBe('step-11');
    for (const entry of got.activity) {
      expect(entry.excerpt!.length).toBeLessThanOrEqual(GENERATION_INPUT_BUDGET.activityExcerptChars);
      expect(entry.excerpt).toContain('…@globex.example');
      expect(entry.excerpt).not.toContain('sam.lee@');
    }
    expect(got.knowledge.map((topic) => topic.title)).toEqual(['Default', 'Other']);
    expect(got.knowledge[0]!.entries).toHaveLength(10);
    expect(got.knowledge[1]!.entries[0]!.content).toMatch(/^O0 /);
    const entries = got.knowledge.flatMap((topic) => topic.entries);
    expect(entries.length).toBeLessThanOrEqual(GENERATION_INPUT_BUDGET.knowledgeEntries);
    expect(entries.reduce((n, e) => n + e.content.length, 0)).toBeLessThanOrEqual(
      GENERATION_INPUT_BUDGET.knowledgeChars,
    );
    expect(JSON.stringify(got)).not.toMatch(/sam\.lee@/i);
  });
});
