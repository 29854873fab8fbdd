import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { pageHostsFor } from './tenant-domains.hosts.js';
import {
  TENANT_DOMAINS_TAG,
  TenantDomainCreateBody,
  TenantDomainList,
  TenantDomainListQuery,
  TenantDomainParams,
} from './tenant-domains.schemas.js';
import * as domains from './tenant-domains.service.js';
import { apiHostname } from './tenant-domains.service.js';

const EXTENSION = 'Extension of the interface (docs/api.md, Tenant domains). ';

export const tenantDomainsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager, clock, config } = app.ctx;
  const hosts = pageHostsFor(app.ctx);
  const ownHost = apiHostname(config.publicBaseUrl);

  app.post(
    '/tenant_domains',
    {
      schema: {
        operationId: 'tenantDomains.create',
        tags: [TENANT_DOMAINS_TAG],
        summary: 'Register a host name that serves the tenant’s pages',
        description:
          EXTENSION +
          'Point the host name (DNS) at the service; page links on it (or on no domain) are then served there. ' +
          'A host name belongs to one tenant: taken by anyone, it is 409 hostname_taken.',
        body: TenantDomainCreateBody,
        response: { 201: Type.Ref('TenantDomain'), 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const domain = await domains.createTenantDomain(request.scope, clock, request.body, { apiHostname: ownHost });
      hosts.add(domain.hostname, request.scope.tenantId);
      return reply.code(201).send(domain);
    },
  );

  app.get(
    '/tenant_domains',
    {
      schema: {
        operationId: 'tenantDomains.list',
        tags: [TENANT_DOMAINS_TAG],
        summary: 'List the tenant’s domains, newest first',
        description: EXTENSION,
        querystring: TenantDomainListQuery,
        response: { 200: TenantDomainList, ...standardErrorResponses },
      },
    },
    async (request) =>
      pager.list(request.scope.tenantId, request.query, {
        context: 'tenantDomains.list',
        fetch: (window) => domains.listTenantDomains(request.scope, window),
        keyOf: (d) => [d.tenantDomainId],
      }),
  );

  app.delete(
    '/tenant_domains/:tenant_domain_id',
    {
      schema: {
        operationId: 'tenantDomains.delete',
        tags: [TENANT_DOMAINS_TAG],
        summary: 'Remove a domain; its page links are deleted with it and stop serving at once',
        description: EXTENSION + 'Answers 204. The host name is free again afterwards.',
        params: TenantDomainParams,
        response: { 204: Type.Null({ description: 'Removed.' }), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const hostname = await domains.deleteTenantDomain(request.scope, clock, request.params.tenant_domain_id);
      hosts.remove(hostname);
      return reply.code(204).send(null);
    },
  );
};
