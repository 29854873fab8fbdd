import type { ServiceModule } from '../module.js';
import { agentRoutes } from './agent.routes.js';
import { agentSchemas } from './agent.schemas.js';

export const agentModule: ServiceModule = {
  name: 'agent',
  schemas: agentSchemas,
  routes: agentRoutes,
};
