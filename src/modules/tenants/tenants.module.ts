import type { ServiceModule } from '../module.js';
import { tenantCommands } from './tenants.cli.js';

export const tenantsModule: ServiceModule = {
  name: 'tenants',
  commands: tenantCommands,
};
