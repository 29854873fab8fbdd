import type { InjectOptions } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestClock, problem, rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import {
  PUBLIC_ALIAS,
  TEST_SECRET_KEY,
  emit,
  startReceiver,
  subscribe,
  testEngine,
  testSecretBox,
} from '../../../test/factories/webhooks.js';

/** The extension endpoints (docs/api.md, Webhooks): list, get, patch, delete, rotate, deliveries, replay. */

const CAP = 3;
// Real time as the start, so that the receiver's library accepts the signature timestamps.
const t = useTestApp({
  clock: new TestClock(Date.now()),
  config: { WEBHOOK_SECRET_KEY: TEST_SECRET_KEY, WEBHOOK_SUBSCRIPTIONS_PER_TENANT: String(CAP) },
});

const open: { close(): unknown }[] = [];
beforeEach(() => {
  // Tests move the clock; signatures are checked against real time.
  t.clock.set(new Date().toISOString());
});
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
  // Each test drains its own deliveries: close what an earlier test left pending.
  await t.database.kysely
    .updateTable('webhook_deliveries')
    .set({ status: 'failed' })
    .where('status', '=', 'pending')
    .execute();
});

const api = (tenant: Tenant | null, method: InjectOptions['method'], url: string, payload?: object) =>
  t.request(tenant, { method, url: `/v0${url}`, ...(payload === undefined ? {} : { payload }) });

const create = (tenant: Tenant, body: object = {}) =>
  api(tenant, 'POST', '/webhook_subscriptions', {
    url: 'https://hooks.example.com/a',
    events: ['form.submitted'],
    ...body,
  });

/** A receiver on the tests' "public" address, a subscription to it, and the delivery engine. */
async function withReceiver(respond?: Parameters<typeof startReceiver>[1]) {
  const tenant = await t.createTenant();
  const receiver = await startReceiver(PUBLIC_ALIAS, respond);
  open.push(receiver);
  const { engine, close } = testEngine(t.database, t.clock);
  open.push({ close });
  const sub = await subscribe(tenant.scope, t.clock, receiver.url);
  return { tenant, receiver, engine, sub };
}

const verifies = (secret: string, req: { body: string; headers: Record<string, unknown> }) => {
  try {
    new Webhook(secret).verify(req.body, req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe('GET /v0/webhook_subscriptions and /{id}', () => {
  it('lists newest first with the usual envelope and pagination, and never shows a secret', async () => {
    const tenant = await t.createTenant();
    const a = (await create(tenant, { url: 'https://a.example.com/' })).json();
    t.clock.advance(1);
    const b = (await create(tenant, { url: 'https://b.example.com/', active: false })).json();

    const all = await api(tenant, 'GET', '/webhook_subscriptions');
    expect(all.statusCode).toBe(200);
    expect(all.json()).toEqual({
      hasMore: false,
      items: [b, a].map(({ signingSecret: _s, ...rest }) => rest),
      nextCursor: null,
      totalCount: 2,
    });
    expect(all.body).not.toContain('whsec_');

    const first = (await api(tenant, 'GET', '/webhook_subscriptions?limit=1')).json();
    expect(first).toMatchObject({ hasMore: true, totalCount: 2, items: [{ subscriptionId: b.subscriptionId }] });
    const second = (await api(tenant, 'GET', `/webhook_subscriptions?limit=1&cursor=${first.nextCursor}`)).json();
    expect(second).toMatchObject({ hasMore: false, nextCursor: null, items: [{ subscriptionId: a.subscriptionId }] });

    const one = await api(tenant, 'GET', `/webhook_subscriptions/${a.subscriptionId}`);
    expect(one.statusCode).toBe(200);
    const { signingSecret: _secret, ...shown } = a;
    expect(one.json()).toEqual(shown);
    expect(one.body).not.toContain('whsec_');

    expect((await api(tenant, 'GET', '/webhook_subscriptions?limit=0')).statusCode).toBe(422);
    expect(problem(await api(tenant, 'GET', '/webhook_subscriptions?foo=1')).errors[0]!.path).toBe('/query/foo');
  });
});

describe('another tenant’s ids and unknown ids', () => {
  it('are 404 on every endpoint, and change nothing', async () => {
    const { tenant: alice, engine, sub } = await withReceiver();
    await emit(alice.scope, t.clock);
    await engine.drain();
    const [delivery] = (await api(alice, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries`)).json()
      .items as { deliveryId: string }[];
    const bob = await t.createTenant('Bob');
    const before = await rowCounts(alice);
    const sealed = await t.database.kysely.selectFrom('webhook_subscriptions').selectAll().execute();

    for (const id of [sub.subscriptionId, 'whsub_00000000000000000000000000', 'x'.repeat(200)]) {
      const calls = [
        api(bob, 'GET', `/webhook_subscriptions/${id}`),
        api(bob, 'PATCH', `/webhook_subscriptions/${id}`, { active: false }),
        api(bob, 'DELETE', `/webhook_subscriptions/${id}`),
        api(bob, 'POST', `/webhook_subscriptions/${id}/rotate_secret`, {}),
        api(bob, 'GET', `/webhook_subscriptions/${id}/deliveries`),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.statusCode, res.body).toBe(404);
        expect(problem(res).code).toBe('not_found');
      }
    }
    for (const id of [delivery!.deliveryId, 'whdel_00000000000000000000000000']) {
      const res = await api(bob, 'POST', `/webhook_deliveries/${id}/replay`, {});
      expect(res.statusCode).toBe(404);
    }
    expect(await rowCounts(alice)).toEqual(before);
    expect(await t.database.kysely.selectFrom('webhook_subscriptions').selectAll().execute()).toEqual(sealed);
    expect((await api(bob, 'GET', '/webhook_subscriptions')).json()).toMatchObject({ items: [], totalCount: 0 });
  });
});

describe('PATCH /v0/webhook_subscriptions/{id}', () => {
  it('changes url and events, switches off (closing pending deliveries) and on again', async () => {
    const tenant = await t.createTenant();
    const sub = (await create(tenant, { events: ['page.version.published'] })).json();
    t.clock.advance(1000);

    const patched = await api(tenant, 'PATCH', `/webhook_subscriptions/${sub.subscriptionId}`, {
      url: 'https://hooks.example.com/b',
      events: ['page.version.published', 'form.enriched', 'page.version.published'],
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      url: 'https://hooks.example.com/b',
      events: ['page.version.published', 'form.enriched'],
      active: true,
      updatedAt: t.clock.now().toISOString(),
    });
    expect(patched.body).not.toContain('whsec_');

    // A patch that changes nothing leaves updatedAt alone.
    t.clock.advance(1000);
    const same = await api(tenant, 'PATCH', `/webhook_subscriptions/${sub.subscriptionId}`, {
      url: 'https://hooks.example.com/b',
      active: true,
    });
    expect(same.json().updatedAt).toBe(patched.json().updatedAt);
    expect((await api(tenant, 'PATCH', `/webhook_subscriptions/${sub.subscriptionId}`, {})).json()).toEqual(
      patched.json(),
    );

    await emit(tenant.scope, t.clock);
    const off = await api(tenant, 'PATCH', `/webhook_subscriptions/${sub.subscriptionId}`, { active: false });
    expect(off.json()).toMatchObject({ active: false, deactivatedReason: 'api' });
    const deliveries = (await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries`)).json();
    expect(deliveries.items).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 0, nextAttemptAt: null, lastError: expect.any(String) }),
    ]);
    await emit(tenant.scope, t.clock); // not queued for an inactive subscription
    expect(
      (await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries`)).json().items,
    ).toHaveLength(1);

    const on = await api(tenant, 'PATCH', `/webhook_subscriptions/${sub.subscriptionId}`, { active: true });
    expect(on.json()).toMatchObject({ active: true, deactivatedReason: null });
    await emit(tenant.scope, t.clock);
    expect(
      (await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries`)).json().items[0],
    ).toMatchObject({ status: 'pending', attempts: 0 });
  });

  const bad: [string, object, string, string][] = [
    ['an ftp URL', { url: 'ftp://example.com/hook' }, '/body/url', 'http or https'],
    ['credentials', { url: 'https://user:pw@example.com/' }, '/body/url', 'credentials'],
    ['a loopback address', { url: 'http://127.0.0.1/' }, '/body/url', 'non-public'],
    ['the metadata address', { url: 'http://169.254.169.254/' }, '/body/url', 'non-public'],
    ['not a URL', { url: 'nope' }, '/body/url', 'format'],
    ['a URL over 2048', { url: `https://example.com/${'a'.repeat(2040)}` }, '/body/url', ''],
    ['no events', { events: [] }, '/body/events', 'fewer than 1'],
    ['an unknown event', { events: ['form.submitted', 'page.deleted'] }, '/body/events/1', ''],
    ['events null', { events: null }, '/body/events', ''],
    ['active "yes"', { active: 'yes' }, '/body/active', 'boolean'],
    ['an unknown field', { secret: 'whsec_x' }, '/body/secret', ''],
  ];
  it.each(bad)('refuses %s with 422 at the field and changes nothing', async (_name, body, path, message) => {
    const tenant = await t.createTenant();
    const sub = (await create(tenant)).json();
    const before = await rowCounts(tenant);
    const res = await api(tenant, 'PATCH', `/webhook_subscriptions/${sub.subscriptionId}`, {
      active: false,
      ...body,
    });
    expect(res.statusCode).toBe(422);
    const error = problem(res).errors.find((e) => e.path === path);
    expect(error, res.body).toBeDefined();
    expect(error!.message).toContain(message);
    const { signingSecret: _s, ...unchanged } = sub;
    expect((await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}`)).json()).toEqual(unchanged);
    expect(await rowCounts(tenant)).toEqual(before);
  });
});

describe('DELETE /v0/webhook_subscriptions/{id}', () => {
  it('answers 204, closes pending deliveries, sends nothing more, and is a 404 afterwards', async () => {
    const { tenant, receiver, engine, sub } = await withReceiver();
    await emit(tenant.scope, t.clock);
    const res = await api(tenant, 'DELETE', `/webhook_subscriptions/${sub.subscriptionId}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    await emit(tenant.scope, t.clock);
    expect(await engine.drain()).toBe(0);
    expect(receiver.requests).toHaveLength(0);
    const rows = await t.database.kysely
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('subscription_id', '=', sub.subscriptionId)
      .execute();
    expect(rows.map((r) => r.status)).toEqual(['failed']);

    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['PATCH', ''],
      ['POST', '/rotate_secret'],
      ['GET', '/deliveries'],
    ] as const) {
      const again = await api(
        tenant,
        method,
        `/webhook_subscriptions/${sub.subscriptionId}${path}`,
        method === 'PATCH' || method === 'POST' ? {} : undefined,
      );
      expect(again.statusCode, `${method} ${path}`).toBe(404);
    }
    const replay = await api(tenant, 'POST', `/webhook_deliveries/${rows[0]!.id}/replay`, {});
    expect(replay.statusCode).toBe(404);
    expect((await api(tenant, 'GET', '/webhook_subscriptions')).json()).toMatchObject({ items: [], totalCount: 0 });
  });
});

describe('DELETE /v0/webhook_subscriptions/{id} erases the secrets', () => {
  it('keeps no sealed signing secret, current or previous, in the deleted row (issue 26)', async () => {
    const tenant = await t.createTenant();
    const sub = (await create(tenant)).json();
    const rotate = await api(tenant, 'POST', `/webhook_subscriptions/${sub.subscriptionId}/rotate_secret`, {});
    expect(rotate.statusCode).toBe(200);
    const row = () =>
      t.database.kysely
        .selectFrom('webhook_subscriptions')
        .select(['secret', 'previous_secret', 'previous_secret_expires_at', 'deleted_at'])
        .where('id', '=', sub.subscriptionId)
        .executeTakeFirstOrThrow();
    expect((await row()).previous_secret).not.toBeNull();
    expect((await api(tenant, 'DELETE', `/webhook_subscriptions/${sub.subscriptionId}`)).statusCode).toBe(204);
    const deleted = await row();
    expect(deleted.deleted_at).not.toBeNull();
    expect(deleted).toMatchObject({ secret: '', previous_secret: null, previous_secret_expires_at: null });
  });
});

describe(`at most WEBHOOK_SUBSCRIPTIONS_PER_TENANT (${CAP} here) subscriptions`, () => {
  it('refuses one more with 422 webhook_subscription_limit at /body, writing nothing; deleting frees a place', async () => {
    const tenant = await t.createTenant();
    const subs = [];
    for (let i = 0; i < CAP; i++) subs.push((await create(tenant, { active: i === 0 })).json());
    const before = await rowCounts(tenant);
    const res = await create(tenant, { idempotencyKey: 'one-too-many' });
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('webhook_subscription_limit');
    expect(p.errors).toEqual([{ path: '/body', message: `at most ${CAP} subscriptions per tenant` }]);
    expect(res.body).not.toContain('whsec_');
    expect(await rowCounts(tenant)).toEqual(before);

    // Inactive ones count (reactivating never meets the limit); deleted ones do not.
    expect(
      (await api(tenant, 'PATCH', `/webhook_subscriptions/${subs[1].subscriptionId}`, { active: true })).statusCode,
    ).toBe(200);
    expect((await api(tenant, 'DELETE', `/webhook_subscriptions/${subs[2].subscriptionId}`)).statusCode).toBe(204);
    expect((await create(tenant, { idempotencyKey: 'one-too-many' })).statusCode).toBe(201);
    expect((await create(tenant)).statusCode).toBe(422);
    // Another tenant has its own limit.
    expect((await create(await t.createTenant())).statusCode).toBe(201);
  });

  it('holds under concurrent creations', async () => {
    const tenant = await t.createTenant();
    const results = await Promise.all(Array.from({ length: 8 }, () => create(tenant)));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(CAP);
    expect(results.filter((r) => r.statusCode === 422)).toHaveLength(8 - CAP);
    expect((await api(tenant, 'GET', '/webhook_subscriptions')).json().totalCount).toBe(CAP);
  });
});

describe('idempotencyKey on POST /v0/webhook_subscriptions', () => {
  it('returns the first result (with its secret) and creates one subscription; the key keeps no secret in clear', async () => {
    const tenant = await t.createTenant();
    const first = await create(tenant, { idempotencyKey: 'k1' });
    const again = await create(tenant, { idempotencyKey: 'k1' });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await api(tenant, 'GET', '/webhook_subscriptions')).json().totalCount).toBe(1);

    const keys = await tenant.scope.selectFrom('idempotency_keys').selectAll().execute();
    expect(JSON.stringify(keys)).not.toContain(first.json().signingSecret.slice(6));

    const reused = await create(tenant, { idempotencyKey: 'k1', url: 'https://other.example.com/' });
    expect(reused.statusCode).toBe(422);
    expect(problem(reused).code).toBe('idempotency_key_reused');
  });
});

describe('POST /v0/webhook_subscriptions/{id}/rotate_secret', () => {
  it('shows a new secret once; both secrets sign during the grace period, then only the new one', async () => {
    const { tenant, receiver, engine, sub } = await withReceiver();
    const res = await api(tenant, 'POST', `/webhook_subscriptions/${sub.subscriptionId}/rotate_secret`, {});
    expect(res.statusCode).toBe(200);
    const rotated = res.json();
    expect(rotated).toMatchObject({
      subscriptionId: sub.subscriptionId,
      signingSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      previousSecretExpiresAt: new Date(t.clock.now().getTime() + 24 * 3_600_000).toISOString(),
      updatedAt: t.clock.now().toISOString(),
    });
    expect(rotated.signingSecret).not.toBe(sub.signingSecret);
    const shown = await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}`);
    expect(shown.body).not.toContain('whsec_');
    expect(shown.json().previousSecretExpiresAt).toBe(rotated.previousSecretExpiresAt);

    await emit(tenant.scope, t.clock);
    expect(await engine.drain()).toBe(1);
    const during = receiver.requests[0]!;
    const signatures = String(during.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    expect(verifies(rotated.signingSecret, during)).toBe(true);
    expect(verifies(sub.signingSecret, during)).toBe(true);

    t.clock.advance(24 * 3_600_000 + 1);
    await emit(tenant.scope, t.clock);
    expect(await engine.drain()).toBe(1);
    const after = receiver.requests[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    // The library checks the timestamp against real time: sign as of now to compare.
    const at = new Date(Number(after.headers['webhook-timestamp']) * 1000);
    expect(after.headers['webhook-signature']).toBe(
      new Webhook(rotated.signingSecret).sign(String(after.headers['webhook-id']), at, after.body),
    );
  });

  it('gracePeriodHours: 0 revokes the previous secret at once', async () => {
    const { tenant, receiver, engine, sub } = await withReceiver();
    const res = await api(tenant, 'POST', `/webhook_subscriptions/${sub.subscriptionId}/rotate_secret`, {
      gracePeriodHours: 0,
    });
    expect(res.json().previousSecretExpiresAt).toBeNull();
    await emit(tenant.scope, t.clock);
    await engine.drain();
    const [req] = receiver.requests;
    expect(verifies(res.json().signingSecret, req!)).toBe(true);
    expect(verifies(sub.signingSecret, req!)).toBe(false);
  });

  it('with an idempotencyKey, a retry returns the same secret and rotates once', async () => {
    const tenant = await t.createTenant();
    const [a, b] = [(await create(tenant)).json(), (await create(tenant)).json()];
    const url = `/webhook_subscriptions/${a.subscriptionId}/rotate_secret`;
    const first = await api(tenant, 'POST', url, { idempotencyKey: 'rot-1' });
    const again = await api(tenant, 'POST', url, { idempotencyKey: 'rot-1' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const row = await tenant.scope
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('id', '=', a.subscriptionId)
      .executeTakeFirstOrThrow();
    expect(testSecretBox.open(row.secret, row.id)).toBe(first.json().signingSecret);
    expect(testSecretBox.open(row.previous_secret!, row.id)).toBe(a.signingSecret);
    // The same key for another subscription is another request.
    const other = await api(tenant, 'POST', `/webhook_subscriptions/${b.subscriptionId}/rotate_secret`, {
      idempotencyKey: 'rot-1',
    });
    expect(problem(other).code).toBe('idempotency_key_reused');
  });

  const bad: [string, unknown, string][] = [
    ['a negative grace period', { gracePeriodHours: -1 }, '/body/gracePeriodHours'],
    ['over 720 hours', { gracePeriodHours: 721 }, '/body/gracePeriodHours'],
    ['a fraction', { gracePeriodHours: 1.5 }, '/body/gracePeriodHours'],
    ['a string', { gracePeriodHours: '24' }, '/body/gracePeriodHours'],
    ['an unknown field', { secret: 'whsec_mine' }, '/body/secret'],
    ['an empty key', { idempotencyKey: '' }, '/body/idempotencyKey'],
    ['an array', [], '/body'],
  ];
  it.each(bad)('refuses %s with 422 and keeps the secret', async (_name, body, path) => {
    const tenant = await t.createTenant();
    const sub = (await create(tenant)).json();
    const before = await rowCounts(tenant);
    const res = await api(tenant, 'POST', `/webhook_subscriptions/${sub.subscriptionId}/rotate_secret`, body as object);
    expect(res.statusCode).toBe(422);
    expect(problem(res).errors.map((e) => e.path)).toContain(path);
    expect(res.body).not.toContain('whsec_');
    expect(await rowCounts(tenant)).toEqual(before);
    const row = await tenant.scope
      .selectFrom('webhook_subscriptions')
      .select(['id', 'secret'])
      .executeTakeFirstOrThrow();
    expect(testSecretBox.open(row.secret, row.id)).toBe(sub.signingSecret);
  });

  it('refuses a request without a body (422 /body)', async () => {
    const tenant = await t.createTenant();
    const sub = (await create(tenant)).json();
    const res = await api(tenant, 'POST', `/webhook_subscriptions/${sub.subscriptionId}/rotate_secret`);
    expect(res.statusCode).toBe(422);
  });
});

describe('GET /v0/webhook_subscriptions/{id}/deliveries', () => {
  it('lists deliveries newest first with status, attempts, last status and next attempt; filters by status', async () => {
    const { tenant, engine, sub } = await withReceiver((_req, i) => (i === 0 ? { status: 500 } : { status: 204 }));
    const failing = await emit(tenant.scope, t.clock, 'page.version.published');
    await engine.drain(); // 500: pending, retried in 5 s
    t.clock.advance(1);
    const ok = await emit(tenant.scope, t.clock, 'page.version.published');
    await engine.drain();

    const res = await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ hasMore: false, nextCursor: null, totalCount: null });
    expect(body.items).toEqual([
      {
        deliveryId: expect.stringMatching(/^whdel_/),
        subscriptionId: sub.subscriptionId,
        eventId: ok.id,
        eventType: 'page.version.published',
        status: 'succeeded',
        attempts: 1,
        lastAttemptAt: expect.any(String),
        lastStatusCode: 204,
        lastError: null,
        nextAttemptAt: null,
        createdAt: ok.timestamp,
        completedAt: expect.any(String),
      },
      expect.objectContaining({
        eventId: failing.id,
        status: 'pending',
        attempts: 1,
        lastStatusCode: 500,
        nextAttemptAt: expect.any(String),
        completedAt: null,
      }),
    ]);

    const pending = (
      await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries?status=pending`)
    ).json();
    expect(pending.items.map((d: { eventId: string }) => d.eventId)).toEqual([failing.id]);

    const page1 = (await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries?limit=1`)).json();
    expect(page1).toMatchObject({ hasMore: true, items: [{ eventId: ok.id }] });
    const page2 = (
      await api(
        tenant,
        'GET',
        `/webhook_subscriptions/${sub.subscriptionId}/deliveries?limit=1&cursor=${page1.nextCursor}`,
      )
    ).json();
    expect(page2).toMatchObject({ hasMore: false, items: [{ eventId: failing.id }] });
    // The cursor is bound to the filter.
    const crossed = await api(
      tenant,
      'GET',
      `/webhook_subscriptions/${sub.subscriptionId}/deliveries?limit=1&status=failed&cursor=${page1.nextCursor}`,
    );
    expect(problem(crossed).code).toBe('invalid_cursor');
    const wrong = await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries?status=done`);
    expect(problem(wrong).errors[0]!.path).toBe('/query/status');
  });
});

describe('POST /v0/webhook_deliveries/{id}/replay', () => {
  it('sends a closed delivery again with the same webhook-id; 409 while pending or when the subscription is off', async () => {
    const { tenant, receiver, engine, sub } = await withReceiver();
    const event = await emit(tenant.scope, t.clock);
    const [queued] = (await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries`)).json()
      .items as { deliveryId: string }[];
    const url = `/webhook_deliveries/${queued!.deliveryId}/replay`;

    // Pending (queued, or in flight right now): it goes out anyway.
    const early = await api(tenant, 'POST', url, {});
    expect(early.statusCode).toBe(409);
    expect(problem(early).code).toBe('webhook_delivery_pending');

    await engine.drain();
    t.notified.length = 0;
    const res = await api(tenant, 'POST', url, { idempotencyKey: 'replay-1' });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      deliveryId: queued!.deliveryId,
      eventId: event.id,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: t.clock.now().toISOString(),
      completedAt: null,
      lastStatusCode: 204,
    });
    expect(t.notified).toContain('events');
    // The same key again: the first answer, no second replay (which would be a 409 now).
    const again = await api(tenant, 'POST', url, { idempotencyKey: 'replay-1' });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');

    expect(await engine.drain()).toBe(1);
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
    expect(verifies(sub.signingSecret, receiver.requests[1]!)).toBe(true);
    const attempts = await t.database.kysely
      .selectFrom('webhook_attempts')
      .select('id')
      .where('delivery_id', '=', queued!.deliveryId)
      .execute();
    expect(attempts).toHaveLength(2); // earlier attempts stay recorded

    await api(tenant, 'PATCH', `/webhook_subscriptions/${sub.subscriptionId}`, { active: false });
    const off = await api(tenant, 'POST', url, {});
    expect(off.statusCode).toBe(409);
    expect(problem(off)).toMatchObject({ code: 'webhook_subscription_inactive', subscriptionId: sub.subscriptionId });

    for (const body of [{ idempotencyKey: 1 }, { force: true }]) {
      expect((await api(tenant, 'POST', url, body)).statusCode).toBe(422);
    }
  });

  it('restarts a delivery once when two replays race', async () => {
    const { tenant, engine, sub } = await withReceiver(() => ({ status: 400 }));
    await emit(tenant.scope, t.clock);
    for (let i = 0; i < 8; i++) {
      await engine.drain();
      t.clock.advance(11 * 3_600_000);
    }
    const [failed] = (await api(tenant, 'GET', `/webhook_subscriptions/${sub.subscriptionId}/deliveries`)).json()
      .items as { deliveryId: string; status: string }[];
    expect(failed!.status).toBe('failed');
    const results = await Promise.all(
      Array.from({ length: 4 }, () => api(tenant, 'POST', `/webhook_deliveries/${failed!.deliveryId}/replay`, {})),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([202, 409, 409, 409]);
  });
});
