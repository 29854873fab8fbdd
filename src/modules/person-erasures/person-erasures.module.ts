import type { ServiceModule } from '../module.js';
import { personErasureCommands } from './person-erasures.cli.js';
import { personErasuresRoutes } from './person-erasures.routes.js';
import { personErasureSchemas } from './person-erasures.schemas.js';

/** Erasing and exporting a person (issue 26, docs/privacy.md). */
export const personErasuresModule: ServiceModule = {
  name: 'person-erasures',
  schemas: personErasureSchemas,
  routes: personErasuresRoutes,
  commands: personErasureCommands,
};
