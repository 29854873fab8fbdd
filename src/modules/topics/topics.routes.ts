import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import {
  TopicCreateBody,
  TopicEntryCreateBody,
  TopicEntryParams,
  TopicEntryPatchBody,
  TopicList,
  TopicListQuery,
  TopicParams,
  TopicPatchBody,
} from './topics.schemas.js';
import * as topics from './topics.service.js';

const EXTENSION_TAG = 'Topics (extension)';
const EXTENSION = 'Extension of the interface (docs/api.md, Topics: list, get, change, delete). ';

export const topicsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock, pager } = app.ctx;

  app.post(
    '/topics',
    {
      schema: {
        operationId: 'topics.create',
        tags: ['Topics'],
        summary: "Create a topic (the tenant's first topic is its default)",
        body: TopicCreateBody,
        response: { 201: Type.Ref('Topic'), 409: Type.Ref('Problem'), ...standardErrorResponses },
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
        response: { 201: Type.Ref('TopicEntry'), 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await topics.createEntry(request.scope, clock, request.params.topic_id, request.body)),
  );

  app.get(
    '/topics',
    {
      schema: {
        operationId: 'topics.list',
        tags: [EXTENSION_TAG],
        summary: "List the tenant's topics by sortOrder, then creation, each with its entries",
        description: EXTENSION,
        querystring: TopicListQuery,
        response: { 200: TopicList, ...standardErrorResponses },
      },
    },
    async (request) =>
      pager.list(request.scope.tenantId, request.query, {
        context: 'topics.list',
        fetch: (window) => topics.listTopics(request.scope, window),
        keyOf: (topic) => [topic.sortOrder, topic.topicId],
      }),
  );

  app.get(
    '/topics/:topic_id',
    {
      schema: {
        operationId: 'topics.get',
        tags: [EXTENSION_TAG],
        summary: 'Get a topic with its entries',
        description: EXTENSION,
        params: TopicParams,
        response: { 200: Type.Ref('Topic'), ...standardErrorResponses },
      },
    },
    async (request) => topics.getTopic(request.scope, request.params.topic_id),
  );

  app.patch(
    '/topics/:topic_id',
    {
      schema: {
        operationId: 'topics.patch',
        tags: [EXTENSION_TAG],
        summary: "Change a topic's title, purpose or position (sortOrder)",
        description: EXTENSION + 'Absent fields are unchanged; a patch that changes nothing leaves `updatedAt` alone.',
        params: TopicParams,
        body: TopicPatchBody,
        response: { 200: Type.Ref('Topic'), ...standardErrorResponses },
      },
    },
    async (request) => topics.patchTopic(request.scope, clock, request.params.topic_id, request.body),
  );

  app.delete(
    '/topics/:topic_id',
    {
      schema: {
        operationId: 'topics.delete',
        tags: [EXTENSION_TAG],
        summary: 'Delete a topic and its entries',
        description:
          EXTENSION +
          'Answers 204. When it was the default topic, the first remaining topic (by sortOrder) becomes the default.',
        params: TopicParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      await topics.deleteTopic(request.scope, request.params.topic_id);
      return reply.code(204).send(null);
    },
  );

  app.patch(
    '/topics/:topic_id/entries/:topic_entry_id',
    {
      schema: {
        operationId: 'topics.entries.patch',
        tags: [EXTENSION_TAG],
        summary: "Change an entry's content or position (sortOrder)",
        description:
          EXTENSION +
          "Absent fields are unchanged; a change moves the entry's and the topic's `updatedAt`. " +
          'An entry of another topic is a 404.',
        params: TopicEntryParams,
        body: TopicEntryPatchBody,
        response: { 200: Type.Ref('TopicEntry'), ...standardErrorResponses },
      },
    },
    async (request) =>
      topics.patchEntry(request.scope, clock, request.params.topic_id, request.params.topic_entry_id, request.body),
  );

  app.delete(
    '/topics/:topic_id/entries/:topic_entry_id',
    {
      schema: {
        operationId: 'topics.entries.delete',
        tags: [EXTENSION_TAG],
        summary: 'Delete an entry of a topic',
        description: EXTENSION + "Answers 204; the topic's `updatedAt` moves.",
        params: TopicEntryParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      await topics.deleteEntry(request.scope, clock, request.params.topic_id, request.params.topic_entry_id);
      return reply.code(204).send(null);
    },
  );
};
