import { sendIdempotent } from '../../idempotency/idempotency.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import {
  PersonLogBody,
  PersonLogCreated,
  PersonLogList,
  PersonLogListQuery,
  PersonLogParams,
} from './person-logs.schemas.js';
import { listPersonLogs, writePersonLog } from './person-logs.service.js';

export const personLogsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock, pager } = app.ctx;

  app.post(
    '/person_logs',
    {
      schema: {
        operationId: 'personLogs.create',
        tags: ['Person logs'],
        summary: 'Write a log entry against a person, finding or creating the person',
        description:
          'The person is `personId`, else the person matching `email`, then `phoneNumber`, then `socialProfileUrl`, ' +
          'else a new person (`createdPerson: true`). Repeating an `idempotencyKey` with the same body returns the ' +
          'original result (header `Idempotent-Replayed: true`); with another body it is a 422.',
        body: PersonLogBody,
        response: { 201: PersonLogCreated, 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      return sendIdempotent(reply, await writePersonLog(request.scope, clock, request.body));
    },
  );

  app.get(
    '/persons/:person_id/logs',
    {
      schema: {
        operationId: 'personLogs.list',
        tags: ['Person logs (extension)'],
        summary: "A person's log entries, newest first, optionally of one source and type",
        description:
          'Extension of the interface (docs/api.md, Reading a person’s log). The activity timeline that ' +
          'POST /v0/person_logs writes; exact `totalCount` for the filters.',
        params: PersonLogParams,
        querystring: PersonLogListQuery,
        response: { 200: PersonLogList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const filter = {
        personId: request.params.person_id,
        source: request.query.source ?? null,
        type: request.query.type ?? null,
      };
      return pager.list(request.scope.tenantId, request.query, {
        context: `personLogs.list:${filter.personId}:${filter.source ?? ''}:${filter.type ?? ''}`,
        fetch: (window) => listPersonLogs(request.scope, filter, window),
        keyOf: (entry) => [entry.createdAt, entry.personLogId],
      });
    },
  );
};
