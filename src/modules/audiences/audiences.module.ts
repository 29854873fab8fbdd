import type { ServiceModule } from '../module.js';
import { audiencesCommands } from './audiences.cli.js';
import { audiencesDemo } from './audiences.demo.js';
import { audiencesRoutes } from './audiences.routes.js';
import { audienceSchemas } from './audiences.schemas.js';
import { generationWorker } from './audiences.generation-worker.js';

export const audiencesModule: ServiceModule = {
  name: 'audiences',
  schemas: audienceSchemas,
  routes: audiencesRoutes,
  demo: audiencesDemo,
  workers: (ctx) => [generationWorker(ctx)],
  commands: audiencesCommands,
};
