import type { ServiceModule } from '../module.js';
import { pagesCommands } from './pages.cli.js';
import { pagesDemo } from './pages.demo.js';
import { pagesRoutes } from './pages.routes.js';
import { pageSchemas } from './pages.schemas.js';

export const pagesModule: ServiceModule = {
  name: 'pages',
  schemas: pageSchemas,
  routes: pagesRoutes,
  demo: pagesDemo,
  commands: pagesCommands,
};
