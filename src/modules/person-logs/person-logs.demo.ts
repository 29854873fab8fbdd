import type { DemoContext } from '../module.js';
import { patchPerson } from '../persons/index.js';
import type { PersonLogBody } from './person-logs.schemas.js';
import { writePersonLog } from './person-logs.service.js';

/** Log entries as integrations send them; the persons they name are created on the way. */
function demoPersonLogs(): PersonLogBody[] {
  return [
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
