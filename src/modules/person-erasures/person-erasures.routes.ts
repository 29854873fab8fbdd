import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { PersonErasureParams, PersonExport } from './person-erasures.schemas.js';
import * as erasures from './person-erasures.service.js';

const EXTENSION_TAG = 'Persons (extension)';
const EXTENSION = 'Extension of the interface (docs/api.md, Persons; docs/privacy.md). ';

export const personErasuresRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock } = app.ctx;

  app.delete(
    '/persons/:person_id',
    {
      schema: {
        operationId: 'persons.erase',
        tags: [EXTENSION_TAG],
        summary: 'Erase a person and everything that identifies them',
        description:
          EXTENSION +
          'Removes the person, their log entries, form submissions, enrichment jobs and the events that carry them; ' +
          'clears the identities copied onto their sessions (kept as anonymous analytics); archives the audiences ' +
          'addressed to them. Answers 204, and 204 again for a person this tenant already erased (404 for ids it never had).',
        params: PersonErasureParams,
        response: { 204: Type.Null({ description: 'Erased (now or before).' }), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      await erasures.erasePerson(request.scope, clock, request.params.person_id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/persons/:person_id/export',
    {
      schema: {
        operationId: 'persons.export',
        tags: [EXTENSION_TAG],
        summary: 'Everything stored about a person (a data access request)',
        description:
          EXTENSION +
          'The person, their log entries, form submissions, enrichment jobs, own pages, visits and agent conversations.',
        params: PersonErasureParams,
        response: { 200: PersonExport, ...standardErrorResponses },
      },
    },
    async (request) => erasures.exportPerson(request.scope, clock, request.params.person_id),
  );
};
