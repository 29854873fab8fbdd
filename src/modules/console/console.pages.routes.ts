import type { FastifyPluginAsync } from 'fastify';
import { findPage, listPages, searchPages } from '../pages/index.js';
import { queryText, sendHtml, userOf } from './console.http.js';
import { renderPageList, type PageListRow } from './console.pages.views.js';

/** Pages listed on one screen. */
const PAGE_SIZE = 50;

/** Pages: the list and search (the pages module's own list and search, as the API serves them). */
export const consolePagesRoutes: FastifyPluginAsync = async (app) => {
  const { pager } = app.ctx;

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
