import type { DemoContext } from '../module.js';
import { patchPerson } from '../persons/index.js';
import type { PersonLogBody } from './person-logs.schemas.js';
import { writePersonLog } from './person-logs.service.js';

/** Log entries as integrations send them; the persons they name are created on the way. */
function demoPersonLogs(): PersonLogBody[] {
  return [
    // The people the demo audiences address (audiences.demo.ts), in its order.
    {
      source: 'hubspot',
      type: 'page-viewed',
      name: 'Jane Doe',
      email: 'jane.doe@acme.example',
      payload: { page: 'pricing', visitsThisWeek: 2 },
    },
    {
      source: 'calendly',
      type: 'meeting-booked',
      name: 'Sam Lee',
      email: 'sam.lee@globex.example',
      payload: { topic: 'Rolling out to three regional sales teams', meetingAt: '2026-11-20T16:00:00.000Z' },
    },
    {
      source: 'salesforce',
      type: 'opportunity-updated',
      name: 'Pat Kim',
      email: 'pat.kim@initech.example',
      payload: { stage: 'evaluation', focus: 'annual budget' },
    },
    {
      source: 'web-form',
      type: 'whitepaper-downloaded',
      name: 'Alex Ray',
      email: 'alex.ray@umbrella.example',
      payload: { title: 'Security and SSO at Northwind' },
    },
    {
      source: 'web-form',
      type: 'form-submitted',
      name: 'Ada Lovelace',
      email: 'ada@acme.example',
      payload: { form: 'pricing', plan: 'enterprise' },
    },
    {
      source: 'hubspot',
      type: 'webhook',
      email: 'ADA@acme.example',
      phoneNumber: '+442071838750',
      payload: { lifecycleStage: 'opportunity' },
      idempotencyKey: 'hubspot-evt-1001',
    },
    {
      source: 'web-form',
      type: 'form-submitted',
      name: 'Grace Hopper',
      email: 'grace@acme.example',
      payload: { form: 'demo-request' },
    },
    {
      source: 'enrichment',
      type: 'profile-enriched',
      name: 'Linus Torvalds',
      socialProfileUrl: 'https://www.linkedin.com/in/linustorvalds/',
      payload: { title: 'Engineer' },
    },
    {
      source: 'calendly',
      type: 'meeting-booked',
      name: 'Margaret Hamilton',
      email: 'margaret@globex.example',
      payload: { meetingAt: '2026-12-01T15:00:00.000Z' },
    },
    {
      source: 'web-form',
      type: 'newsletter-signup',
      name: 'Alan Turing',
      email: 'alan.turing@gmail.com',
      payload: { list: 'product-updates' },
    },
  ];
}

/** Persons come into being through their log entries, as they do from integrations. */
export async function personLogsDemo(ctx: DemoContext) {
  const personIds = new Set<string>();
  const personLogIds: string[] = [];
  for (const body of demoPersonLogs()) {
    const { body: result } = await writePersonLog(ctx.scope, ctx.clock, body);
    personIds.add(result.personId);
    personLogIds.push(result.personLogId);
  }
  // Alan writes from a free-mail address; his company domain links him to an account.
  const alan = [...personIds][personIds.size - 1]!;
  await patchPerson(ctx.scope, ctx.clock, alan, { domain: 'https://www.Initech.example/' });
  return { personIds: [...personIds], personLogIds };
}
