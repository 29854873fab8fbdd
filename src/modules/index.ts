import { accountsModule } from './accounts/index.js';
import { assetsModule } from './assets/index.js';
import { filesModule } from './files/index.js';
import type { ServiceModule } from './module.js';
import { audienceSessionsModule } from './audience-sessions/index.js';
import { audiencesModule } from './audiences/index.js';
import { pageLinksModule } from './page-links/index.js';
import { pagesModule } from './pages/index.js';
import { personLogsModule } from './person-logs/index.js';
import { personsModule } from './persons/index.js';
import { siteModule } from './site/index.js';
import { tenantDomainsModule } from './tenant-domains/index.js';
import { tenantsModule } from './tenants/index.js';
import { topicsModule } from './topics/index.js';
import { webhooksModule } from './webhooks/index.js';

/**
 * Every resource module of the service, in dependency order (the demo data of a later module may
 * use what an earlier one created). Adding a resource = adding its module here.
 */
export const modules: ServiceModule[] = [
  tenantsModule,
  pagesModule,
  personsModule,
  personLogsModule,
  accountsModule,
  audiencesModule,
  audienceSessionsModule,
  tenantDomainsModule,
  pageLinksModule,
  filesModule,
  assetsModule,
  topicsModule,
  webhooksModule,
  siteModule,
];
