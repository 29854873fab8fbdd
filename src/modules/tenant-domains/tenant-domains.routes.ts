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
import { domainVerifier } from './tenant-domains.verification.js';

const EXTENSION = 'Extension of the interface (docs/api.md, Tenant domains). ';

export const tenantDomainsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager, clock, config } = app.ctx;
  const hosts = pageHostsFor(app.ctx);
  const serviceHostnames = domains.serviceHostnames(config);
  const verifyNow = domainVerifier(app.ctx);

  app.post(
    '/tenant_domains',
    {
      schema: {
        operationId: 'tenantDomains.create',
        tags: [TENANT_DOMAINS_TAG],
        summary: 'Claim a host name for the tenant’s pages; it serves once proven by a DNS TXT record',
        description:
          EXTENSION +
          'Answers the claim, `pending`, with the TXT record to publish (`verification`); then call …/verify (or ' +
          'wait for the background checks). `*.localhost` names are verified at once. Point the name (DNS A/AAAA ' +
          'or CNAME) at the service. A name someone holds verified, or this tenant claims already, is 409 ' +
          'hostname_taken; several tenants may hold pending claims on one name, and the first to prove it wins.',
        body: TenantDomainCreateBody,
        response: { 201: Type.Ref('TenantDomain'), 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const domain = await domains.createTenantDomain(request.scope, clock, request.body, { serviceHostnames });
      if (domain.status === 'verified') hosts.add(domain.hostname, request.scope.tenantId);
      return reply.code(201).send(domain);
    },
  );

  app.post(
    '/tenant_domains/:tenant_domain_id/verify',
    {
      schema: {
        operationId: 'tenantDomains.verify',
        tags: [TENANT_DOMAINS_TAG],
        summary: 'Check the domain’s DNS proof now',
        description:
          EXTENSION +
          'Looks up the TXT record of `verification` now. Answers the verified domain (it serves at once), or 422 ' +
          'domain_not_verified saying what was found (no record, other values, a DNS error; the check is recorded on ' +
          'the domain, which stays pending), or 409 hostname_taken when another tenant proved the name first.',
        params: TenantDomainParams,
        response: { 200: Type.Ref('TenantDomain'), 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request) => {
      return verifyNow(request.scope, request.params.tenant_domain_id, request.log);
    },
  );

  app.get(
    '/tenant_domains',
    {
      schema: {
        operationId: 'tenantDomains.list',
        tags: [TENANT_DOMAINS_TAG],
        summary: 'List the tenant’s domains (claims of every status), newest first',
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
      const removed = await domains.deleteTenantDomain(request.scope, clock, request.params.tenant_domain_id);
      if (removed.wasServing) hosts.remove(removed.hostname);
      return reply.code(204).send(null);
    },
  );
};
