import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/connect.js';
import { forUpdateSkipLocked } from '../db/dialect.js';
import type { DB } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import type { BackgroundWorker } from '../workers/worker.js';
import { pollingWorker } from '../workers/polling-worker.js';
import { EVENTS_CHANNEL } from './events.js';
import type { SafeHttpClient } from '../net/http-client.js';
import { planRecording, type AttemptResult, type ClaimedDelivery, type RecordingPlan } from './delivery-plan.js';
import type { SecretBox } from './secret-box.js';
import { signedHeaders } from './signing.js';

/** How long finished attempts wait for company before their results are written. */
const FLUSH_WINDOW_MS = 10;
const FLUSH_BATCH = 64;
/** Rows per statement when writing many at once. */
const CHUNK = 500;

export interface DeliveryEngineOptions {
  database: Database;
  clock: Clock;
  logger: Logger;
  secretBox: () => SecretBox;
  client: SafeHttpClient;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** How long a claimed delivery is held before another worker may take it (crash recovery). */
  leaseMs: number;
  /** For the ±20% jitter; tests pass a fixed one. */
  random?: () => number;
  /**
   * Deactivates a subscription inside the transaction that records the attempt which decided it
   * (410 Gone, or failing for too long). What deactivation means belongs to the webhooks module.
   */
  deactivate: (trx: Kysely<DB>, subscriptionId: string, reason: string, nowIso: string) => Promise<unknown>;
}

interface Prepared {
  delivery: ClaimedDelivery;
  /** null: the subscription is no longer active, the delivery is closed without an attempt. */
  request: { url: string; eventId: string; body: string; secrets: string[] } | null;
  failingSince: string | null;
}

/**
 * Sends pending deliveries. The `webhook_deliveries` table is the queue: a worker claims due rows
 * (skipping rows another PostgreSQL worker holds) and moves their `next_attempt_at` one lease
 * ahead, so a crashed worker's rows come due again by themselves; the result of each attempt then
 * sets the real next time, or closes the delivery. At-least-once: a crash between the receiver's
 * answer and the commit of the result means that attempt is made again, with the same webhook-id.
 */
export class DeliveryEngine {
  readonly #o: DeliveryEngineOptions;
  readonly #db: Kysely<DB>;
  readonly #random: () => number;
  #inFlight = 0;
  /** The worker's attempts in flight, by tenant. */
  #busy = new Map<string, number>();
  /** The last tenant served by a claim: the next claim starts after it (round-robin). */
  #cursor = '';
  #pending: AttemptResult[] = [];
  #flushing: Promise<void> | null = null;
  #sends = new Set<Promise<void>>();
  /** Opened secrets by sealed value: opening is cheap, but not free at thousands per second. */
  #opened = new Map<string, string>();

  constructor(options: DeliveryEngineOptions) {
    this.#o = options;
    this.#db = options.database.kysely;
    this.#random = options.random ?? Math.random;
  }

  /** How many of the worker's slots one tenant may hold: half, so others always find room. */
  get #tenantSlots(): number {
    return Math.max(1, Math.ceil(this.#o.concurrency / 2));
  }

  /**
   * Claims up to `limit` due deliveries and holds them for one lease, fairly across tenants: the
   * tenants with due deliveries are taken round-robin (in tenant-id order, starting after the
   * last one served, at most `limit` of them per claim), each gets an equal share of the batch,
   * and each share is that tenant's oldest due deliveries. So one tenant's backlog delays another
   * tenant's delivery by at most ⌈tenants with due work / limit⌉ claims, never by its own length.
   * `busy` (the worker's attempts in flight, by tenant) keeps each tenant at most at
   * `tenantSlots` of them: a slow receiver cannot take every slot.
   */
  async claim(limit: number, busy?: ReadonlyMap<string, number>): Promise<Prepared[]> {
    if (limit <= 0) return [];
    const now = this.#o.clock.now();
    const nowIso = now.toISOString();
    const engine = this.#o.database.engine;
    const full = busy ? [...busy].filter(([, n]) => n >= this.#tenantSlots).map(([tenant]) => tenant) : [];
    const claimed = await this.#db.transaction().execute(async (trx) => {
      const tenants = (await this.#dueTenants(trx, nowIso, limit + full.length))
        .filter((t) => !full.includes(t))
        .slice(0, limit);
      if (tenants.length === 0) return [];
      const share = Math.ceil(limit / tenants.length);
      const rows: ClaimedDelivery[] = [];
      const taken = new Map<string, string[]>();
      const take = async (tenant: string, room: number) => {
        const ids = taken.get(tenant) ?? [];
        let query = trx
          .selectFrom('webhook_deliveries')
          .select(['id', 'tenant_id', 'subscription_id', 'event_id', 'attempts'])
          .where('status', '=', 'pending')
          .where('tenant_id', '=', tenant)
          .where('next_attempt_at', '<=', nowIso);
        // Our own locks do not make PostgreSQL skip a row: leave out what this claim took already.
        if (ids.length > 0) query = query.where('id', 'not in', ids);
        const got = await forUpdateSkipLocked(engine, query.orderBy('next_attempt_at').limit(room)).execute();
        rows.push(...got);
        taken.set(tenant, [...ids, ...got.map((r) => r.id)]);
        return got.length === room;
      };
      const cap = (tenant: string) =>
        busy ? this.#tenantSlots - (busy.get(tenant) ?? 0) - (taken.get(tenant)?.length ?? 0) : Infinity;
      const room = (tenant: string, n: number) => Math.min(n, limit - rows.length, cap(tenant));
      // An equal share each; what tenants with fewer due deliveries leave over goes to the others.
      const more: string[] = [];
      for (const tenant of tenants) {
        const n = room(tenant, share);
        if (n > 0 && (await take(tenant, n))) more.push(tenant);
      }
      for (const tenant of more) {
        const n = room(tenant, limit);
        if (n > 0) await take(tenant, n);
      }
      this.#cursor = tenants[tenants.length - 1]!;
      for (let i = 0; i < rows.length; i += CHUNK) {
        await trx
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: new Date(now.getTime() + this.#o.leaseMs).toISOString() })
          .where(
            'id',
            'in',
            rows.slice(i, i + CHUNK).map((r) => r.id),
          )
          .execute();
      }
      return rows;
    });
    if (claimed.length === 0) return [];
    return this.#prepare(claimed, now);
  }

  /**
   * Up to `max` tenants with a due delivery, in tenant-id order from just after the cursor,
   * wrapping around. A loose index scan (webhook_deliveries_tenant_due): one seek per tenant with
   * pending deliveries to find the next tenant, one to read its oldest `next_attempt_at`; the
   * cost follows the number of tenants, not the number of deliveries.
   */
  async #dueTenants(trx: Kysely<DB>, nowIso: string, max: number): Promise<string[]> {
    const after = async (cursor: string, n: number) => {
      const { rows } = await sql<{ tenant_id: string }>`
        with recursive pending_tenant(tenant_id) as (
          select (select min(tenant_id) from webhook_deliveries
                   where status = 'pending' and tenant_id > ${cursor})
          union all
          select (select min(d.tenant_id) from webhook_deliveries d
                   where d.status = 'pending' and d.tenant_id > p.tenant_id)
            from pending_tenant p where p.tenant_id is not null
        )
        select p.tenant_id from pending_tenant p
         where p.tenant_id is not null
           and (select min(d.next_attempt_at) from webhook_deliveries d
                 where d.status = 'pending' and d.tenant_id = p.tenant_id) <= ${nowIso}
         limit ${n}`.execute(trx);
      return rows.map((r) => r.tenant_id);
    };
    const found = await after(this.#cursor, max);
    if (found.length < max && this.#cursor !== '') {
      for (const tenant of await after('', max - found.length)) {
        if (tenant > this.#cursor || found.includes(tenant)) break;
        found.push(tenant);
      }
    }
    return found;
  }

  async #prepare(claimed: ClaimedDelivery[], now: Date): Promise<Prepared[]> {
    const subscriptionIds = [...new Set(claimed.map((c) => c.subscription_id))];
    const eventIds = [...new Set(claimed.map((c) => c.event_id))];
    const [subscriptions, events] = await Promise.all([
      this.#db
        .selectFrom('webhook_subscriptions')
        .select(['id', 'url', 'active', 'secret', 'previous_secret', 'previous_secret_expires_at', 'failing_since'])
        .where('id', 'in', subscriptionIds)
        .execute(),
      this.#db.selectFrom('events').select(['id', 'type', 'data', 'created_at']).where('id', 'in', eventIds).execute(),
    ]);
    const secrets = new Map<string, string[]>();
    for (const s of subscriptions) {
      try {
        const list = [this.#open(s.secret, s.id)];
        if (s.previous_secret && s.previous_secret_expires_at && s.previous_secret_expires_at > now.toISOString())
          list.push(this.#open(s.previous_secret, s.id));
        secrets.set(s.id, list);
      } catch (err) {
        // Wrong or missing SECRET_KEY (or a secret sealed for another subscription): leave its deliveries claimed; they come due again
        // when the lease ends, and go out once a process with the right key takes them.
        this.#o.logger.error({ err, subscriptionId: s.id }, 'cannot open the signing secret of a subscription');
      }
    }
    const subs = new Map(subscriptions.map((s) => [s.id, s]));
    // The body of an event is the same bytes on every attempt and for every subscription.
    const bodies = new Map(
      events.map((e) => [e.id, JSON.stringify({ type: e.type, timestamp: e.created_at, data: e.data })]),
    );
    const sendable = claimed.filter((d) => secrets.has(d.subscription_id) || !subs.get(d.subscription_id)?.active);
    return sendable.map((delivery) => {
      const sub = subs.get(delivery.subscription_id);
      const body = bodies.get(delivery.event_id);
      if (!sub || !sub.active || body === undefined) return { delivery, request: null, failingSince: null };
      return {
        delivery,
        failingSince: sub.failing_since,
        request: { url: sub.url, eventId: delivery.event_id, body, secrets: secrets.get(sub.id)! },
      };
    });
  }

  #open(sealed: string, subscriptionId: string): string {
    const cacheKey = `${subscriptionId}\n${sealed}`;
    let plain = this.#opened.get(cacheKey);
    if (plain === undefined) {
      if (this.#opened.size >= 10_000) this.#opened.clear();
      plain = this.#o.secretBox().open(sealed, subscriptionId);
      this.#opened.set(cacheKey, plain);
    }
    return plain;
  }

  async #send(prepared: Prepared): Promise<AttemptResult> {
    const { delivery, failingSince, request } = prepared;
    const now = this.#o.clock.now();
    const attemptedAt = now.toISOString();
    if (request === null) return { delivery, failingSince, attemptedAt, outcome: null };
    // Signed now, not when claimed: `webhook-timestamp` is the time of this attempt.
    const headers = signedHeaders(request.eventId, now, request.body, request.secrets);
    const outcome = await this.#o.client.post(request.url, headers, request.body);
    return { delivery, failingSince, attemptedAt, outcome };
  }

  /** Writes the results of a batch of attempts in one transaction. */
  async record(results: AttemptResult[]): Promise<void> {
    if (results.length === 0) return;
    const now = this.#o.clock.now();
    const plan = planRecording(results, now, this.#random);
    const deactivated = await this.#db.transaction().execute((trx) => this.#apply(trx, plan, now.toISOString()));
    for (const [subscriptionId, reason] of deactivated)
      this.#o.logger.warn({ subscriptionId, reason }, 'webhook subscription deactivated');
  }

  /**
   * Applies a recording plan. Every delivery update is guarded by `status = 'pending'`: a delivery
   * closed meanwhile (its subscription was deactivated) stays closed.
   */
  async #apply(trx: Kysely<DB>, plan: RecordingPlan, nowIso: string): Promise<Map<string, string>> {
    for (let i = 0; i < plan.attempts.length; i += CHUNK) {
      await trx
        .insertInto('webhook_attempts')
        .values(plan.attempts.slice(i, i + CHUNK))
        .execute();
    }
    const pending = (ids: string[]) =>
      trx.updateTable('webhook_deliveries').where('id', 'in', ids).where('status', '=', 'pending');
    for (const [statusCode, ids] of plan.succeededByStatus) {
      for (let i = 0; i < ids.length; i += CHUNK) {
        await pending(ids.slice(i, i + CHUNK))
          .set({
            status: 'succeeded',
            attempts: sql`attempts + 1`,
            last_attempt_at: nowIso,
            last_status_code: statusCode,
            last_error: null,
            completed_at: nowIso,
          })
          .execute();
      }
    }
    for (const { deliveryId, changes } of plan.failed) await pending([deliveryId]).set(changes).execute();
    if (plan.closedInactive.length > 0) {
      await pending(plan.closedInactive)
        .set({ status: 'failed', last_error: 'subscription inactive', completed_at: nowIso })
        .execute();
    }
    if (plan.healthy.length > 0) {
      await trx
        .updateTable('webhook_subscriptions')
        .set({ failing_since: null })
        .where('id', 'in', plan.healthy)
        .where('failing_since', 'is not', null)
        .execute();
    }
    if (plan.startFailing.length > 0) {
      await trx
        .updateTable('webhook_subscriptions')
        .set({ failing_since: nowIso })
        .where('id', 'in', plan.startFailing)
        .where('failing_since', 'is', null)
        .execute();
    }
    for (const [id, reason] of plan.deactivate) await this.#o.deactivate(trx, id, reason, nowIso);
    return plan.deactivate;
  }

  /** Claims, sends and records until nothing is due (tests and the CLI use it; no concurrency limit games). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await this.claim(this.#o.concurrency);
      if (batch.length === 0) return total;
      await this.record(await Promise.all(batch.map((p) => this.#send(p))));
      total += batch.length;
    }
  }

  /**
   * The background worker: keeps up to `concurrency` attempts in flight, claiming more as slots
   * free up, and writes results in batches (one transaction per batch, not per attempt). Woken by
   * EVENTS_CHANNEL right after a commit that queued deliveries; polls every second otherwise
   * (other processes' events, retries coming due).
   */
  worker(name = 'webhook-delivery', pollMs = 1000): BackgroundWorker {
    let saturated = false;
    const poller = pollingWorker({
      name,
      channels: [EVENTS_CHANNEL],
      intervalMs: pollMs,
      logger: this.#o.logger,
      tick: async () => {
        const batch = await this.claim(this.#o.concurrency - this.#inFlight, this.#busy);
        for (const prepared of batch) {
          const tenant = prepared.delivery.tenant_id;
          this.#inFlight++;
          this.#busy.set(tenant, (this.#busy.get(tenant) ?? 0) + 1);
          const release = () => {
            this.#inFlight--;
            const left = this.#busy.get(tenant)! - 1;
            if (left === 0) this.#busy.delete(tenant);
            else this.#busy.set(tenant, left);
          };
          const send = this.#send(prepared).then(
            (result) => {
              release();
              this.#pending.push(result);
              this.#scheduleFlush(() => {
                if (saturated) poller.wake();
              });
            },
            (err: unknown) => {
              release();
              this.#o.logger.error({ err, deliveryId: prepared.delivery.id }, 'webhook send failed');
            },
          );
          this.#sends.add(send);
          void send.finally(() => this.#sends.delete(send));
        }
        // Out of slots (all, or a tenant's share): the next claim comes when attempts finish.
        saturated =
          this.#inFlight >= this.#o.concurrency || [...this.#busy.values()].some((n) => n >= this.#tenantSlots);
        return batch.length > 0 && !saturated;
      },
    });
    return {
      name,
      channels: poller.channels,
      start: () => poller.start(),
      wake: () => poller.wake(),
      stop: async () => {
        await poller.stop();
        await Promise.all([...this.#sends]);
        await this.#flushing;
        await this.#flushNow();
      },
    };
  }

  #scheduleFlush(after: () => void): void {
    if (this.#flushing) return;
    this.#flushing = (async () => {
      // Let attempts finishing meanwhile join the batch: one commit (an fsync on SQLite) per
      // batch rather than per attempt keeps the event loop free for the responses themselves.
      await new Promise((r) => setTimeout(r, this.#pending.length >= FLUSH_BATCH ? 0 : FLUSH_WINDOW_MS));
      while (this.#pending.length > 0) {
        await this.#flushNow();
        after();
      }
    })().finally(() => {
      this.#flushing = null;
    });
  }

  async #flushNow(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    try {
      await this.record(batch);
    } catch (err) {
      // The rows stay claimed until their lease ends and are then attempted again.
      this.#o.logger.error({ err, count: batch.length }, 'recording webhook attempts failed');
    }
  }
}
