import type { ServiceModule } from '../module.js';
import { tenantDomainCommands } from './tenant-domains.cli.js';
import { tenantDomainsDemo } from './tenant-domains.demo.js';
import { tenantDomainsRoutes } from './tenant-domains.routes.js';
import { tenantDomainSchemas } from './tenant-domains.schemas.js';

/** Host names that serve a tenant's pages: an extension of the interface (docs/api.md, Tenant domains). */
export const tenantDomainsModule: ServiceModule = {
  name: 'tenantDomains',
  schemas: tenantDomainSchemas,
  routes: tenantDomainsRoutes,
  demo: tenantDomainsDemo,
  commands: tenantDomainCommands,
};
