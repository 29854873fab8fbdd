import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { PageLink, PageLinkParams, PageLinkPatchBody } from './page-links.schemas.js';
import { patchPageLink } from './page-links.service.js';

export const pageLinksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock } = app.ctx;

  app.patch(
    '/page_links/:page_link_id',
    {
      schema: {
        operationId: 'pageLinks.patch',
        tags: ['Page links'],
        summary: 'Move a page link to another path or domain, or point it at another audience',
        params: PageLinkParams,
        body: PageLinkPatchBody,
        response: { 200: PageLink, 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request) => patchPageLink(request.scope, clock, request.params.page_link_id, request.body),
  );
};
