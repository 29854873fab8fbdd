import type { ServiceModule } from '../module.js';
import { siteRoutes } from './site.routes.js';

/**
 * The visitor side: tenant hosts serve the published pages of their links, the runtime's script
 * and stylesheet, the collection endpoint that turns visits into audience sessions
 * (docs/pages-runtime.md), and the pages' forms (docs/forms.md).
 */
export const siteModule: ServiceModule = {
  name: 'site',
  publicRoutes: siteRoutes,
};
