import type { DemoContext } from '../module.js';
import { createTenantDomain, serviceHostnames } from './tenant-domains.service.js';

function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'tenant'
  );
}

/**
 * Two domains: `<tenant-slug>-<id suffix>.localhost`, verified at once, which a browser on this
 * machine resolves to the service (open the printed URLs after `npm start`), and a production-like
 * one, pending, with the TXT record its owner would publish.
 */
export async function tenantDomainsDemo(ctx: DemoContext) {
  const name = (ctx.created.tenants?.name as string | undefined) ?? 'demo';
  const suffix = ctx.scope.tenantId.slice(-6);
  const options = { serviceHostnames: serviceHostnames(ctx.config) };
  const local = await createTenantDomain(
    ctx.scope,
    ctx.clock,
    { hostname: `${slug(name)}-${suffix}.localhost` },
    options,
  );
  const production = await createTenantDomain(
    ctx.scope,
    ctx.clock,
    { hostname: `go-${suffix}.northwind-traders.com` },
    options,
  );
  return {
    tenantDomainIds: [local.tenantDomainId, production.tenantDomainId],
    localDomain: { tenantDomainId: local.tenantDomainId, hostname: local.hostname, status: local.status },
    pendingDomain: {
      tenantDomainId: production.tenantDomainId,
      hostname: production.hostname,
      status: production.status,
      verification: production.verification,
    },
  };
}
