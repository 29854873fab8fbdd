import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { TestClock, testConfig, useTestApp } from '../../../test/harness.js';
import {
  CANARY,
  PUBLIC_ALIAS,
  emit,
  startReceiver,
  subscribe,
  testEngine,
  testSecretBox,
} from '../../../test/factories/webhooks.js';
import { appendEvent } from '../../outbox/events.js';
import { SecretBox } from './webhooks.secret-box.js';
import { createDeliveryEngine } from './webhooks.delivery.js';
import * as webhooks from './webhooks.operator.js';
import { pruneWebhookHistory } from './webhooks.retention.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from './webhooks.retry.js';

const open: { close(): unknown }[] = [];
const track = <T extends { close(): unknown }>(x: T) => {
  open.push(x);
  return x;
};

// Real time as the start, so that receivers can check signature timestamps.
const t = useTestApp({ clock: new TestClock(Date.now()) });
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
  // Each test counts its own attempts: close what an earlier test left pending.
  await t.database.kysely
    .updateTable('webhook_deliveries')
    .set({ status: 'failed' })
    .where('status', '=', 'pending')
    .execute();
});

const db = () => t.database.kysely;
const deliveriesOf = (subscriptionId: string) =>
  db().selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', subscriptionId).execute();

async function setup(
  respond?: Parameters<typeof startReceiver>[1],
  engineOptions: Parameters<typeof testEngine>[2] = {},
) {
  const tenant = await t.createTenant();
  const receiver = track(await startReceiver(PUBLIC_ALIAS, respond));
  const { engine, close } = testEngine(t.database, t.clock, engineOptions);
  track({ close });
  return { tenant, receiver, engine };
}

describe('signed delivery', () => {
  it('delivers {type, timestamp, data} with Standard Webhooks headers the library verifies', async () => {
    const { tenant, receiver, engine } = await setup();
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    const event = await emit(tenant.scope, t.clock, 'page.version.published', { versionNumber: 3 });
    expect(await engine.drain()).toBe(1);

    expect(receiver.requests).toHaveLength(1);
    const { headers, body } = receiver.requests[0]!;
    expect(headers['webhook-id']).toBe(event.id);
    expect(headers['content-type']).toBe('application/json');
    const verified = new Webhook(sub.signingSecret).verify(body, headers as Record<string, string>);
    expect(verified).toEqual({
      type: 'page.version.published',
      timestamp: event.timestamp,
      data: { versionId: 'version_x', audienceId: 'audience_x', pageId: 'page_x', versionNumber: 3 },
    });

    // A tampered body, or another subscription's secret, does not verify.
    const wh = new Webhook(sub.signingSecret);
    expect(() => wh.verify(body.replace('version_x', 'version_y'), headers as Record<string, string>)).toThrow();
    const other = await subscribe(tenant.scope, t.clock, receiver.url, ['form.submitted']);
    expect(() => new Webhook(other.signingSecret).verify(body, headers as Record<string, string>)).toThrow();

    const [delivery] = await deliveriesOf(sub.subscriptionId);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 204 });
    const attempts = await webhooks.listAttempts(db(), delivery!.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ statusCode: 204, error: null });
  });

  it('signs with both secrets during a rotation grace period, then only the new one', async () => {
    const { tenant, receiver, engine } = await setup();
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    const rotated = await webhooks.rotateSecret(t.database, t.clock, testSecretBox, sub.subscriptionId, 24);
    expect(rotated.signingSecret).not.toBe(sub.signingSecret);

    await emit(tenant.scope, t.clock);
    await engine.drain();
    const first = receiver.requests[0]!;
    expect(String(first.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [sub.signingSecret, rotated.signingSecret])
      expect(() => new Webhook(secret).verify(first.body, first.headers as Record<string, string>)).not.toThrow();

    // After the grace period only the new secret signs (checked directly: the clock moved on).
    t.clock.advance(24 * 3_600_000 + 1);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    const second = receiver.requests[1]!;
    const signatures = String(second.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(1);
    const at = new Date(Number(second.headers['webhook-timestamp']) * 1000);
    expect(new Webhook(rotated.signingSecret).sign(String(second.headers['webhook-id']), at, second.body)).toBe(
      signatures[0],
    );
  });

  it('signs with the time of the attempt, not of the claim (webhook-timestamp)', async () => {
    const { tenant, receiver } = await setup();
    // Every reading of this clock is 5 s later than the one before: claim and attempt differ.
    const ticking = { now: () => (t.clock.advance(5_000), t.clock.now()) };
    const { engine, close } = testEngine(t.database, ticking);
    track({ close });
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await emit(tenant.scope, t.clock);
    expect(await engine.drain()).toBe(1);
    const [delivery] = await deliveriesOf(sub.subscriptionId);
    const [attempt] = await webhooks.listAttempts(db(), delivery!.id);
    const signedAt = Number(receiver.requests[0]!.headers['webhook-timestamp']);
    expect(signedAt).toBe(Math.floor(Date.parse(attempt!.attemptedAt) / 1000));
  });
});

describe('retries', () => {
  it('retries a receiver that fails N times, on the schedule, with one webhook-id', async () => {
    const N = 3;
    const { tenant, receiver, engine } = await setup((_req, i) =>
      i < N ? { status: 500, body: 'boom' } : { status: 200 },
    );
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    const event = await emit(tenant.scope, t.clock);

    for (let attempt = 1; attempt <= N + 1; attempt++) {
      expect(await engine.drain()).toBe(1);
      expect(receiver.requests).toHaveLength(attempt);
      // Not due again before the delay (jitter fixed at 0 here: random() = 0.5 → ×1.0).
      if (attempt <= N) {
        t.clock.advance(RETRY_DELAYS_MS[attempt - 1]! - 1);
        expect(await engine.drain()).toBe(0);
        t.clock.advance(1);
      }
    }
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));
    const [delivery] = await deliveriesOf(sub.subscriptionId);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: N + 1 });
    const attempts = await webhooks.listAttempts(db(), delivery!.id);
    expect(attempts.map((a) => a.statusCode)).toEqual([500, 500, 500, 200]);
    expect(attempts[0]!.responseBody).toBe('boom');
    // One success clears the subscription's failure streak.
    const [row] = await webhooks.listSubscriptions(db(), { tenantId: tenant.tenantId });
    expect(row!.failingSince).toBeNull();
  });

  it('times out a hanging receiver, waits at least a minute, and retries', async () => {
    let hang = true;
    const { tenant, receiver, engine } = await setup(() => (hang ? 'hang' : { status: 200 }), { timeoutMs: 1000 });
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    let [delivery] = await deliveriesOf(sub.subscriptionId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_error: 'timeout', last_status_code: null });
    expect(Date.parse(delivery!.next_attempt_at) - t.clock.now().getTime()).toBe(60_000);

    hang = false;
    t.clock.advance(59_999);
    expect(await engine.drain()).toBe(0);
    t.clock.advance(1);
    expect(await engine.drain()).toBe(1);
    [delivery] = await deliveriesOf(sub.subscriptionId);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(receiver.requests).toHaveLength(2);
  });

  it('honours Retry-After on 429/503 within bounds', async () => {
    const { tenant, receiver, engine } = await setup((_r, i) =>
      i === 0
        ? { status: 503, headers: { 'retry-after': '600' } }
        : i === 1
          ? { status: 429, headers: { 'retry-after': '999999' } }
          : { status: 200 },
    );
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    let [d] = await deliveriesOf(sub.subscriptionId);
    expect(Date.parse(d!.next_attempt_at) - t.clock.now().getTime()).toBe(600_000);
    t.clock.advance(600_000);
    await engine.drain();
    [d] = await deliveriesOf(sub.subscriptionId);
    // The schedule says 5 min, the receiver asks for 11 days: capped at 6 hours.
    expect(Date.parse(d!.next_attempt_at) - t.clock.now().getTime()).toBe(6 * 3_600_000);
    expect(receiver.requests).toHaveLength(2);
  });

  it('applies ±20% jitter', async () => {
    for (const [random, factor] of [
      [0, 0.8],
      [0.999999, 1.2],
    ] as const) {
      const { tenant, receiver, engine } = await setup(() => ({ status: 500 }), { random: () => random });
      const sub = await subscribe(tenant.scope, t.clock, receiver.url);
      await emit(tenant.scope, t.clock);
      await engine.drain();
      const [d] = await deliveriesOf(sub.subscriptionId);
      expect(Date.parse(d!.next_attempt_at) - t.clock.now().getTime()).toBe(Math.round(5000 * factor));
    }
  });

  it(`gives up after ${MAX_ATTEMPTS} attempts (about a day) and records every one`, async () => {
    const { tenant, receiver, engine } = await setup(() => ({ status: 500, body: 'x'.repeat(10_000) }));
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await emit(tenant.scope, t.clock);
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      expect(await engine.drain()).toBe(1);
      t.clock.advance(RETRY_DELAYS_MS[i] ?? 0);
    }
    t.clock.advance(100 * 3_600_000);
    expect(await engine.drain()).toBe(0);
    const [d] = await deliveriesOf(sub.subscriptionId);
    expect(d).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS });
    const attempts = await webhooks.listAttempts(db(), d!.id);
    expect(attempts).toHaveLength(MAX_ATTEMPTS);
    expect(attempts[0]!.responseBody).toHaveLength(2048);
    expect(receiver.requests).toHaveLength(MAX_ATTEMPTS);
  });

  it('does not follow redirects: a 3xx is a failure and the target receives nothing', async () => {
    const canary = track(await startReceiver(CANARY));
    const { tenant, receiver, engine } = await setup(() => ({ status: 302, headers: { location: canary.url } }));
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    const [d] = await deliveriesOf(sub.subscriptionId);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 302 });
    expect(receiver.requests).toHaveLength(1);
    expect(canary.requests).toHaveLength(0);
  });
});

describe('deactivation', () => {
  it('410 Gone deactivates the subscription and closes its pending deliveries', async () => {
    const { tenant, receiver, engine } = await setup(() => ({ status: 410 }));
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    const [row] = await webhooks.listSubscriptions(db(), { tenantId: tenant.tenantId });
    expect(row).toMatchObject({ active: false, deactivatedReason: 'gone' });
    expect((await deliveriesOf(sub.subscriptionId)).map((d) => d.status)).toEqual(['failed']);
    // New events no longer fan out to it.
    await emit(tenant.scope, t.clock);
    expect(await deliveriesOf(sub.subscriptionId)).toHaveLength(1);
  });

  it('deactivates a subscription that has failed continuously for 5 days', async () => {
    const { tenant, receiver, engine } = await setup(() => ({ status: 500 }));
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    let [row] = await webhooks.listSubscriptions(db(), { tenantId: tenant.tenantId });
    expect(row!.failingSince).toBe(t.clock.now().toISOString());
    for (let day = 1; day <= 5; day++) {
      t.clock.advance(24 * 3_600_000);
      await emit(tenant.scope, t.clock);
      await engine.drain();
      [row] = await webhooks.listSubscriptions(db(), { tenantId: tenant.tenantId });
      expect(row!.active).toBe(day < 5);
    }
    expect(row!.deactivatedReason).toBe('failing');
    expect((await deliveriesOf(sub.subscriptionId)).every((d) => d.status === 'failed')).toBe(true);
    expect(receiver.requests.length).toBeGreaterThan(0);
  });

  it('sends nothing to an inactive subscription, and resumes after reactivation + replay', async () => {
    const { tenant, receiver, engine } = await setup();
    const inactive = await subscribe(tenant.scope, t.clock, receiver.url, ['page.version.published'], false);
    await emit(tenant.scope, t.clock);
    expect(await engine.drain()).toBe(0);
    expect(await deliveriesOf(inactive.subscriptionId)).toHaveLength(0);

    // An operator deactivation closes what was pending; reactivate + replay sends it.
    const live = await subscribe(tenant.scope, t.clock, receiver.url);
    const event = await emit(tenant.scope, t.clock);
    await webhooks.deactivate(t.database, t.clock, live.subscriptionId);
    expect(await engine.drain()).toBe(0);
    expect(receiver.requests).toHaveLength(0);
    await webhooks.reactivate(t.database, t.clock, live.subscriptionId);
    expect(
      await webhooks.replayFailedSince(db(), t.clock, new Date(0).toISOString(), live.subscriptionId),
    ).toMatchObject({ replayed: 1 });
    expect(await engine.drain()).toBe(1);
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([event.id]);
  });
});

describe('fan-out', () => {
  it('delivers each event to every subscribed subscription of its tenant, never another tenant’s', async () => {
    const { tenant: alice, receiver: aliceReceiver, engine } = await setup();
    const bob = await t.createTenant('Bob');
    const bobReceiver = track(await startReceiver(PUBLIC_ALIAS));
    await subscribe(alice.scope, t.clock, aliceReceiver.url, ['page.version.published']);
    await subscribe(alice.scope, t.clock, aliceReceiver.url, ['page.version.published', 'form.submitted']);
    await subscribe(alice.scope, t.clock, aliceReceiver.url, ['form.enriched']);
    await subscribe(bob.scope, t.clock, bobReceiver.url, ['page.version.published']);

    const aliceEvent = await emit(alice.scope, t.clock, 'page.version.published');
    const bobEvent = await emit(bob.scope, t.clock, 'page.version.published');
    await engine.drain();
    expect(aliceReceiver.requests.map((r) => r.headers['webhook-id'])).toEqual([aliceEvent.id, aliceEvent.id]);
    expect(bobReceiver.requests.map((r) => r.headers['webhook-id'])).toEqual([bobEvent.id]);
  });

  it('records no event and no delivery for a change that rolls back', async () => {
    const { tenant, receiver, engine } = await setup();
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    await expect(
      tenant.scope.transaction(async (tx) => {
        await appendEvent(tx, t.clock, 'page.version.published', { versionId: 'version_rolled_back' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await deliveriesOf(sub.subscriptionId)).toHaveLength(0);
    expect(await engine.drain()).toBe(0);
    expect(receiver.requests).toHaveLength(0);
  });

  it('replays one event with the same webhook-id', async () => {
    const { tenant, receiver, engine } = await setup();
    await subscribe(tenant.scope, t.clock, receiver.url);
    const event = await emit(tenant.scope, t.clock);
    await engine.drain();
    expect(await webhooks.replayEvent(db(), t.clock, event.id)).toEqual({ eventId: event.id, replayed: 1 });
    await engine.drain();
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
  });
});

describe('SSRF protection at connection time', () => {
  it('connects to the address it checked: DNS rebinding to the canary gets nothing', async () => {
    const canary = track(await startReceiver(CANARY));
    let lookups = 0;
    const resolver = async () => (lookups++ === 0 ? [PUBLIC_ALIAS] : [CANARY]);
    const { tenant, receiver, engine } = await setup(() => ({ status: 500 }), { resolver });
    // Both receivers listen on the same port, so only the address decides who is reached.
    const canaryTwin = track(await startReceiver(CANARY, undefined, receiver.port));
    const sub = await subscribe(tenant.scope, t.clock, `http://hooks.rebind.test:${receiver.port}/hook`);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers.host).toBe(`hooks.rebind.test:${receiver.port}`);

    t.clock.advance(RETRY_DELAYS_MS[0]!);
    await engine.drain();
    expect(lookups).toBe(2);
    const [d] = await deliveriesOf(sub.subscriptionId);
    expect(d).toMatchObject({ attempts: 2, last_status_code: null });
    expect(d!.last_error).toMatch(/^blocked_address/);
    expect(canary.requests).toHaveLength(0);
    expect(canaryTwin.requests).toHaveLength(0);
    expect(receiver.requests).toHaveLength(1);
  });

  it('skips blocked addresses in a DNS answer and uses the first allowed one', async () => {
    const canaryTwin = { requests: [] as unknown[] };
    const resolver = async () => [CANARY, '10.0.0.1', PUBLIC_ALIAS];
    const { tenant, receiver, engine } = await setup(undefined, { resolver });
    const twin = track(await startReceiver(CANARY, undefined, receiver.port));
    canaryTwin.requests = twin.requests;
    await subscribe(tenant.scope, t.clock, `http://mixed.test:${receiver.port}/hook`);
    await emit(tenant.scope, t.clock);
    await engine.drain();
    expect(receiver.requests).toHaveLength(1);
    expect(canaryTwin.requests).toHaveLength(0);
  });

  it('refuses an IP-literal URL in a blocked range even if it got stored', async () => {
    const canary = track(await startReceiver(CANARY));
    const { tenant, engine } = await setup();
    const sub = await subscribe(tenant.scope, t.clock, 'http://placeholder.test/');
    // As if stored while WEBHOOK_ALLOW_PRIVATE_NETWORKS was on, or by an older version.
    for (const url of [
      canary.url,
      canary.url.replace(CANARY, '2130706433'),
      canary.url.replace(CANARY, '[::ffff:127.0.0.1]'),
    ]) {
      await db().updateTable('webhook_subscriptions').set({ url }).where('id', '=', sub.subscriptionId).execute();
      await emit(tenant.scope, t.clock);
      await engine.drain();
    }
    const rows = await deliveriesOf(sub.subscriptionId);
    expect(rows).toHaveLength(3);
    for (const d of rows) expect(d.last_error).toMatch(/^blocked_address/);
    expect(canary.requests).toHaveLength(0);
  });

  it('refuses a port other than 80, 443 and the allowed ones even if it got stored', async () => {
    // A service on a public address but a port no receiver of the tests was given: not allowed.
    let hits = 0;
    const other = http.createServer((_req, res) => {
      hits++;
      res.end();
    });
    await new Promise<void>((resolve) => other.listen(0, PUBLIC_ALIAS, resolve));
    try {
      const { tenant, engine } = await setup();
      const sub = await subscribe(tenant.scope, t.clock, 'http://placeholder.test/');
      const url = `http://${PUBLIC_ALIAS}:${(other.address() as AddressInfo).port}/hook`;
      await db().updateTable('webhook_subscriptions').set({ url }).where('id', '=', sub.subscriptionId).execute();
      await emit(tenant.scope, t.clock);
      await engine.drain();
      const rows = await deliveriesOf(sub.subscriptionId);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.last_error).toMatch(/^blocked_port/);
      expect(hits).toBe(0);
    } finally {
      other.close();
    }
  });
});

describe('retention', () => {
  it('prunes attempts, closed deliveries and their events after the retention period', async () => {
    const { tenant, receiver, engine } = await setup();
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    const event = await emit(tenant.scope, t.clock);
    await engine.drain();
    // A delivery still pending keeps itself and its event, however old.
    const failing = track(await startReceiver(PUBLIC_ALIAS, () => ({ status: 500 })));
    const stuck = await subscribe(tenant.scope, t.clock, failing.url, ['form.submitted']);
    const stuckEvent = await emit(tenant.scope, t.clock, 'form.submitted');
    await engine.drain();
    t.clock.advance(29 * 24 * 3_600_000);
    await pruneWebhookHistory(db(), t.clock, 30);
    expect(await deliveriesOf(sub.subscriptionId)).toHaveLength(1);
    t.clock.advance(2 * 24 * 3_600_000);
    const pruned = await pruneWebhookHistory(db(), t.clock, 30);
    expect(pruned.deliveries).toBeGreaterThanOrEqual(1);
    expect(pruned.attempts).toBeGreaterThanOrEqual(1);
    expect(await deliveriesOf(sub.subscriptionId)).toHaveLength(0);
    expect(await db().selectFrom('events').select('id').where('id', '=', event.id).execute()).toHaveLength(0);
    expect(await deliveriesOf(stuck.subscriptionId)).toMatchObject([{ status: 'pending' }]);
    expect(await db().selectFrom('events').select('id').where('id', '=', stuckEvent.id).execute()).toHaveLength(1);
  });
});

describe('fairness across tenants', () => {
  /** Tenant A with `backlog` due deliveries (inserted in bulk, all older than anything new). */
  async function backlogged(backlog: number, respond: Parameters<typeof startReceiver>[1]) {
    const a = await t.createTenant('Backlogged');
    const aReceiver = track(await startReceiver(PUBLIC_ALIAS, respond));
    const aSub = await subscribe(a.scope, t.clock, aReceiver.url);
    const event = await emit(a.scope, t.clock);
    const at = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const rows = Array.from({ length: backlog - 1 }, (_, i) => ({
      id: `${event.id}_backlog_${i}`,
      tenant_id: a.tenantId,
      subscription_id: aSub.subscriptionId,
      event_id: event.id,
      event_type: 'page.version.published',
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: at,
      created_at: at,
    }));
    for (let i = 0; i < rows.length; i += 500) {
      await db()
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + 500))
        .execute();
    }
    return { a, aReceiver };
  }

  it('claims round-robin: a new delivery of B is in the next batch despite 10,000 older ones of A', async () => {
    await backlogged(10_000, () => ({ status: 204 }));
    const b = await t.createTenant('Quiet');
    const bReceiver = track(await startReceiver(PUBLIC_ALIAS));
    await subscribe(b.scope, t.clock, bReceiver.url);
    const { engine, close } = testEngine(t.database, t.clock);
    track({ close });
    await emit(b.scope, t.clock);
    const batch = await engine.claim(16);
    expect(batch).toHaveLength(16);
    expect(batch.filter((p) => p.delivery.tenant_id === b.tenantId)).toHaveLength(1);
  });

  it('delivers B within a second while A has 10,000 due deliveries to a receiver that hangs', async () => {
    const { aReceiver } = await backlogged(10_000, () => 'hang');
    const b = await t.createTenant('Quiet');
    const bReceiver = track(await startReceiver(PUBLIC_ALIAS));
    await subscribe(b.scope, t.clock, bReceiver.url);
    // A's attempts hang until the deadline (3 s), longer than B may wait.
    const { engine, close } = testEngine(t.database, t.clock, { timeoutMs: 3_000 });
    const worker = engine.worker('fairness-test', 1_000);
    worker.start();
    try {
      await waitFor(() => aReceiver.requests.length > 0);
      const event = await emit(b.scope, t.clock);
      const started = Date.now();
      worker.wake(); // what the commit's notify does in the service
      await waitFor(() => bReceiver.requests.length > 0, 2_500);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(bReceiver.requests[0]!.headers['webhook-id']).toBe(event.id);
      // A holds at most half of the 16 slots.
      expect(aReceiver.requests.length).toBeLessThanOrEqual(8);
    } finally {
      await aReceiver.close();
      await worker.stop();
      close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('several workers', () => {
  it('never sends the same attempt twice when workers claim side by side', async () => {
    const { tenant, receiver, engine } = await setup();
    const second = testEngine(t.database, t.clock);
    track({ close: second.close });
    for (let i = 0; i < 5; i++) await subscribe(tenant.scope, t.clock, receiver.url);
    for (let i = 0; i < 20; i++) await emit(tenant.scope, t.clock);
    const [a, b] = await Promise.all([engine.drain(), second.engine.drain()]);
    expect(a + b).toBe(100);
    expect(receiver.requests).toHaveLength(100);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(20);
    const rows = await db()
      .selectFrom('webhook_deliveries')
      .select(['attempts', 'status'])
      .where('tenant_id', '=', tenant.tenantId)
      .execute();
    expect(rows).toHaveLength(100);
    for (const row of rows) expect(row).toEqual({ attempts: 1, status: 'succeeded' });
    const attempts = await db()
      .selectFrom('webhook_attempts')
      .select('id')
      .where('tenant_id', '=', tenant.tenantId)
      .execute();
    expect(attempts).toHaveLength(100);
  });
});

describe('a process without the right WEBHOOK_SECRET_KEY', () => {
  it('sends nothing and leaves the delivery queued for a process that has it', async () => {
    const { tenant, receiver, engine } = await setup();
    const sub = await subscribe(tenant.scope, t.clock, receiver.url);
    const { engine: wrong } = createDeliveryEngine({
      database: t.database,
      clock: t.clock,
      config: testConfig(),
      logger: pino({ level: 'silent' }),
      secretBox: new SecretBox([Buffer.alloc(32, 9)]),
      policy: () => true,
    });
    await emit(tenant.scope, t.clock);
    expect(await wrong.drain()).toBe(0);
    expect(receiver.requests).toHaveLength(0);
    expect(await deliveriesOf(sub.subscriptionId)).toMatchObject([{ status: 'pending', attempts: 0 }]);
    t.clock.advance(31_000);
    expect(await engine.drain()).toBe(1);
    expect(receiver.requests).toHaveLength(1);
  });
});
