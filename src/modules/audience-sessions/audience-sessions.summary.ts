import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound } from '../../http/errors.js';
import { findPage } from '../pages/index.js';
import * as q from './audience-sessions.queries.js';
import type { AudienceSession } from './audience-sessions.schemas.js';
import { toSession } from './audience-sessions.service.js';

/** At most this many sessions are summed for one summary (a larger range says it was cut). */
const SUMMARY_CAP = 100_000;

/** Scroll-depth buckets: [from, to] percent, both inclusive. */
const SCROLL_BUCKETS = [
  [0, 24],
  [25, 49],
  [50, 74],
  [75, 99],
  [100, 100],
] as const;

const TOP = 10;
const DAY_MS = 86_400_000;

interface Counted {
  value: string;
  sessions: number;
}

export interface SessionSummary {
  sessions: number;
  /** True when the range held more than SUMMARY_CAP sessions (only the newest were summed). */
  truncated: boolean;
  bounces: number;
  /** bounces / sessions, null without sessions. */
  bounceRate: number | null;
  conversions: number;
  formSubmissions: number;
  questionsAsked: number;
  /** Median of timeSpentSeconds (the mean of the middle two for an even count), null without sessions. */
  medianEngagedSeconds: number | null;
  /** Every UTC day of the range (or of the sessions when the range is open), oldest first. */
  visitsPerDay: { day: string; sessions: number }[];
  scrollDepth: { from: number; to: number; sessions: number }[];
  /** Most frequent utmSource / utmCampaign values ('' = none), most sessions first, at most 10. */
  utmSources: Counted[];
  utmCampaigns: Counted[];
  byAudience: { audienceId: string; sessions: number; conversions: number; formSubmissions: number }[];
}

function top(values: string[]): Counted[] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts]
    .map(([value, sessions]) => ({ value, sessions }))
    .sort((a, b) => b.sessions - a.sessions || a.value.localeCompare(b.value))
    .slice(0, TOP);
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function days(first: string, last: string): string[] {
  const out: string[] = [];
  for (let at = Date.parse(`${first}T00:00:00Z`); at <= Date.parse(`${last}T00:00:00Z`); at += DAY_MS) {
    out.push(new Date(at).toISOString().slice(0, 10));
  }
  return out;
}

/** Sums up sessions as endpoint 7 answers them (docs/console.md, Analytics). */
function summarize(
  sessions: readonly AudienceSession[],
  range: { start: string | null; end: string | null },
  truncated = false,
): SessionSummary {
  const perDay = new Map<string, number>();
  for (const s of sessions) {
    const day = s.sessionStartedAt.slice(0, 10);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
  }
  const seen = [...perDay.keys()].sort();
  const first = range.start?.slice(0, 10) ?? seen[0];
  const last = range.end === null ? seen.at(-1) : new Date(Date.parse(range.end) - 1).toISOString().slice(0, 10);
  const dayList = first !== undefined && last !== undefined && first <= last ? days(first, last) : seen;
  const audiences = new Map<string, SessionSummary['byAudience'][number]>();
  for (const s of sessions) {
    const a = audiences.get(s.audienceId) ?? {
      audienceId: s.audienceId,
      sessions: 0,
      conversions: 0,
      formSubmissions: 0,
    };
    a.sessions += 1;
    if (s.hasConversion) a.conversions += 1;
    if (s.hasFormSubmit) a.formSubmissions += 1;
    audiences.set(s.audienceId, a);
  }
  const bounces = sessions.filter((s) => s.isBounce).length;
  return {
    sessions: sessions.length,
    truncated,
    bounces,
    bounceRate: sessions.length === 0 ? null : bounces / sessions.length,
    conversions: sessions.filter((s) => s.hasConversion).length,
    formSubmissions: sessions.filter((s) => s.hasFormSubmit).length,
    questionsAsked: sessions.reduce((sum, s) => sum + s.questionsAskedCount, 0),
    medianEngagedSeconds: median(sessions.map((s) => s.timeSpentSeconds)),
    visitsPerDay: dayList.map((day) => ({ day, sessions: perDay.get(day) ?? 0 })),
    scrollDepth: SCROLL_BUCKETS.map(([from, to]) => ({
      from,
      to,
      sessions: sessions.filter((s) => {
        const depth = Math.round(s.maxScrollDepthPercentage);
        return depth >= from && (depth <= to || (to === 100 && depth > 100));
      }).length,
    })),
    utmSources: top(sessions.map((s) => s.utmSource)),
    utmCampaigns: top(sessions.map((s) => s.utmCampaign)),
    byAudience: [...audiences.values()].sort(
      (a, b) => b.sessions - a.sessions || a.audienceId.localeCompare(b.audienceId),
    ),
  };
}

/**
 * A page's (or one audience's) analytics over a range: the very sessions endpoint 7 lists for the
 * same filter, mapped by the same function, summed up here.
 */
export async function summarizeSessions(scope: TenantScope, filter: q.SessionFilter): Promise<SessionSummary> {
  if ((await findPage(scope, filter.pageId)) === undefined) throw notFound('page', filter.pageId);
  const rows = await q.allSessions(scope, filter, SUMMARY_CAP);
  const truncated = rows.length > SUMMARY_CAP;
  return summarize(rows.slice(0, SUMMARY_CAP).map(toSession), filter, truncated);
}

/** A person's latest visits: the sessions of the audiences addressing them, as endpoint 7 shows sessions. */
export async function visitsOfPerson(scope: TenantScope, personId: string, limit: number): Promise<AudienceSession[]> {
  return (await q.sessionsOfPerson(scope, personId, limit)).map(toSession);
}
