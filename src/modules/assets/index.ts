import type { ServiceModule } from '../module.js';
import { assetsDemo } from './assets.demo.js';
import { assetsRoutes } from './assets.routes.js';
import { assetSchemas } from './assets.schemas.js';

export const assetsModule: ServiceModule = {
  name: 'assets',
  schemas: assetSchemas,
  routes: assetsRoutes,
  demo: assetsDemo,
};
