import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TestClock, useTestApp } from '../../../test/harness.js';
import { runCliInProcess } from '../../../test/process.js';
import {
  PUBLIC_ALIAS,
  TEST_SECRET_KEY,
  emit,
  startReceiver,
  subscribe,
  testEngine,
  type Receiver,
} from '../../../test/factories/webhooks.js';

const run = promisify(execFile);
let receiver: Receiver;

const t = useTestApp({ clock: new TestClock(Date.now()) });

beforeAll(async () => {
  receiver = await startReceiver(PUBLIC_ALIAS, (_r, i) => (i === 0 ? { status: 500, body: 'nope' } : { status: 204 }));
});
afterAll(async () => {
  await receiver.close();
});

/** `audience-pages webhook …` on the test database (the CLI's own entry, in this process); the parsed --json output. */
async function cli(...args: string[]) {
  const { stdout } = await runCliInProcess([...args, '--json'], {
    ...t.database.env,
    WEBHOOK_SECRET_KEY: TEST_SECRET_KEY,
    WEBHOOK_ALLOWED_PORTS: String(receiver.port),
  });
  const output = JSON.parse(stdout) as CliOutput & { error?: { code: string; message: string } };
  if (output.error !== undefined) throw new Error(`webhook ${args.join(' ')}: ${output.error.message}`);
  return output;
}

interface CliOutput {
  subscriptions?: unknown[];
  deliveries?: { deliveryId: string }[];
  attempts?: unknown[];
  signingSecret?: string;
  subscription?: unknown;
  replayed?: number;
}

it('lists, inspects, rotates, deactivates, reactivates and replays through the CLI', async () => {
  const tenant = await t.createTenant();
  const sub = await subscribe(tenant.scope, t.clock, receiver.url);
  const event = await emit(tenant.scope, t.clock);
  const { engine, close } = testEngine(t.database, t.clock);
  try {
    await engine.drain(); // the first attempt fails with 500

    const listed = await cli('webhook', 'list', '--tenant', tenant.tenantId);
    expect(listed.subscriptions).toEqual([
      expect.objectContaining({ subscriptionId: sub.subscriptionId, active: true, failingSince: expect.any(String) }),
    ]);
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    const { deliveries } = await cli('webhook', 'deliveries', '--subscription', sub.subscriptionId);
    expect(deliveries).toEqual([
      expect.objectContaining({ eventId: event.id, status: 'pending', attempts: 1, lastStatusCode: 500 }),
    ]);
    const { attempts } = await cli('webhook', 'attempts', deliveries![0]!.deliveryId);
    expect(attempts).toEqual([expect.objectContaining({ statusCode: 500, responseBody: 'nope' })]);

    const rotated = await cli('webhook', 'rotate-secret', sub.subscriptionId, '--grace-hours', '1');
    expect(rotated.signingSecret).toMatch(/^whsec_/);

    expect((await cli('webhook', 'deactivate', sub.subscriptionId)).subscription).toMatchObject({
      active: false,
      deactivatedReason: 'operator',
    });
    expect((await cli('webhook', 'reactivate', sub.subscriptionId)).subscription).toMatchObject({ active: true });
    expect(
      await cli('webhook', 'replay', '--since', new Date(0).toISOString(), '--subscription', sub.subscriptionId),
    ).toMatchObject({
      replayed: 1,
    });

    t.clock.set(new Date().toISOString()); // the CLI ran on real time
    expect(await engine.drain()).toBe(1);
    expect(receiver.requests).toHaveLength(2);
    const last = receiver.requests.at(-1)!;
    expect(last.headers['webhook-id']).toBe(event.id);
    // Signed with the new secret (and, during the grace hour, the old one too).
    expect(() =>
      new Webhook(rotated.signingSecret!).verify(last.body, last.headers as Record<string, string>),
    ).not.toThrow();
    expect(() =>
      new Webhook(sub.signingSecret).verify(last.body, last.headers as Record<string, string>),
    ).not.toThrow();

    const bad = await run(
      process.execPath,
      ['--import', 'tsx', path.resolve('src/main/cli.ts'), 'webhook', 'replay', '--json'],
      {
        env: { ...process.env, ...t.database.env, WEBHOOK_SECRET_KEY: TEST_SECRET_KEY },
      },
    ).catch((err: { stdout: string; code: number }) => err);
    expect(JSON.parse(bad.stdout).error.message).toContain('exactly one of --event or --since');
  } finally {
    close();
  }
}, 120_000);
