import type { DemoContext } from '../module.js';
import { createEntry, createTopic } from './topics.service.js';

/**
 * The demo tenant's knowledge, typed the way the built-in writer reads it (docs/audience-versions.md):
 * proof points and quotes, and questions each followed by its answer.
 */
const TOPICS = [
  {
    title: 'Why Northwind',
    entries: [
      {
        type: 'proof-point',
        content: 'Teams like Acme cut the time to build a campaign page from two weeks to one day.',
      },
      { type: 'quote', content: 'We stopped sending one deck to everyone. — Dana Ortiz, VP Sales at Acme' },
      { type: 'proof-point', content: 'SOC 2 Type II, single sign-on and audit logs are included in every plan.' },
    ],
  },
  {
    title: 'Objection handling',
    entries: [
      { type: 'question', content: 'Does it work with our CRM?' },
      {
        type: 'answer',
        content: 'Yes. Salesforce and HubSpot sync both ways out of the box, including custom fields.',
      },
      { type: 'question', content: 'How long does it take to launch?' },
      {
        type: 'answer',
        content:
          'Most teams publish their first pages in the first week; onboarding covers the brand, the CRM and one campaign.',
      },
    ],
  },
  {
    title: 'Pricing talking points',
    entries: [
      { type: 'question', content: 'Is there a free trial?' },
      { type: 'answer', content: 'Yes: 14 days with every feature, no credit card needed.' },
      { type: 'note', content: 'Annual plans include onboarding with a solutions engineer.' },
    ],
  },
];

export async function topicsDemo(ctx: DemoContext) {
  const topicIds: string[] = [];
  for (const topic of TOPICS) {
    const { topicId } = await createTopic(ctx.scope, ctx.clock, { title: topic.title });
    for (const content of topic.entries) await createEntry(ctx.scope, ctx.clock, topicId, { content });
    topicIds.push(topicId);
  }
  return { topicIds };
}
