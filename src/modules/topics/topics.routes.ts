import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { Topic, TopicCreateBody, TopicEntry, TopicEntryCreateBody, TopicParams } from './topics.schemas.js';
import * as topics from './topics.service.js';

export const topicsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock } = app.ctx;

  app.post(
    '/topics',
    {
      schema: {
        operationId: 'topics.create',
        tags: ['Topics'],
        summary: "Create a topic (the tenant's first topic is its default)",
        body: TopicCreateBody,
        response: { 201: Topic, 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await topics.createTopic(request.scope, clock, request.body)),
  );

  app.post(
    '/topics/:topic_id/entries',
    {
      schema: {
        operationId: 'topics.entries.create',
        tags: ['Topics'],
        summary: 'Add an entry to a topic',
        params: TopicParams,
        body: TopicEntryCreateBody,
        response: { 201: TopicEntry, 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await topics.createEntry(request.scope, clock, request.params.topic_id, request.body)),
  );
};
