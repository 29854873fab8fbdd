import type { Clock } from '../../src/lib/clock.js';
import { DAY_MS } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import type { Tenant } from '../harness.js';
import { makePerson } from './persons.js';

/** A submission `daysAgo` old, with its enrichment job and the session it marked. */
export async function oldSubmission(
  tenant: Tenant,
  clock: Clock,
  daysAgo: number,
  job: { status: string; completedDaysAgo: number | null },
) {
  const at = new Date(clock.now().getTime() - daysAgo * DAY_MS).toISOString();
  const personId = await makePerson(tenant.scope, clock);
  const id = newId('formSubmission');
  const email = `${id}@corp.example`;
  await tenant.scope
    .insertInto('form_submissions', {
      id,
      page_id: 'page_x',
      audience_id: 'audience_x',
      page_link_id: 'link_x',
      action_id: 'action_x',
      form_id: 'action_x',
      analytics_session_id: null,
      person_id: personId,
      email,
      name: 'Someone',
      phone_number: null,
      company: null,
      message: null,
      page_url: 'http://go.example/p',
      dedupe_key: `t:${id}`,
      content_hash: id,
      created_at: at,
    })
    .execute();
  const completed =
    job.completedDaysAgo === null
      ? null
      : new Date(clock.now().getTime() - job.completedDaysAgo * DAY_MS).toISOString();
  await tenant.scope
    .insertInto('enrichment_jobs', {
      form_submission_id: id,
      person_id: personId,
      page_id: 'page_x',
      audience_id: 'audience_x',
      email,
      name: 'Someone',
      company: null,
      status: job.status as 'queued',
      attempts: 1,
      lease_token: null,
      available_at: at,
      provider: null,
      failure_reason: null,
      last_error: null,
      created_at: at,
      updated_at: completed ?? at,
      completed_at: completed,
    })
    .execute();
  const sessionId = newId('audienceSession');
  await tenant.scope
    .insertInto('audience_sessions', {
      id: sessionId,
      page_id: 'page_x',
      audience_id: 'audience_x',
      analytics_session_id: sessionId,
      page_title: 'P',
      page_url: 'http://go.example/p',
      form_submission_id: id,
      form_submission_identifier: 'action_x',
      form_submission_email: email,
      form_submission_phone: '',
      has_conversion: true,
      has_form_submit: true,
      is_bounce: false,
      max_scroll_depth_percentage: 0,
      questions_asked_count: 0,
      time_spent_seconds: 5,
      total_clicks_count: 0,
      session_started_at: at,
      session_ended_at: at,
      utm_campaign: '',
      utm_content: '',
      utm_medium: '',
      utm_source: '',
      utm_term: '',
    })
    .execute();
  return { id, sessionId };
}

export const storedIds = async (tenant: Tenant, table: 'form_submissions' | 'enrichment_jobs') =>
  table === 'form_submissions'
    ? (await tenant.scope.selectFrom('form_submissions').select('id').execute()).map((r) => r.id).sort()
    : (await tenant.scope.selectFrom('enrichment_jobs').select('form_submission_id as id').execute())
        .map((r) => r.id)
        .sort();
