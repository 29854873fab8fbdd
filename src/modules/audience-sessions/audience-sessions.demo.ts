import { seededRandom } from '../../lib/random.js';
import type { Insertable } from 'kysely';
import type { AudienceSessionsTable } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import type { DemoContext } from '../module.js';
import { insertSessions } from './audience-sessions.queries.js';

const SOURCES = [
  { utm_source: 'linkedin', utm_medium: 'social', utm_campaign: 'q4-enterprise' },
  { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'pricing-brand' },
  { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'november-digest' },
  { utm_source: 'outreach', utm_medium: 'email', utm_campaign: 'sdr-sequence-3' },
  { utm_source: '', utm_medium: '', utm_campaign: '' },
];

export type SessionRow = Omit<Insertable<AudienceSessionsTable>, 'tenant_id'>;

/**
 * One realistic session: most visits bounce, some scroll and click, a few submit the form and a
 * part of those convert; traffic comes from a handful of UTM sources (or none).
 */
export function makeSession(
  random: () => number,
  target: { pageId: string; audienceId: string; pageTitle: string; pageUrl: string },
  startedAtMs: number,
): SessionRow {
  const bounce = random() < 0.45;
  const submitted = !bounce && random() < 0.2;
  const converted = submitted && random() < 0.5;
  const seconds = bounce ? Math.round(random() * 12) : Math.round(20 + random() * 600);
  const source = SOURCES[Math.floor(random() * SOURCES.length)]!;
  const n = Math.floor(random() * 1e9).toString(36);
  return {
    id: newId('audienceSession'),
    page_id: target.pageId,
    audience_id: target.audienceId,
    analytics_session_id: `ga_${n}`,
    page_title: target.pageTitle,
    page_url: target.pageUrl,
    form_submission_id: submitted ? `form_${n}` : '',
    form_submission_identifier: submitted ? 'contact-us' : '',
    form_submission_email: submitted ? `visitor.${n}@example.com` : '',
    form_submission_phone:
      submitted && random() < 0.4 ? `+1415555${String(Math.floor(random() * 10000)).padStart(4, '0')}` : '',
    has_conversion: converted,
    has_form_submit: submitted,
    is_bounce: bounce,
    max_scroll_depth_percentage: bounce ? Math.round(random() * 25) : Math.round(30 + random() * 70),
    questions_asked_count: bounce ? 0 : Math.floor(random() * 4),
    time_spent_seconds: seconds,
    total_clicks_count: bounce ? 0 : 1 + Math.floor(random() * 12),
    session_started_at: new Date(startedAtMs).toISOString(),
    session_ended_at: new Date(startedAtMs + seconds * 1000).toISOString(),
    ...source,
    utm_content: source.utm_source === '' ? '' : ['hero', 'footer', 'sidebar'][Math.floor(random() * 3)]!,
    utm_term: source.utm_medium === 'cpc' ? 'audience pages' : '',
  };
}

const DAY = 86_400_000;

/** 5–40 sessions per demo audience, spread over the last 60 days. */
export async function audienceSessionsDemo(ctx: DemoContext) {
  const audienceIds = (ctx.created.audiences?.audienceIds as string[] | undefined) ?? [];
  const random = seededRandom(42);
  const now = ctx.clock.now().getTime();
  let count = 0;
  await ctx.scope.transaction(async (tx) => {
    for (const audienceId of audienceIds) {
      const audience = await tx
        .selectFrom('audiences')
        .innerJoin('pages', 'pages.id', 'audiences.page_id')
        .select(['audiences.page_id', 'pages.title', 'audiences.person_route_key'])
        .where('audiences.id', '=', audienceId)
        .executeTakeFirstOrThrow();
      const target = {
        pageId: audience.page_id,
        audienceId,
        pageTitle: audience.title,
        pageUrl: `https://go.northwind.example/p/${audience.person_route_key ?? audienceId}`,
      };
      const rows = Array.from({ length: 5 + Math.floor(random() * 36) }, () =>
        makeSession(random, target, now - Math.floor(random() * 60 * DAY)),
      );
      await insertSessions(tx, rows);
      count += rows.length;
    }
  });
  return { sessions: count };
}
