import type { FastifyPluginAsync } from 'fastify';
import { notFound } from '../../http/errors.js';
import { listAudiences, publishPageDrafts, regeneratePage } from '../audiences/index.js';
import { findPage, listPages, searchPages } from '../pages/index.js';
import type { ConsoleUser } from './console.auth.service.js';
import { queryText, sendHtml, userOf } from './console.http.js';
import {
  renderPageList,
  renderPageView,
  type PageListRow,
  type PageView,
  type VersionView,
} from './console.pages.views.js';

/** Audiences shown on a page's screen. */
const AUDIENCES_SHOWN = 100;
/** What a page id in a console path may look like (anything else is simply not found). */
const PAGE_ID = /^page_[a-z0-9]{26}$/;

/** Pages listed on one screen. */
const PAGE_SIZE = 50;

/** Pages: the list and search (the pages module's own list and search, as the API serves them). */
export const consolePagesRoutes: FastifyPluginAsync = async (app) => {
  const { pager, clock } = app.ctx;

  /** The page screen: the page's row and its first audiences (the audiences module's own list). */
  async function pageScreen(user: ConsoleUser, pageId: string, notice?: string) {
    const row = PAGE_ID.test(pageId) ? await findPage(user.scope, pageId) : undefined;
    if (row === undefined) throw notFound('page', pageId);
    const page: PageView = {
      pageId: row.id,
      name: row.name,
      status: row.status,
      pageType: row.page_type,
      pageContext: row.page_context,
      updatedAt: row.updated_at,
      actions: row.actions as PageView['actions'],
    };
    const audiences = await listAudiences(user.scope, pageId, { limit: AUDIENCES_SHOWN, after: null });
    return renderPageView({
      viewer: user,
      page,
      // the versions are the audiences module's AudienceVersion (a $ref in its schema, so untyped here)
      audiences: audiences.items.slice(0, AUDIENCES_SHOWN).map((a) => ({
        ...a,
        latestVersion: a.latestVersion as VersionView,
        publishedVersion: a.publishedVersion as VersionView,
      })),
      audiencesTotal: audiences.totalCount,
      notice,
    });
  }

  app.get<{ Params: { page_id: string } }>('/pages/:page_id', { schema: { hide: true } }, async (request, reply) =>
    sendHtml(reply, await pageScreen(userOf(request), request.params.page_id)),
  );

  app.post<{ Params: { page_id: string } }>(
    '/pages/:page_id/publish-drafts',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      if (!PAGE_ID.test(request.params.page_id)) throw notFound('page', request.params.page_id);
      const published = await publishPageDrafts(user.scope, clock, request.params.page_id);
      const notice =
        published.length === 0 ? 'There was no draft to publish.' : `Published ${published.length} drafts.`;
      return sendHtml(reply, await pageScreen(user, request.params.page_id, notice));
    },
  );

  app.post<{ Params: { page_id: string } }>(
    '/pages/:page_id/regenerate',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      if (!PAGE_ID.test(request.params.page_id)) throw notFound('page', request.params.page_id);
      const { regeneration } = await regeneratePage(user.scope, clock, request.params.page_id, {});
      const notice = `Queued ${regeneration.queuedCount} new versions; they appear here as they are written.`;
      return sendHtml(reply, await pageScreen(user, request.params.page_id, notice));
    },
  );

  app.get('/pages', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const query = queryText(request, 'q').trim();
    const cursor = queryText(request, 'cursor', 1000) || undefined;
    let rows: PageListRow[];
    let envelope;
    if (query === '') {
      envelope = await pager.list(
        user.tenantId,
        { cursor, limit: PAGE_SIZE },
        {
          context: 'pages.list',
          fetch: (window) => listPages(user.scope, window),
          keyOf: (p) => [p.pageId],
        },
      );
      rows = envelope.items.map((p) => ({ ...p, pageType: p.pageType as string }));
    } else {
      envelope = await pager.list(
        user.tenantId,
        { cursor, limit: PAGE_SIZE },
        {
          context: `pages.search:${query}`,
          fetch: (window) => searchPages(user.scope, query, window),
          keyOf: (p) => [p.pageId],
        },
      );
      // Search answers name and counts; the status comes from each page's row (one indexed read each).
      rows = await Promise.all(
        envelope.items.map(async (p) => {
          const row = await findPage(user.scope, p.pageId);
          return {
            ...p,
            status: row?.status ?? null,
            pageType: row?.page_type ?? null,
            updatedAt: row?.updated_at ?? null,
          };
        }),
      );
    }
    const next = new URLSearchParams();
    if (query !== '') next.set('q', query);
    if (envelope.nextCursor !== null) next.set('cursor', envelope.nextCursor);
    return sendHtml(
      reply,
      renderPageList({
        viewer: user,
        query,
        rows,
        totalCount: envelope.totalCount,
        nextHref: envelope.nextCursor === null ? null : `/console/pages?${next.toString()}`,
      }),
    );
  });
};
