import type { ServiceModule } from '../module.js';
import { personLogsDemo } from './person-logs.demo.js';
import { personLogsRoutes } from './person-logs.routes.js';
import { personLogSchemas } from './person-logs.schemas.js';

export const personLogsModule: ServiceModule = {
  name: 'personLogs',
  schemas: personLogSchemas,
  routes: personLogsRoutes,
  demo: personLogsDemo,
};
