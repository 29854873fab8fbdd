import { accountsModule } from './accounts/accounts.module.js';
import { agentModule } from './agent/agent.module.js';
import { assetsModule } from './assets/assets.module.js';
import { consoleModule } from './console/console.module.js';
import { enrichmentModule } from './enrichment/enrichment.module.js';
import { filesModule } from './files/files.module.js';
import { formSubmissionsModule } from './form-submissions/form-submissions.module.js';
import type { ServiceModule } from './module.js';
import { audienceSessionsModule } from './audience-sessions/audience-sessions.module.js';
import { audiencesModule } from './audiences/audiences.module.js';
import { pageLinksModule } from './page-links/page-links.module.js';
import { pagesModule } from './pages/pages.module.js';
import { personErasuresModule } from './person-erasures/person-erasures.module.js';
import { personLogsModule } from './person-logs/person-logs.module.js';
import { personsModule } from './persons/persons.module.js';
import { siteModule } from './site/site.module.js';
import { tenantDomainsModule } from './tenant-domains/tenant-domains.module.js';
import { tenantsModule } from './tenants/tenants.module.js';
import { topicsModule } from './topics/topics.module.js';
import { webhooksModule } from './webhooks/webhooks.module.js';

/**
 * The registry: every resource module of the service, in dependency order (the demo data of a
 * later module may use what an earlier one created). Only the composition root (app.ts, main/,
 * the demo command) reads it; modules reach each other through their own index.ts instead.
 * Adding a resource = adding its module here.
 */
export const modules: ServiceModule[] = [
  tenantsModule,
  pagesModule,
  personsModule,
  personLogsModule,
  accountsModule,
  topicsModule, // before audiences: the demo's first versions are written from the tenant's topics
  audiencesModule,
  audienceSessionsModule,
  agentModule,
  tenantDomainsModule,
  pageLinksModule,
  filesModule,
  assetsModule,
  webhooksModule,
  enrichmentModule,
  formSubmissionsModule,
  personErasuresModule,
  siteModule,
  consoleModule, // last: its demo invites the demo tenant's console user
];
