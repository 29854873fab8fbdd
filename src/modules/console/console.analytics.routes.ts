import type { FastifyPluginAsync } from 'fastify';
import { notFound, validationFailed } from '../../http/errors.js';
import { sessionFilter, summarizeSessions } from '../audience-sessions/index.js';
import { listAudiences } from '../audiences/index.js';
import { findPage } from '../pages/index.js';
import { renderAnalytics } from './console.analytics.views.js';
import { queryText, sendHtml, userOf } from './console.http.js';

/** What a page id in a console path may look like (anything else is simply not found). */
const PAGE_ID = /^page_[a-z0-9]{26}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
/** The default range: the last 30 UTC days, today included. */
const DEFAULT_DAYS = 30;
/** Audiences offered in the audience filter. */
const AUDIENCES_OFFERED = 200;

function day(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** A `YYYY-MM-DD` of the form, or the default; anything else is a 422 naming the field. */
function dayParameter(value: string, field: string, fallback: string): string {
  if (value === '') return fallback;
  if (!DAY.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)) || day(Date.parse(value)) !== value)
    throw validationFailed(`/query/${field}`, 'must be a date (YYYY-MM-DD)');
  return value;
}

/**
 * Analytics of a page (docs/console.md): the sessions endpoint 7 lists for the same page, range
 * and audience, summed up by the audience-sessions module. The range is whole UTC days: from
 * `from` 00:00 to the end of `to` (endpoint 7's startDate = from, endDate = the day after `to`).
 */
export const consoleAnalyticsRoutes: FastifyPluginAsync = async (app) => {
  const { clock } = app.ctx;

  app.get<{ Params: { page_id: string } }>(
    '/pages/:page_id/analytics',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const pageId = request.params.page_id;
      const row = PAGE_ID.test(pageId) ? await findPage(user.scope, pageId) : undefined;
      if (row === undefined) throw notFound('page', pageId);
      const today = clock.now().getTime();
      const to = dayParameter(queryText(request, 'to', 20), 'to', day(today));
      const from = dayParameter(
        queryText(request, 'from', 20),
        'from',
        day(Date.parse(to) - (DEFAULT_DAYS - 1) * DAY_MS),
      );
      const audienceId = queryText(request, 'audience', 100) || null;
      const filter = sessionFilter(pageId, {
        startDate: `${from}T00:00:00Z`,
        endDate: `${day(Date.parse(to) + DAY_MS)}T00:00:00Z`,
        ...(audienceId === null ? {} : { audienceId }),
      });
      const [summary, audiences] = await Promise.all([
        summarizeSessions(user.scope, filter),
        listAudiences(user.scope, pageId, { limit: AUDIENCES_OFFERED, after: null }),
      ]);
      return sendHtml(
        reply,
        renderAnalytics({
          viewer: user,
          page: { pageId, name: row.name },
          audiences: audiences.items
            .slice(0, AUDIENCES_OFFERED)
            .map((a) => ({ audienceId: a.audienceId, name: a.effectiveName })),
          from,
          to,
          audienceId,
          summary,
        }),
      );
    },
  );
};
