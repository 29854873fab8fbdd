import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sendIdempotent, withIdempotency } from '../../idempotency/idempotency.js';
import { standardErrorResponses } from '../../http/schemas.js';
import {
  Page,
  PageCreateBody,
  PageTransitionBody,
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

  // The life of a page (issue 23): extensions of the interface (docs/api.md, The life of a page).
  const extension = 'Extension of the interface (docs/api.md, The life of a page).';

  app.post(
    '/pages',
    {
      schema: {
        operationId: 'pages.create',
        tags: ['Pages (extension)'],
        summary: 'Create a page (a draft)',
        description:
          `${extension} Required: \`name\`, \`pageContext\`, \`pageType\`; every field PATCH accepts may be sent ` +
          'and is validated by the same code; `title` defaults to `name`. `idempotencyKey` works as on POST /v0/person_logs.',
        body: PageCreateBody,
        response: { 201: Page, 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const { idempotencyKey, ...input } = request.body;
      const result = await withIdempotency(
        request.scope,
        clock,
        { operation: 'pages.create', key: idempotencyKey, body: input },
        async (tx) => ({ status: 201, body: await pages.createPageFromApi(tx, clock, input) }),
      );
      return sendIdempotent(reply, result);
    },
  );

  app.get(
    '/pages/:page_id',
    {
      schema: {
        operationId: 'pages.get',
        tags: ['Pages (extension)'],
        summary: 'Get a page',
        description: extension,
        params: PageParams,
        response: { 200: Page, ...standardErrorResponses },
      },
    },
    async (request) => pages.getPage(request.scope, request.params.page_id),
  );

  const transitions = [
    {
      name: 'publish',
      summary: 'Publish a draft page: its audiences’ draft versions go live',
      run: pages.publishPage,
    },
    {
      name: 'archive',
      summary: 'Archive a page: its links stop serving (410) until it is restored',
      run: pages.archivePage,
    },
    {
      name: 'restore',
      summary: 'Restore an archived page to the status it was archived from',
      run: pages.restorePage,
    },
  ] as const;
  for (const transition of transitions) {
    app.post(
      `/pages/:page_id/${transition.name}`,
      {
        schema: {
          operationId: `pages.${transition.name}`,
          tags: ['Pages (extension)'],
          summary: transition.summary,
          description: `${extension} Any move outside the page status table is a 409 that changes nothing.`,
          params: PageParams,
          body: PageTransitionBody,
          response: { 200: Page, 409: { $ref: 'Problem' }, ...standardErrorResponses },
        },
      },
      async (request) => transition.run(request.scope, clock, request.params.page_id),
    );
  }

  app.delete(
    '/pages/:page_id',
    {
      schema: {
        operationId: 'pages.delete',
        tags: ['Pages (extension)'],
        summary: 'Delete a page: it disappears everywhere and its links stop serving',
        description: extension,
        params: PageParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      await pages.deletePage(request.scope, clock, request.params.page_id);
      return reply.code(204).send(null);
    },
  );
};
