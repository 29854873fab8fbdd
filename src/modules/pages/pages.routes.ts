import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import {
  Page,
  PageList,
  PageListQuery,
  PageParams,
  PagePatchBody,
  PageSearchQuery,
  PageSearchResult,
} from './pages.schemas.js';
import * as pages from './pages.service.js';

export const pagesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager, clock } = app.ctx;

  app.get(
    '/pages',
    {
      schema: {
        operationId: 'pages.list',
        tags: ['Pages'],
        summary: 'List the pages of the tenant, newest first',
        querystring: PageListQuery,
        response: { 200: PageList, ...standardErrorResponses },
      },
    },
    async (request) =>
      pager.list(request.scope.tenantId, request.query, {
        context: 'pages.list',
        fetch: (window) => pages.listPages(request.scope, window),
        keyOf: (p) => [p.pageId],
      }),
  );

  app.get(
    '/pages/search',
    {
      schema: {
        operationId: 'pages.search',
        tags: ['Pages'],
        summary: 'Find pages whose name contains the query (case-insensitive), newest first',
        querystring: PageSearchQuery,
        response: { 200: PageSearchResult, ...standardErrorResponses },
      },
    },
    async (request) =>
      pager.list(request.scope.tenantId, request.query, {
        context: `pages.search:${request.query.query}`,
        fetch: (window) => pages.searchPages(request.scope, request.query.query, window),
        keyOf: (p) => [p.pageId],
      }),
  );

  app.patch(
    '/pages/:page_id',
    {
      schema: {
        operationId: 'pages.patch',
        tags: ['Pages'],
        summary: 'Update a page',
        params: PageParams,
        body: PagePatchBody,
        response: { 200: Page, 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request) => pages.patchPage(request.scope, clock, request.params.page_id, request.body),
  );
};
