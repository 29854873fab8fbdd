import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestClock, createTestDatabase, type TestDatabase } from '../../../test/harness.js';
import {
  CANARY,
  TEST_SECRET_KEY,
  startReceiver,
  testPorts,
  testSecretBox,
  type Receiver,
} from '../../../test/factories/webhooks.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { systemClock } from '../../lib/clock.js';
import { createSubscription } from './webhooks.service.js';
import { createTenant } from '../tenants/index.js';
import { allowEverything } from '../../net/address-policy.js';
import { appendEvent } from '../../outbox/events.js';

let database: TestDatabase;
let receiver: Receiver;
let healthy = false;
const children: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startReceiver(CANARY, () => (healthy ? { status: 200 } : 'hang'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver.close();
  await database.cleanup();
});

/** The real server process (TypeScript through tsx), on this test's database. */
function startServer(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/main/server.ts')], {
    env: {
      ...process.env,
      ...database.env,
      PORT: '0', // never called over HTTP: any free port
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WEBHOOK_SECRET_KEY: TEST_SECRET_KEY,
      // The receiver is on loopback; the real classifier would (rightly) refuse it.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOWED_PORTS: String(receiver.port),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function until(condition: () => Promise<boolean> | boolean, what: string, limitMs = 60_000) {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('delivers everything after kill -9 of the service with deliveries pending and in flight', async () => {
  const clock = new TestClock(Date.now());
  const tenant = await createTenant(database.kysely, systemClock, { name: 'Crash' });
  const scope = TenantScope.of(database, tenant.tenantId);
  await createSubscription(
    scope,
    clock,
    { secretBox: testSecretBox, policy: allowEverything, ports: testPorts, maxSubscriptions: 1 },
    { url: receiver.url, events: ['page.version.created'], active: true },
  );
  const eventIds: string[] = [];
  await scope.transaction(async (tx) => {
    for (let i = 0; i < 30; i++)
      eventIds.push((await appendEvent(tx, systemClock, 'page.version.created', { versionId: `v${i}` })).id);
  });

  // First life: 10 attempts in flight (the receiver hangs; one tenant holds at most half of the
  // 20 slots), 20 still queued; then kill -9.
  const first = startServer({ WEBHOOK_CONCURRENCY: '20', WEBHOOK_TIMEOUT_MS: '2000' });
  await until(() => receiver.requests.length >= 10, 'the first attempts');
  first.kill('SIGKILL');
  await once(first, 'exit');
  const pending = await database.kysely
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .execute();
  expect(pending).toHaveLength(30);

  // Second life: the receiver is healthy; the queued ones go at once, the claimed ones when
  // their lease (2 × timeout + 1 s) ends.
  healthy = true;
  const second = startServer({ WEBHOOK_TIMEOUT_MS: '2000' });
  await until(async () => {
    const left = await database.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '!=', 'succeeded')
      .execute();
    return left.length === 0;
  }, 'every delivery to succeed');
  second.kill('SIGTERM');
  await once(second, 'exit');

  const answered = new Set(receiver.requests.slice(10).map((r) => String(r.headers['webhook-id'])));
  expect([...answered].sort()).toEqual([...eventIds].sort());
}, 120_000);
