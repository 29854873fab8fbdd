import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound, validationFailed } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { parseInstant } from '../../lib/clock.js';
import { findPage } from '../pages/index.js';
import * as q from './audience-sessions.queries.js';
import type { AudienceSession, AudienceSessionQuery } from './audience-sessions.schemas.js';

type SessionRow = Awaited<ReturnType<typeof q.listSessions>>[number];

export function toSession(row: SessionRow): AudienceSession {
  return {
    audienceSessionId: row.id,
    analyticsSessionId: row.analytics_session_id,
    audienceId: row.audience_id,
    pageId: row.page_id,
    pageTitle: row.page_title,
    pageUrl: row.page_url,
    formSubmissionId: row.form_submission_id,
    formSubmissionIdentifier: row.form_submission_identifier,
    formSubmissionEmail: row.form_submission_email,
    formSubmissionPhone: row.form_submission_phone,
    hasConversion: row.has_conversion,
    hasFormSubmit: row.has_form_submit,
    isBounce: row.is_bounce,
    maxScrollDepthPercentage: row.max_scroll_depth_percentage,
    questionsAskedCount: row.questions_asked_count,
    timeSpentSeconds: row.time_spent_seconds,
    totalClicksCount: row.total_clicks_count,
    sessionStartedAt: row.session_started_at,
    sessionEndedAt: row.session_ended_at,
    utmCampaign: row.utm_campaign,
    utmContent: row.utm_content,
    utmMedium: row.utm_medium,
    utmSource: row.utm_source,
    utmTerm: row.utm_term,
  };
}

/**
 * The filter of endpoint 7, with the dates as UTC instants: `startDate` ≤ sessionStartedAt <
 * `endDate`. A start after the end is refused (422); equal bounds are an empty range.
 */
export function sessionFilter(
  pageId: string,
  query: Pick<AudienceSessionQuery, 'startDate' | 'endDate' | 'audienceId'>,
): q.SessionFilter {
  const instant = (value: string | undefined, field: string) => {
    if (value === undefined) return null;
    const instant = parseInstant(value);
    if (instant === null) {
      throw validationFailed(
        `/query/${field}`,
        'must be an ISO 8601 date-time between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z',
      );
    }
    return instant;
  };
  const start = instant(query.startDate, 'startDate');
  const end = instant(query.endDate, 'endDate');
  if (start !== null && end !== null && start > end) {
    throw new AppError('validation_failed', 'The request is invalid: startDate is after endDate.', [
      { path: '/query/endDate', message: 'must not be before startDate' },
    ]);
  }
  return { pageId, start, end, audienceId: query.audienceId ?? null };
}

export async function listSessions(scope: TenantScope, filter: q.SessionFilter, window: KeysetWindow) {
  if ((await findPage(scope, filter.pageId)) === undefined) throw notFound('page', filter.pageId);
  const [rows, totalCount] = await Promise.all([q.listSessions(scope, filter, window), q.countSessions(scope, filter)]);
  return { items: rows.map(toSession), totalCount };
}
