import { positional, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { MAX_DOMAINS_PER_TENANT, type TenantDomain } from './tenant-domains.schemas.js';
import * as domains from './tenant-domains.service.js';
import { proofResolver, verifyTenantDomain } from './tenant-domains.verification.js';

/** The record to publish, as a zone file line, and what to run next; nothing for a verified domain. */
function publish(domain: TenantDomain, tenantId: string) {
  if (domain.status === 'verified') return {};
  const { name, value } = domain.verification;
  return {
    publish: `${name}. 300 IN TXT "${value}"`,
    then: `audience-pages domain verify ${domain.tenantDomainId} --tenant ${tenantId}`,
  };
}

/**
 * `domain add|verify|list|remove`: the same rules as the API (running servers pick changes up
 * within a second).
 */
export const tenantDomainCommands: CliCommand[] = [
  {
    path: ['domain', 'add'],
    summary: 'Claim a host name for a tenant’s pages (e.g. pages.acme.com); prints the TXT record that proves it',
    options: { tenant: { type: 'string' } },
    positionals: 'HOSTNAME',
    run: async (ctx, { values, positionals }) => {
      const scope = await tenantScope(ctx, values);
      const domain = await domains.createTenantDomain(
        scope,
        ctx.clock,
        { hostname: positional(positionals, 'HOSTNAME') },
        { serviceHostnames: domains.serviceHostnames(ctx.config) },
      );
      return { ...domain, ...publish(domain, scope.tenantId) };
    },
  },
  {
    path: ['domain', 'verify'],
    summary: 'Check a domain’s TXT record now (DNS_SERVERS, or the system’s name servers)',
    options: { tenant: { type: 'string' } },
    positionals: 'TENANT_DOMAIN_ID',
    run: async (ctx, { values, positionals }) =>
      verifyTenantDomain(
        await tenantScope(ctx, values),
        ctx.clock,
        positional(positionals, 'TENANT_DOMAIN_ID'),
        proofResolver(ctx.config),
      ),
  },
  {
    path: ['domain', 'list'],
    summary: 'List a tenant’s domains with their status, newest first',
    options: { tenant: { type: 'string' } },
    run: async (ctx, { values }) => {
      const scope = await tenantScope(ctx, values);
      const { items } = await domains.listTenantDomains(scope, { limit: MAX_DOMAINS_PER_TENANT, after: null });
      return { tenantDomains: items.map((domain) => ({ ...domain, ...publish(domain, scope.tenantId) })) };
    },
  },
  {
    path: ['domain', 'remove'],
    summary: 'Remove a domain and delete its page links',
    options: { tenant: { type: 'string' } },
    positionals: 'TENANT_DOMAIN_ID',
    run: async (ctx, { values, positionals }) => {
      const tenantDomainId = positional(positionals, 'TENANT_DOMAIN_ID');
      const { hostname } = await domains.deleteTenantDomain(await tenantScope(ctx, values), ctx.clock, tenantDomainId);
      return { tenantDomainId, hostname, removed: true };
    },
  },
];
