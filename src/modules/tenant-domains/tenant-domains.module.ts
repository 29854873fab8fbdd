import type { ServiceModule } from '../module.js';
import { domainCheckWorker } from './tenant-domains.check-job.js';
import { tenantDomainCommands } from './tenant-domains.cli.js';
import { tenantDomainsDemo } from './tenant-domains.demo.js';
import { tenantDomainsRoutes } from './tenant-domains.routes.js';
import { tenantDomainSchemas } from './tenant-domains.schemas.js';
import { tlsAskRoutes } from './tenant-domains.tls-ask.routes.js';

/**
 * Host names that serve a tenant's pages once proven, and the edge's TLS `ask`: an extension of the
 * interface (docs/api.md, Tenant domains).
 */
export const tenantDomainsModule: ServiceModule = {
  name: 'tenantDomains',
  schemas: tenantDomainSchemas,
  routes: tenantDomainsRoutes,
  publicRoutes: tlsAskRoutes,
  demo: tenantDomainsDemo,
  commands: tenantDomainCommands,
  workers: (ctx) => [domainCheckWorker(ctx)],
};
