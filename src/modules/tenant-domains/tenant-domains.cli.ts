import { positional, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { MAX_DOMAINS_PER_TENANT } from './tenant-domains.schemas.js';
import * as domains from './tenant-domains.service.js';
import { apiHostname } from './tenant-domains.service.js';

/** `domain add|list|remove`: the same rules as the API (running servers pick changes up within a second). */
export const tenantDomainCommands: CliCommand[] = [
  {
    path: ['domain', 'add'],
    summary: 'Register a host name for a tenant’s pages (e.g. pages.acme.com)',
    options: { tenant: { type: 'string' } },
    positionals: 'HOSTNAME',
    run: async (ctx, { values, positionals }) =>
      domains.createTenantDomain(
        await tenantScope(ctx, values),
        ctx.clock,
        { hostname: positional(positionals, 'HOSTNAME') },
        { apiHostname: apiHostname(ctx.config.publicBaseUrl) },
      ),
  },
  {
    path: ['domain', 'list'],
    summary: 'List a tenant’s domains, newest first',
    options: { tenant: { type: 'string' } },
    run: async (ctx, { values }) => {
      const { items } = await domains.listTenantDomains(await tenantScope(ctx, values), {
        limit: MAX_DOMAINS_PER_TENANT,
        after: null,
      });
      return { tenantDomains: items };
    },
  },
  {
    path: ['domain', 'remove'],
    summary: 'Remove a domain and delete its page links',
    options: { tenant: { type: 'string' } },
    positionals: 'TENANT_DOMAIN_ID',
    run: async (ctx, { values, positionals }) => {
      const tenantDomainId = positional(positionals, 'TENANT_DOMAIN_ID');
      const hostname = await domains.deleteTenantDomain(await tenantScope(ctx, values), ctx.clock, tenantDomainId);
      return { tenantDomainId, hostname, removed: true };
    },
  },
];
