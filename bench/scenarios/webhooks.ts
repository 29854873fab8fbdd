import fs from 'node:fs';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { createDeliveryEngine } from '../../src/modules/webhooks/webhooks.delivery.js';
import { createSubscription } from '../../src/modules/webhooks/webhooks.service.js';
import { allowEverything } from '../../src/net/address-policy.js';
import { appendEvent } from '../../src/outbox/events.js';
import { SecretBox } from '../../src/modules/webhooks/webhooks.secret-box.js';
import { benchTenant, percentile, type BenchContext, type BenchScenario } from '../lib.js';

const SUBSCRIPTIONS = 100;

interface ReceiverDump {
  arrivals: [string, number][];
  verified: number;
  rejected: number;
  failedOnPurpose: number;
  bodyBytes: number;
}

/**
 * The loopback receiver, in a child process (bench/webhook-receiver.mjs) as a real receiver
 * would be: it verifies every signature with the library. `failFirst` answers 500 to the first
 * attempt of every delivery (so half of all attempts fail); the retry 5 s later succeeds.
 */
async function startReceiver(secrets: string[], failFirst: boolean) {
  const child = fork(path.resolve('bench/webhook-receiver.mjs'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T>(type: string, payload: Record<string, unknown> = {}) =>
    new Promise<T>((resolve) => {
      const onMessage = (message: { type: string }) => {
        if (message.type !== type && !(type === 'start' && message.type === 'listening')) return;
        child.off('message', onMessage);
        resolve(message as T);
      };
      child.on('message', onMessage);
      child.send({ type, ...payload });
    });
  const { port } = await ask<{ port: number }>('start', { secrets, failFirst });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    arrived: async () => (await ask<{ arrived: number }>('stats')).arrived,
    dump: async () => {
      const dump = await ask<ReceiverDump>('dump');
      await once(child, 'exit');
      return dump;
    },
  };
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Runs the delivery worker in this process on its own database (the shared bench service
 * must not race it for the queue), with 100 subscriptions pointing at one loopback receiver.
 * Events are appended at `eventsPerSecond` (each fans out to 100 deliveries) and the worker is
 * woken after each commit, as the service does; latency is commit → arrival at the receiver.
 */
async function measure(
  ctx: BenchContext,
  options: { name: string; eventsPerSecond: number; seconds: number; failFirst: boolean },
) {
  const fresh = await ctx.freshDatabase('webhooks');
  const { database } = fresh;
  const box = new SecretBox([Buffer.alloc(32, 1)]);
  const tenant = await benchTenant(database, 'bench webhooks');

  const secrets: string[] = [];
  const urls: string[] = [];
  const receiverSecrets: string[] = [];
  // The receiver must exist before the URLs do; create subscriptions against a placeholder first.
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const { body: sub } = await createSubscription(
      tenant.scope,
      systemClock,
      // Above the API's default limit on purpose: the bench measures fan-out to many receivers.
      { secretBox: box, policy: allowEverything, ports: () => true, maxSubscriptions: SUBSCRIPTIONS },
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
  const { engine, close } = createDeliveryEngine({
    database,
    config,
    clock: systemClock,
    logger: pino({ level: 'warn' }),
    policy: allowEverything,
    // The receiver listens on a port the system picks: a bench, not a tenant.
    ports: () => true,
    secretBox: box,
  });
  const worker = engine.worker('bench-delivery', 1000);
  worker.start();

  const commits = new Map<string, number>();
  const total = Math.round(options.eventsPerSecond * options.seconds);
  const started = wallNow();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / options.eventsPerSecond;
    const wait = due - wallNow();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const event = await tenant.scope.transaction((tx) =>
      appendEvent(tx, systemClock, 'page.version.published', {
        versionId: `version_${i}`,
        audienceId: 'audience_bench',
        pageId: 'page_bench',
      }),
    );
    commits.set(event.id, wallNow());
    worker.wake();
  }
  const expected = total * SUBSCRIPTIONS;
  const deadline = wallNow() + 120_000;
  while ((await receiver.arrived()) < expected && wallNow() < deadline) await new Promise((r) => setTimeout(r, 50));
  const received = await receiver.dump();
  await worker.stop();
  close();
  const finished = Math.max(...received.arrivals.map(([, at]) => at));
  const latencies = received.arrivals.map(([key, at]) => at - commits.get(key.split(':')[1]!)!).sort((a, b) => a - b);
  const attempts = Number(
    (
      await database.kysely
        .selectFrom('webhook_attempts')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  await fresh.drop();
  fs.rmSync(fresh.env.DATA_DIR!, { recursive: true, force: true });

  ctx.record({
    scenario: 'webhooks',
    name: options.name,
    requestsPerSecond: Math.round(received.arrivals.length / ((finished - started) / 1000)),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    responseBytes: received.bodyBytes,
    non2xx: received.rejected,
    errors: expected - received.arrivals.length,
    ratioToCeiling: null,
    extra: {
      unit: 'deliveries/s (verified arrivals over the whole run)',
      subscriptions: SUBSCRIPTIONS,
      events: total,
      deliveriesExpected: expected,
      deliveriesVerified: received.arrivals.length,
      signatureRejections: received.rejected,
      attempts,
      attemptsPerSecond: Math.round(attempts / ((finished - started) / 1000)),
      failedOnPurpose: received.failedOnPurpose,
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
