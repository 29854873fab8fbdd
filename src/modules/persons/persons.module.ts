import type { ServiceModule } from '../module.js';
import { personsRoutes } from './persons.routes.js';
import { personSchemas } from './persons.schemas.js';

export const personsModule: ServiceModule = {
  name: 'persons',
  schemas: personSchemas,
  routes: personsRoutes,
};
