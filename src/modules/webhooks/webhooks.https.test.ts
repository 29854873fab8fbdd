import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { problem, testConfig, useTestApp } from '../../../test/harness.js';
import {
  PUBLIC_ALIAS,
  TEST_SECRET_KEY,
  emit,
  startReceiver,
  subscribe,
  testPolicy,
  testPorts,
  testSecretBox,
} from '../../../test/factories/webhooks.js';
import { createDeliveryEngine } from './webhooks.delivery.js';

/**
 * Issue 26: in production, webhook URLs must be https (personal data and signatures must not
 * travel in clear); development keeps http for local receivers (the other webhook tests).
 */

const t = useTestApp({
  tenants: ['Alice'],
  config: { NODE_ENV: 'production', SECRET_KEY: TEST_SECRET_KEY, PUBLIC_BASE_URL: 'https://api.pages.test' },
});
const [alice] = t.tenants;
const open: { close(): unknown }[] = [];
afterAll(async () => {
  for (const x of open) await x.close();
});

describe('webhook URLs in production', () => {
  it('refuses http on create and on patch (422 at /body/url), takes https', async () => {
    const created = await t.request(alice, {
      method: 'POST',
      url: '/v0/webhook_subscriptions',
      payload: { url: 'http://hooks.example.com/a', events: ['form.submitted'] },
    });
    expect(created.statusCode).toBe(422);
    expect(problem(created).errors).toEqual([
      { path: '/body/url', message: 'must use https (plain http is refused in production)' },
    ]);

    const ok = await t.request(alice, {
      method: 'POST',
      url: '/v0/webhook_subscriptions',
      payload: { url: 'https://hooks.example.com/a', events: ['form.submitted'] },
    });
    expect(ok.statusCode).toBe(201);
    const patched = await t.request(alice, {
      method: 'PATCH',
      url: `/v0/webhook_subscriptions/${ok.json().subscriptionId}`,
      payload: { url: 'http://hooks.example.com/b' },
    });
    expect(patched.statusCode).toBe(422);
    expect(problem(patched).errors[0]!.path).toBe('/body/url');
  });

  it('never sends to an http URL stored earlier (the delivery fails with insecure_scheme)', async () => {
    const receiver = await startReceiver(PUBLIC_ALIAS);
    open.push(receiver);
    // Stored as development allowed it (or before the rule).
    await subscribe(alice.scope, t.clock, receiver.url);
    const { engine, close } = createDeliveryEngine({
      database: t.database,
      clock: t.clock,
      config: { ...testConfig(), nodeEnv: 'production' },
      logger: pino({ level: 'silent' }),
      policy: testPolicy,
      ports: testPorts,
      secretBox: testSecretBox,
      random: () => 0.5,
      concurrency: 4,
    });
    open.push({ close });
    await emit(alice.scope, t.clock);
    expect(await engine.drain()).toBe(1);
    expect(receiver.requests).toHaveLength(0);
    const attempt = await t.database.kysely.selectFrom('webhook_attempts').select('error').executeTakeFirstOrThrow();
    expect(attempt.error).toMatch(/^insecure_scheme/);
  });
});
