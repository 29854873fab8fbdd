import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Database } from '../../src/db/connect.js';
import type { TenantScope } from '../../src/db/tenant-scope.js';
import type { Clock } from '../../src/lib/clock.js';
import { testConfig } from '../harness.js';
import { createDeliveryEngine } from '../../src/modules/webhooks/webhooks.delivery.js';
import { createSubscription, listDeliveries } from '../../src/modules/webhooks/webhooks.service.js';
import { portRule, type AddressPolicy, type PortRule } from '../../src/net/address-policy.js';
import { appendEvent, type EventType } from '../../src/outbox/events.js';
import type { Resolver } from '../../src/net/dns-resolver.js';
import { SecretBox } from '../../src/modules/webhooks/webhooks.secret-box.js';

/** A fixed test key (32 bytes), also handed to child processes as WEBHOOK_SECRET_KEY. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');
export const testSecretBox = new SecretBox([Buffer.from(TEST_SECRET_KEY, 'base64')]);

/** Tests call 127.0.0.2 "public"; every other address (127.0.0.1 above all) stays blocked. */
export const PUBLIC_ALIAS = '127.0.0.2';
export const CANARY = '127.0.0.1';
export const testPolicy: AddressPolicy = (ip) => ip === PUBLIC_ALIAS;

/**
 * Receivers listen on ports the system picks, which the port rule (80, 443 and
 * WEBHOOK_ALLOWED_PORTS) would refuse: tests allow exactly the ports of the receivers they started,
 * on top of the real rule, so every other port stays blocked.
 */
const receiverPorts = new Set<number>();
const productionPorts = portRule([]);
export const testPorts: PortRule = (port) => productionPorts(port) || receiverPorts.has(port);

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  close(): Promise<void>;
}

/**
 * An HTTP server on a loopback address that records every request and answers with `respond`
 * (default 204). `respond` may return 'hang' to never answer.
 */
export async function startReceiver(
  host: string,
  respond: (
    req: Received,
    index: number,
  ) => { status: number; headers?: Record<string, string>; body?: string } | 'hang' = () => ({
    status: 204,
  }),
  port = 0,
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(received);
      const answer = respond(received, requests.length - 1);
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const actualPort = (server.address() as AddressInfo).port;
  receiverPorts.add(actualPort);
  return {
    url: `http://${host}:${actualPort}/hook`,
    port: actualPort,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // A closed receiver's port is no longer allowed: the system may hand it to another server
        // (a test's "port not allowed" one) right away.
        receiverPorts.delete(actualPort);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The delivery engine as the service wires it, with the test secret key, policy and a fixed jitter. */
export function testEngine(
  database: Database,
  clock: Clock,
  options: { timeoutMs?: number; resolver?: Resolver; policy?: AddressPolicy; random?: () => number } = {},
) {
  return createDeliveryEngine({
    database,
    clock,
    // Below the configurable minimum on purpose: timeouts are tested in milliseconds.
    config: { ...testConfig(), webhookTimeoutMs: options.timeoutMs ?? 15_000 },
    logger: pino({ level: 'silent' }),
    policy: options.policy ?? testPolicy,
    ports: testPorts,
    resolver: options.resolver,
    secretBox: testSecretBox,
    random: options.random ?? (() => 0.5),
    concurrency: 16,
  });
}

export async function subscribe(
  scope: TenantScope,
  clock: Clock,
  url: string,
  events: EventType[] = ['page.version.published'],
  active = true,
) {
  const created = await createSubscription(
    scope,
    clock,
    {
      secretBox: testSecretBox,
      policy: testPolicy,
      ports: testPorts,
      maxSubscriptions: testConfig().webhookSubscriptionsPerTenant,
    },
    { url, events, active },
  );
  return created.body;
}

export async function emit(scope: TenantScope, clock: Clock, type: EventType = 'page.version.published', data = {}) {
  return scope.transaction((tx) =>
    appendEvent(tx, clock, type, { versionId: 'version_x', audienceId: 'audience_x', pageId: 'page_x', ...data }),
  );
}

/** A subscription's deliveries as the API lists them (newest first). */
export async function deliveriesOf(scope: TenantScope, subscriptionId: string) {
  return (await listDeliveries(scope, subscriptionId, undefined, { limit: 100, after: null })).items;
}

/** Closes a delivery as failed after `attempts` attempts (what the engine does after its retries). */
export async function failDelivery(database: Database, deliveryId: string, attempts: number) {
  await database.kysely
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', attempts })
    .where('id', '=', deliveryId)
    .execute();
}
