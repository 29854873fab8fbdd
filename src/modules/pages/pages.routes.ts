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
    async (request) => {
      const { scope } = request;
      const page = pager.read(scope.tenantId, 'pages.list', request.query);
      const { items, totalCount } = await pages.listPages(scope, page);
      return pager.envelope(scope.tenantId, 'pages.list', page, items, (p) => [p.pageId], totalCount);
    },
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
    async (request) => {
      const { scope } = request;
      const context = `pages.search:${request.query.query}`;
      const page = pager.read(scope.tenantId, context, request.query);
      const items = await pages.searchPages(scope, request.query.query, page);
      return pager.envelope(scope.tenantId, context, page, items, (p) => [p.pageId], null);
    },
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
