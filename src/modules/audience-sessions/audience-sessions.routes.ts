import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { AudienceSessionList, AudienceSessionParams, AudienceSessionQuery } from './audience-sessions.schemas.js';
import * as sessions from './audience-sessions.service.js';

export const audienceSessionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager } = app.ctx;

  app.get(
    '/pages/:page_id/audience_sessions',
    {
      schema: {
        operationId: 'audienceSessions.list',
        tags: ['Audience sessions'],
        summary: 'List the sessions of a page, latest start first, filtered by time range and audience',
        params: AudienceSessionParams,
        querystring: AudienceSessionQuery,
        response: { 200: AudienceSessionList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const { scope } = request;
      const filter = sessions.sessionFilter(request.params.page_id, request.query);
      return pager.list(scope.tenantId, request.query, {
        context: `audienceSessions.list:${JSON.stringify(filter)}`,
        fetch: (window) => sessions.listSessions(scope, filter, window),
        keyOf: (s) => [s.sessionStartedAt, s.audienceSessionId],
      });
    },
  );
};
