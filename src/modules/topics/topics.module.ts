import type { ServiceModule } from '../module.js';
import { topicsDemo } from './topics.demo.js';
import { topicsRoutes } from './topics.routes.js';
import { topicSchemas } from './topics.schemas.js';

export const topicsModule: ServiceModule = {
  name: 'topics',
  schemas: topicSchemas,
  routes: topicsRoutes,
  demo: topicsDemo,
};
