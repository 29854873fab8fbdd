import type { ServiceModule } from '../module.js';
import { accountsDemo } from './accounts.demo.js';
import { accountsRoutes } from './accounts.routes.js';
import { accountSchemas } from './accounts.schemas.js';

export const accountsModule: ServiceModule = {
  name: 'accounts',
  schemas: accountSchemas,
  routes: accountsRoutes,
  demo: accountsDemo,
};
