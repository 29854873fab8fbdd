import { addressPolicy } from '../../outbox/address-policy.js';
import { DeliveryEngine } from '../../outbox/delivery-worker.js';
import { WebhookClient } from '../../outbox/http-client.js';
import { pruneWebhookHistory } from '../../outbox/retention.js';
import { secretBoxFor } from '../../outbox/secret-box.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import type { ServiceModule } from '../module.js';
import { leaseFor, webhookCommands } from './webhooks.cli.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { webhookSchemas } from './webhooks.schemas.js';

function webhookWorkers(ctx: WorkerContext): BackgroundWorker[] {
  if (ctx.database.engine === 'postgres' && ctx.config.webhookSecretKeys.length === 0) {
    ctx.logger.warn(
      'WEBHOOK_SECRET_KEY is not set: webhook secrets are sealed with a key generated into DATA_DIR; every process must share it (docs/api.md, Secrets at rest)',
    );
  }
  const client = new WebhookClient({
    policy: addressPolicy(ctx.config.webhookAllowPrivateNetworks),
    timeoutMs: ctx.config.webhookTimeoutMs,
    maxSockets: ctx.config.webhookConcurrency,
  });
  const engine = new DeliveryEngine({
    database: ctx.database,
    clock: ctx.clock,
    logger: ctx.logger,
    secretBox: () => secretBoxFor(ctx.config),
    client,
    concurrency: ctx.config.webhookConcurrency,
    leaseMs: leaseFor(ctx.config.webhookTimeoutMs),
  });
  const delivery = engine.worker();
  const retention = pollingWorker({
    name: 'webhook-retention',
    intervalMs: 60 * 60 * 1000,
    logger: ctx.logger,
    tick: async () => {
      const pruned = await pruneWebhookHistory(ctx.database.kysely, ctx.clock, ctx.config.webhookRetentionDays);
      if (pruned.attempts + pruned.deliveries + pruned.events > 0) ctx.logger.info(pruned, 'pruned webhook history');
      return false;
    },
  });
  return [
    {
      ...delivery,
      stop: async () => {
        await delivery.stop();
        client.close();
      },
    },
    retention,
  ];
}

/** Webhook subscriptions (endpoint 21) and the delivery of every event to them. */
export const webhooksModule: ServiceModule = {
  name: 'webhooks',
  schemas: webhookSchemas,
  routes: webhooksRoutes,
  workers: webhookWorkers,
  commands: webhookCommands,
};
