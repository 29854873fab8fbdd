import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { parseConfig } from '../../src/config.js';
import { connectDatabase, sqliteFileIn } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { systemClock } from '../../src/lib/clock.js';
import { leaseFor } from '../../src/modules/webhooks/webhooks.cli.js';
import { createSubscription } from '../../src/modules/webhooks/webhooks.service.js';
import { allowEverything } from '../../src/outbox/address-policy.js';
import { DeliveryEngine } from '../../src/outbox/delivery-worker.js';
import { appendEvent } from '../../src/outbox/events.js';
import { WebhookClient } from '../../src/outbox/http-client.js';
import { SecretBox } from '../../src/outbox/secret-box.js';
import { benchTenant, type BenchContext, type BenchScenario } from '../lib.js';

const SUBSCRIPTIONS = 100;

interface Receiver {
  baseUrl: string;
  arrivals: Map<string, number>;
  verified: number;
  rejected: number;
  failedOnPurpose: number;
  bodyBytes: number;
  close(): Promise<void>;
}

/**
 * A loopback receiver that verifies every signature with the library. `failFirst` answers 500 to
 * the first attempt of every delivery (so half of all attempts fail); the retry 5 s later succeeds.
 */
async function startReceiver(secrets: string[], failFirst: boolean): Promise<Receiver> {
  const verifiers = secrets.map((s) => new Webhook(s));
  const seen = new Set<string>();
  const r: Omit<Receiver, 'baseUrl' | 'close'> = {
    arrivals: new Map(),
    verified: 0,
    rejected: 0,
    failedOnPurpose: 0,
    bodyBytes: 0,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const index = Number(req.url!.split('/').pop());
      const key = `${index}:${String(req.headers['webhook-id'])}`;
      if (failFirst && !seen.has(key)) {
        seen.add(key);
        r.failedOnPurpose++;
        res.writeHead(500).end();
        return;
      }
      try {
        verifiers[index]!.verify(body, req.headers as Record<string, string>);
        r.verified++;
        r.bodyBytes = body.length;
        if (!r.arrivals.has(key)) r.arrivals.set(key, performance.now());
        res.writeHead(204).end();
      } catch {
        r.rejected++;
        res.writeHead(400).end();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(r, {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

/**
 * Runs the delivery worker in this process on its own SQLite database (the shared bench service
 * must not race it for the queue), with 100 subscriptions pointing at one loopback receiver.
 * Events are appended at `eventsPerSecond` (each fans out to 100 deliveries) and the worker is
 * woken after each commit, as the service does; latency is commit → arrival at the receiver.
 */
async function measure(
  ctx: BenchContext,
  options: { name: string; eventsPerSecond: number; seconds: number; failFirst: boolean },
) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-bench-webhooks-'));
  const database = connectDatabase({ databaseUrl: null, sqliteFile: sqliteFileIn(dataDir) });
  await migrateToLatest(database);
  const box = new SecretBox([Buffer.alloc(32, 1)]);
  const tenant = await benchTenant(database, 'bench webhooks');

  const secrets: string[] = [];
  const urls: string[] = [];
  const receiverSecrets: string[] = [];
  // The receiver must exist before the URLs do; create subscriptions against a placeholder first.
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const sub = await createSubscription(
      tenant.scope,
      systemClock,
      { secretBox: box, policy: allowEverything },
      { url: `http://127.0.0.1:1/hook/${i}`, events: ['page.version.published'], active: true },
    );
    secrets.push(sub.signingSecret);
    receiverSecrets.push(sub.signingSecret);
    urls.push(sub.subscriptionId);
  }
  const receiver = await startReceiver(receiverSecrets, options.failFirst);
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    await database.kysely
      .updateTable('webhook_subscriptions')
      .set({ url: `${receiver.baseUrl}/hook/${i}` })
      .where('id', '=', urls[i]!)
      .execute();
  }

  // The service's defaults (WEBHOOK_CONCURRENCY, WEBHOOK_TIMEOUT_MS), private networks allowed.
  const config = parseConfig({});
  const client = new WebhookClient({
    policy: allowEverything,
    timeoutMs: config.webhookTimeoutMs,
    maxSockets: config.webhookConcurrency,
  });
  const engine = new DeliveryEngine({
    database,
    clock: systemClock,
    logger: pino({ level: 'warn' }),
    secretBox: () => box,
    client,
    concurrency: config.webhookConcurrency,
    leaseMs: leaseFor(config.webhookTimeoutMs),
  });
  const worker = engine.worker('bench-delivery', 1000);
  worker.start();

  const commits = new Map<string, number>();
  const total = Math.round(options.eventsPerSecond * options.seconds);
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / options.eventsPerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const event = await tenant.scope.transaction((tx) =>
      appendEvent(tx, systemClock, 'page.version.published', {
        versionId: `version_${i}`,
        audienceId: 'audience_bench',
        pageId: 'page_bench',
      }),
    );
    commits.set(event.id, performance.now());
    worker.wake();
  }
  const expected = total * SUBSCRIPTIONS;
  const deadline = performance.now() + 120_000;
  while (receiver.arrivals.size < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const finished = Math.max(...receiver.arrivals.values());
  await worker.stop();
  client.close();
  await receiver.close();

  const latencies = [...receiver.arrivals]
    .map(([key, at]) => at - commits.get(key.split(':')[1]!)!)
    .sort((a, b) => a - b);
  const attempts = Number(
    (
      await database.kysely
        .selectFrom('webhook_attempts')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  await database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });

  ctx.record({
    scenario: 'webhooks',
    name: options.name,
    requestsPerSecond: Math.round(receiver.arrivals.size / ((finished - started) / 1000)),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    responseBytes: receiver.bodyBytes,
    non2xx: receiver.rejected,
    errors: expected - receiver.arrivals.size,
    ratioToCeiling: null,
    extra: {
      unit: 'deliveries/s (verified arrivals over the whole run)',
      subscriptions: SUBSCRIPTIONS,
      events: total,
      deliveriesExpected: expected,
      deliveriesVerified: receiver.arrivals.size,
      signatureRejections: receiver.rejected,
      attempts,
      failedOnPurpose: receiver.failedOnPurpose,
      offeredDeliveriesPerSecond: options.eventsPerSecond * SUBSCRIPTIONS,
    },
  });
}

/** Webhook delivery: throughput and commit-to-arrival latency to a loopback receiver. */
export const webhooksScenario: BenchScenario = {
  name: 'webhooks',
  async run(ctx) {
    const seconds = ctx.quick ? 3 : 10;
    await measure(ctx, {
      name: 'deliveries, 100 subscriptions, 1,000/s offered',
      eventsPerSecond: 10,
      seconds,
      failFirst: false,
    });
    await measure(ctx, {
      name: 'deliveries, 100 subscriptions, 2,000/s offered',
      eventsPerSecond: 20,
      seconds,
      failFirst: false,
    });
    await measure(ctx, {
      name: 'deliveries, half the attempts fail (retry after 5 s)',
      eventsPerSecond: 10,
      seconds,
      failFirst: true,
    });
  },
};
