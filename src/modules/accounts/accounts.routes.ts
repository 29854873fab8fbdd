import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import {
  Account,
  AccountCreateBody,
  AccountList,
  AccountListQuery,
  AccountParams,
  AccountPatchBody,
  AccountSearchQuery,
} from './accounts.schemas.js';
import * as accounts from './accounts.service.js';

export const accountsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager, clock } = app.ctx;

  app.post(
    '/accounts',
    {
      schema: {
        operationId: 'accounts.create',
        tags: ['Accounts'],
        summary: 'Create an account for a company domain',
        body: AccountCreateBody,
        response: { 201: Account, 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await accounts.createAccount(request.scope, clock, request.body)),
  );

  app.get(
    '/accounts',
    {
      schema: {
        operationId: 'accounts.list',
        tags: ['Accounts'],
        summary: 'List accounts, newest first',
        querystring: AccountListQuery,
        response: { 200: AccountList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const emptyOnly = request.query.includeEmptyOnly === 'true';
      return pager.list(request.scope.tenantId, request.query, {
        context: `accounts.list:${emptyOnly}`,
        fetch: (window) => accounts.listAccounts(request.scope, window, { emptyOnly, text: null }),
        keyOf: (a) => [a.accountId],
      });
    },
  );

  app.get(
    '/accounts/search',
    {
      schema: {
        operationId: 'accounts.search',
        tags: ['Accounts'],
        summary: 'Find accounts whose domain or name contains the query, newest first',
        querystring: AccountSearchQuery,
        response: { 200: AccountList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const emptyOnly = request.query.includeEmptyOnly === 'true';
      return pager.list(request.scope.tenantId, request.query, {
        context: `accounts.search:${emptyOnly}:${request.query.query}`,
        fetch: (window) => accounts.listAccounts(request.scope, window, { emptyOnly, text: request.query.query }),
        keyOf: (a) => [a.accountId],
      });
    },
  );

  app.get(
    '/accounts/:account_id',
    {
      schema: {
        operationId: 'accounts.get',
        tags: ['Accounts'],
        summary: 'Get an account with its linked persons',
        params: AccountParams,
        response: { 200: Account, ...standardErrorResponses },
      },
    },
    async (request) => accounts.getAccount(request.scope, request.params.account_id),
  );

  app.patch(
    '/accounts/:account_id',
    {
      schema: {
        operationId: 'accounts.patch',
        tags: ['Accounts (extension)'],
        summary: "Rename an account (its `name`; the domain is the account's identity)",
        description: 'Extension of the interface (docs/api.md, Accounts: renaming one).',
        params: AccountParams,
        body: AccountPatchBody,
        response: { 200: Account, ...standardErrorResponses },
      },
    },
    async (request) => accounts.patchAccount(request.scope, clock, request.params.account_id, request.body),
  );
};
