import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { Person, PersonParams, PersonPatchBody, PersonSearchQuery, PersonSearchResult } from './persons.schemas.js';
import * as persons from './persons.service.js';

export const personsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager, clock } = app.ctx;

  app.get(
    '/persons/search',
    {
      schema: {
        operationId: 'persons.search',
        tags: ['Persons'],
        summary: 'Find persons whose name, email, domain or phone number contains the query, newest first',
        querystring: PersonSearchQuery,
        response: { 200: PersonSearchResult, ...standardErrorResponses },
      },
    },
    async (request) =>
      pager.list(request.scope.tenantId, request.query, {
        context: `persons.search:${request.query.query}`,
        fetch: (window) => persons.searchPersons(request.scope, request.query.query, window),
        keyOf: (p) => [p.personId],
      }),
  );

  app.get(
    '/persons/:person_id',
    {
      schema: {
        operationId: 'persons.get',
        tags: ['Persons'],
        summary: 'Get a person',
        params: PersonParams,
        response: { 200: Person, ...standardErrorResponses },
      },
    },
    async (request) => persons.getPerson(request.scope, request.params.person_id),
  );

  app.patch(
    '/persons/:person_id',
    {
      schema: {
        operationId: 'persons.patch',
        tags: ['Persons'],
        summary: 'Update a person',
        params: PersonParams,
        body: PersonPatchBody,
        response: { 200: Person, 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request) => persons.patchPerson(request.scope, clock, request.params.person_id, request.body),
  );
};
