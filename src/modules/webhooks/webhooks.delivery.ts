import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Database } from '../../db/connect.js';
import { sharedAcrossProcesses } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { HOUR_MS, SECOND_MS, type Clock } from '../../lib/clock.js';
import { addressPolicy, httpsOnlyIn, portRule, type AddressPolicy, type PortRule } from '../../net/address-policy.js';
import { dnsResolver } from '../../net/dns-resolver.js';
import { SafeHttpClient, type Resolver } from '../../net/http-client.js';
import { DeliveryEngine } from './webhooks.delivery-engine.js';
import { pruneWebhookHistory } from './webhooks.retention.js';
import { secretBoxFor, type SecretBox } from './webhooks.secret-box.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import * as q from './webhooks.queries.js';

/** What a delivery's lease adds to two attempt timeouts: the claim and the recording around them. */
const LEASE_SLACK_MS = SECOND_MS;
/** How often old attempts, deliveries and events are pruned. */
const RETENTION_INTERVAL_MS = HOUR_MS;

/**
 * A claimed delivery is held for two timeouts and a second before another worker may retry it.
 * An attempt ends at its one deadline (DNS included), so the lease outlives it by a whole
 * timeout: a slow answer is recorded long before anyone else may send the delivery again.
 */
function leaseFor(timeoutMs: number): number {
  return 2 * timeoutMs + LEASE_SLACK_MS;
}

/**
 * Deactivates a subscription and closes its pending deliveries as failed (replay them with
 * `webhook replay --failed-since` after reactivating). Returns whether it was active.
 */
export async function deactivateSubscription(
  db: Kysely<DB>,
  subscriptionId: string,
  reason: string,
  nowIso: string,
): Promise<boolean> {
  const deactivated = await q.deactivateSubscription(db, subscriptionId, reason, nowIso);
  await q.closePendingDeliveries(db, subscriptionId, `subscription deactivated (${reason})`, nowIso);
  return deactivated;
}

export interface DeliveryEngineDeps {
  database: Database;
  config: Config;
  clock: Clock;
  logger: Logger;
  /** Defaults from `config` below; tests and the bench replace some. */
  policy?: AddressPolicy;
  ports?: PortRule;
  resolver?: Resolver;
  secretBox?: SecretBox;
  random?: () => number;
  concurrency?: number;
}

/**
 * The one place that wires the delivery engine: its HTTP client (the SSRF policy, the timeout),
 * the secret box, the lease and what deactivation means. The worker, the CLI, the tests and the
 * bench all build it here. `close()` releases the client's sockets.
 */
export function createDeliveryEngine(deps: DeliveryEngineDeps): { engine: DeliveryEngine; close(): void } {
  const { config } = deps;
  const concurrency = deps.concurrency ?? config.webhookConcurrency;
  const client = new SafeHttpClient({
    policy: deps.policy ?? addressPolicy(config.webhookAllowPrivateNetworks),
    ports: deps.ports ?? portRule(config.webhookAllowedPorts),
    httpsOnly: httpsOnlyIn(config),
    resolver: deps.resolver ?? dnsResolver({ servers: config.dnsServers ?? undefined }),
    timeoutMs: config.webhookTimeoutMs,
    maxSockets: concurrency,
  });
  const secretBox = deps.secretBox;
  const engine = new DeliveryEngine({
    database: deps.database,
    clock: deps.clock,
    logger: deps.logger,
    secretBox: secretBox ? () => secretBox : () => secretBoxFor(config),
    client,
    concurrency,
    leaseMs: leaseFor(config.webhookTimeoutMs),
    random: deps.random,
    deactivate: deactivateSubscription,
  });
  return { engine, close: () => client.close() };
}

/** Delivery (woken by every commit that queued deliveries) and the pruning of old history. */
export function webhookWorkers(ctx: WorkerContext): BackgroundWorker[] {
  if (sharedAcrossProcesses(ctx.database.engine) && ctx.config.secretKeys.length === 0) {
    ctx.logger.warn(
      'SECRET_KEY is not set: webhook secrets are sealed with a key generated into DATA_DIR; every process must share it (docs/api.md, Secrets at rest)',
    );
  }
  const { engine, close } = createDeliveryEngine(ctx);
  const delivery = engine.worker();
  const retention = pollingWorker({
    name: 'webhook-retention',
    intervalMs: RETENTION_INTERVAL_MS,
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
        close();
      },
    },
    retention,
  ];
}
