import type { ServiceModule } from './module.js';
import { pagesModule } from './pages/index.js';
import { tenantsModule } from './tenants/index.js';
import { webhooksModule } from './webhooks/index.js';

/**
 * Every resource module of the service, in dependency order (the demo data of a later module may
 * use what an earlier one created). Adding a resource = adding its module here.
 */
export const modules: ServiceModule[] = [tenantsModule, pagesModule, webhooksModule];
