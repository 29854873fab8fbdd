import { sendIdempotent } from '../../idempotency/idempotency.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { PersonLogBody, PersonLogCreated } from './person-logs.schemas.js';
import { writePersonLog } from './person-logs.service.js';

export const personLogsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock } = app.ctx;

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
};
