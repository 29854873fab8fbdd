import type { ServiceModule } from '../module.js';
import { webhookCommands } from './webhooks.cli.js';
import { webhookWorkers } from './webhooks.delivery.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { webhookSchemas } from './webhooks.schemas.js';

/**
 * Webhook subscriptions (endpoint 21, and the extension endpoints that list, change, delete,
 * rotate and replay: docs/api.md, Webhooks) and the delivery of every event to them.
 */
export const webhooksModule: ServiceModule = {
  name: 'webhooks',
  schemas: webhookSchemas,
  routes: webhooksRoutes,
  workers: webhookWorkers,
  commands: webhookCommands,
};
