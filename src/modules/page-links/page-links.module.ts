import type { ServiceModule } from '../module.js';
import { pageLinksDemo } from './page-links.demo.js';
import { pageLinksRoutes } from './page-links.routes.js';
import { pageLinkSchemas } from './page-links.schemas.js';

export const pageLinksModule: ServiceModule = {
  name: 'pageLinks',
  schemas: pageLinkSchemas,
  routes: pageLinksRoutes,
  demo: pageLinksDemo,
};
