import type { ServiceModule } from '../module.js';
import { describerWorker, type ImageDescriber } from './assets.describer.js';
import { assetsDemo } from './assets.demo.js';
import { assetPurgeWorker } from './assets.purge.js';
import { assetsRoutes } from './assets.routes.js';
import { assetSchemas } from './assets.schemas.js';

/**
 * Assets: the purge of deleted assets' bytes; with an image describer, a worker fills in
 * `aiDescription` after each creation.
 */
function createAssetsModule(options: { describer?: ImageDescriber } = {}): ServiceModule {
  const { describer } = options;
  return {
    name: 'assets',
    schemas: assetSchemas,
    routes: assetsRoutes,
    demo: assetsDemo,
    workers: (ctx) => [assetPurgeWorker(ctx), ...(describer ? [describerWorker(ctx, describer)] : [])],
  };
}

/** The built-in module: no describer, so `aiDescription` stays null. */
export const assetsModule = createAssetsModule();
