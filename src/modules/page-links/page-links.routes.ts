import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import {
  PageLinkCreateBody,
  PageLinkList,
  PageLinkListQuery,
  PageLinkParams,
  PageLinkPatchBody,
} from './page-links.schemas.js';
import * as links from './page-links.service.js';

const EXTENSION_TAG = 'Page links (extension)';
const EXTENSION = 'Extension of the interface (docs/api.md, Page links). ';

export const pageLinksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock, pager } = app.ctx;

  app.patch(
    '/page_links/:page_link_id',
    {
      schema: {
        operationId: 'pageLinks.patch',
        tags: ['Page links'],
        summary: 'Move a page link to another path or domain, or point it at another audience',
        params: PageLinkParams,
        body: PageLinkPatchBody,
        response: { 200: Type.Ref('PageLink'), 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request) => links.patchPageLink(request.scope, clock, request.params.page_link_id, request.body),
  );

  app.post(
    '/page_links',
    {
      schema: {
        operationId: 'pageLinks.create',
        tags: [EXTENSION_TAG],
        summary: 'Create a page link: a path (on one of the tenant’s domains, or on all) serving an audience',
        description:
          EXTENSION +
          'The same validation and path normalization as PATCH /v0/page_links/{page_link_id}. ' +
          'The link serves the audience’s published version at http(s)://{domain}{path}.',
        body: PageLinkCreateBody,
        response: { 201: Type.Ref('PageLink'), 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await links.createPageLink(request.scope, clock, request.body)),
  );

  app.get(
    '/page_links',
    {
      schema: {
        operationId: 'pageLinks.list',
        tags: [EXTENSION_TAG],
        summary: 'List the live page links, newest first, optionally of one audience',
        description: EXTENSION,
        querystring: PageLinkListQuery,
        response: { 200: PageLinkList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const audienceId = request.query.audienceId ?? null;
      return pager.list(request.scope.tenantId, request.query, {
        context: `pageLinks.list:${audienceId ?? ''}`,
        fetch: (window) => links.listPageLinks(request.scope, audienceId, window),
        keyOf: (l) => [l.pageLinkId],
      });
    },
  );

  app.delete(
    '/page_links/:page_link_id',
    {
      schema: {
        operationId: 'pageLinks.delete',
        tags: [EXTENSION_TAG],
        summary: 'Delete a page link: it stops serving at once',
        description: EXTENSION + 'Answers 204; the link is a 404 everywhere afterwards.',
        params: PageLinkParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      await links.deletePageLink(request.scope, clock, request.params.page_link_id);
      return reply.code(204).send(null);
    },
  );
};
