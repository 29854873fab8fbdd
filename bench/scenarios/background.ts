import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/lib/clock.js';
import { seedAudience } from '../../src/modules/audiences/audiences.service.js';
import { createVersion } from '../../src/modules/audiences/audiences.versions.js';
import { createSubscription } from '../../src/modules/webhooks/webhooks.service.js';
import { allowEverything } from '../../src/net/address-policy.js';
import { SecretBox } from '../../src/modules/webhooks/webhooks.secret-box.js';
import { type BenchContext, type BenchScenario, benchTenant, CONNECTIONS, measured, startService } from '../lib.js';
import { runLoad } from '../load.js';
import { seedPages } from './pages.js';

const SECRET_KEY = Buffer.alloc(32, 7);

/**
 * Tail latency while background work runs (issue 13): a service starts on a database holding a
 * backlog of queued versions (each one, once generated and published, fans out to webhook
 * deliveries), and `GET /v0/pages?limit=1` is measured while the workers work through it, then
 * again once they are idle; each time at full load and paced at half of what the busy service
 * served. Once with the workers on their own thread (WORKERS_THREAD, the SQLite default), once in
 * the server's thread and once in a second, niced process, so they can be compared in one run.
 */
type Placement = 'thread' | 'inline' | 'process';
const LABELS: Record<Placement, string> = {
  thread: 'workers thread',
  inline: 'workers inline',
  process: 'workers process, nice 10',
};

async function measure(ctx: BenchContext, placement: Placement) {
  const label = LABELS[placement];
  const { database, env, drop } = await ctx.freshDatabase(`tail-${placement}`);
  const tenant = await benchTenant(database, 'bench tail latency');
  // Every tenth seeded page is archived: audiences go on the others.
  const pageIds = (await seedPages(tenant.scope, systemClock, 200)).filter((_, i) => i % 10 !== 0);
  const backlog = ctx.quick ? 400 : 2_000;
  const audiences: { pageId: string; audienceId: string }[] = [];
  for (let i = 0; i < backlog; i++) {
    const pageId = pageIds[i % pageIds.length]!;
    const { audienceId } = await seedAudience(tenant.scope, systemClock, {
      pageId,
      computedName: `Company ${i} · VP Sales`,
      personRouteKey: `person-${i}`,
      metadataOverride: null,
    });
    audiences.push({ pageId, audienceId });
  }
  // The backlog: a queued second version for each audience, for the service's workers to generate.
  for (const { pageId, audienceId } of audiences) {
    await createVersion(tenant.scope, systemClock, pageId, audienceId, {});
  }
  const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const box = new SecretBox([SECRET_KEY]);
  for (let i = 0; i < 5; i++) {
    await createSubscription(
      tenant.scope,
      systemClock,
      { secretBox: box, policy: allowEverything, ports: () => true, maxSubscriptions: 20 },
      {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook/${i}`,
        events: ['page.version.created', 'page.version.processed', 'page.version.published'],
        active: true,
      },
    );
  }
  const queued = async () =>
    Number(
      (
        await database.kysely
          .selectFrom('audience_versions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', 'in', ['queued', 'processing'])
          .executeTakeFirstOrThrow()
      ).n,
    );

  const serviceEnv = {
    ...env,
    WEBHOOK_SECRET_KEY: SECRET_KEY.toString('base64'),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_ALLOWED_PORTS: String((receiver.address() as AddressInfo).port),
  };
  // 'process': the API process runs no workers; a second process of the same server, started
  // with `nice -n 10` (so every thread of it, image decoding included, yields the CPU to the API),
  // runs them against the same database.
  const service = await startService({
    ...serviceEnv,
    WORKERS_THREAD: String(placement === 'thread'),
    RUN_WORKERS: String(placement !== 'process'),
  });
  const workers =
    placement === 'process'
      ? await startService({ ...serviceEnv, WORKERS_THREAD: 'false', RUN_WORKERS: 'true' }, ['nice', '-n', '10'])
      : null;
  const load = (delayMs?: number) =>
    runLoad({
      baseUrl: service.baseUrl,
      headers: { 'x-api-key': tenant.apiKey },
      requests: [{ method: 'GET', path: '/v0/pages?limit=1' }],
      connections: CONNECTIONS,
      durationSeconds: ctx.quick ? 2 : 5,
      delayMs,
      pauses: 'exponential',
    });
  const pendingDeliveries = async () =>
    Number(
      (
        await database.kysely
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow()
      ).n,
    );
  try {
    // Measure once the workers are at it (a thread takes a moment to load), not before.
    const initial = await queued();
    while ((await queued()) === initial) await new Promise((r) => setTimeout(r, 50));
    const before = await queued();
    const busy = await load();
    // Below capacity: the same connections, each pausing before every request (exponentially
    // distributed pauses, as independent visitors) so that together they ask for about half of
    // what the busy service just served. A saturating closed loop
    // measures the scheduler as much as the service (the bare ceiling's own p99 is 3–10× its p50).
    const pacedRate = Math.max(100, Math.round(busy.requestsPerSecond / 2));
    const pace = (CONNECTIONS * 1000) / pacedRate;
    const middle = await queued();
    const busyPaced = await load(pace);
    const after = await queued();
    const idleBy = Date.now() + 600_000;
    while ((await queued()) + (await pendingDeliveries()) > 0 && Date.now() < idleBy) {
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 2000)); // previews and housekeeping settle
    const idle = await load();
    const idlePaced = await load(pace);
    const paced = `paced at ~${pacedRate} req/s`;
    for (const [phase, result, extra] of [
      ['during background work', busy, { versionsQueuedBefore: before, versionsQueuedAfter: middle }],
      [`during background work, ${paced}`, busyPaced, { versionsQueuedBefore: middle, versionsQueuedAfter: after }],
      ['idle', idle, {}],
      [`idle, ${paced}`, idlePaced, {}],
    ] as const) {
      ctx.record(
        measured('background', `GET /v0/pages?limit=1, ${phase} (${label})`, result, {
          p99OverP50: Math.round((result.p99Ms / result.p50Ms) * 100) / 100,
          ...extra,
        }),
      );
    }
  } finally {
    await workers?.stop();
    await service.stop();
    receiver.close();
    await drop();
  }
}

export const backgroundScenario: BenchScenario = {
  name: 'background',
  async run(ctx) {
    await measure(ctx, 'thread');
    await measure(ctx, 'inline');
    await measure(ctx, 'process');
  },
};
