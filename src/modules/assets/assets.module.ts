import type { ServiceModule } from '../module.js';
import { describerWorker, type ImageDescriber } from './assets.describer.js';
import { assetsDemo } from './assets.demo.js';
import { assetsRoutes } from './assets.routes.js';
import { assetSchemas } from './assets.schemas.js';

/** Assets; with an image describer, a worker fills in `aiDescription` after each creation. */
function createAssetsModule(options: { describer?: ImageDescriber } = {}): ServiceModule {
  const { describer } = options;
  return {
    name: 'assets',
    schemas: assetSchemas,
    routes: assetsRoutes,
    demo: assetsDemo,
    workers: describer ? (ctx) => [describerWorker(ctx, describer)] : undefined,
  };
}

/** The built-in module: no describer, so `aiDescription` stays null. */
export const assetsModule = createAssetsModule();
