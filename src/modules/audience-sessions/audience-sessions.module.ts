import type { ServiceModule } from '../module.js';
import { audienceSessionsDemo } from './audience-sessions.demo.js';
import { audienceSessionsRoutes } from './audience-sessions.routes.js';
import { audienceSessionSchemas } from './audience-sessions.schemas.js';

export const audienceSessionsModule: ServiceModule = {
  name: 'audienceSessions',
  schemas: audienceSessionSchemas,
  routes: audienceSessionsRoutes,
  demo: audienceSessionsDemo,
};
