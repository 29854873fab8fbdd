import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../http/errors.js';
import { standardErrorResponses } from '../../http/schemas.js';
import { sessionOfPage } from '../audience-sessions/index.js';
import { AgentMessageList, AgentMessageListQuery, AgentMessageParams } from './agent.schemas.js';
import * as agent from './agent.service.js';

export const agentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager } = app.ctx;

  app.get(
    '/pages/:page_id/audience_sessions/:audience_session_id/messages',
    {
      schema: {
        operationId: 'audienceSessions.messages.list',
        tags: ['Audience sessions (extension)'],
        summary: "A session's conversation with the page's agent, oldest first",
        description:
          'Extension of the interface (docs/api.md, Agent messages; docs/agent.md). Each question a visitor ' +
          'asked and each answer, with its sources. A session of another page or tenant is a 404.',
        params: AgentMessageParams,
        querystring: AgentMessageListQuery,
        response: { 200: AgentMessageList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const { scope } = request;
      const { page_id: pageId, audience_session_id: sessionId } = request.params;
      if (!(await sessionOfPage(scope, pageId, sessionId))) throw notFound('audience session', sessionId);
      return pager.list(scope.tenantId, request.query, {
        context: `agentMessages.list:${sessionId}`,
        fetch: (window) => agent.listMessages(scope, sessionId, window),
        keyOf: (m) => [m.position],
      });
    },
  );
};
