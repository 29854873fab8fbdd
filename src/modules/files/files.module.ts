import type { ServiceModule } from '../module.js';
import { fileCommands } from './files.cli.js';
import { filesPublicRoutes } from './files.public.routes.js';
import { filesRoutes } from './files.routes.js';
import { fileSchemas } from './files.schemas.js';
import { filesWorkers } from './files.worker.js';

/** Uploaded files: an extension of the interface (docs/api.md, Files), the source of asset fileIds. */
export const filesModule: ServiceModule = {
  name: 'files',
  schemas: fileSchemas,
  routes: filesRoutes,
  publicRoutes: filesPublicRoutes,
  workers: filesWorkers,
  commands: fileCommands,
};
