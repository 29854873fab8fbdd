import type { DemoContext } from '../module.js';
import { createEntry, createTopic } from './topics.service.js';

const TOPICS = [
  {
    title: 'Why Northwind',
    entries: [
      { type: 'headline', content: 'Ship personalised pages in minutes, not sprints.' },
      { type: 'proof-point', content: 'Teams like Acme cut page build time by 80%.' },
      { type: 'proof-point', content: 'SOC 2 Type II, SSO and audit logs on every plan.' },
    ],
  },
  {
    title: 'Objection handling',
    entries: [
      { type: 'question', content: 'Does it work with our CRM?' },
      { type: 'answer', content: 'Yes: Salesforce and HubSpot sync both ways, out of the box.' },
    ],
  },
  { title: 'Pricing talking points', entries: [{ type: 'note', content: 'Annual plans include onboarding.' }] },
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
