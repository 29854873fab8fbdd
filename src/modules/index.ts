import { accountsModule } from './accounts/index.js';
import type { ServiceModule } from './module.js';
import { pagesModule } from './pages/index.js';
import { personLogsModule } from './person-logs/index.js';
import { personsModule } from './persons/index.js';
import { tenantsModule } from './tenants/index.js';

/**
 * Every resource module of the service, in dependency order (the demo data of a later module may
 * use what an earlier one created). Adding a resource = adding its module here.
 */
export const modules: ServiceModule[] = [tenantsModule, pagesModule, personsModule, personLogsModule, accountsModule];
