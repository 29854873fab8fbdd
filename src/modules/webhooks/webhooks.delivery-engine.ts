import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import { SECOND_MS, type Clock } from '../../lib/clock.js';
import { webhookAttempts } from '../../metrics/metrics.js';
import type { SafeHttpClient } from '../../net/http-client.js';
import { EVENTS_CHANNEL } from '../../outbox/events.js';
import { FairClaim } from '../../workers/fair-claim.js';
import { slottedWorker } from '../../workers/slotted-worker.js';
import { TenantSlots } from '../../workers/tenant-slots.js';
import type { BackgroundWorker } from '../../workers/worker.js';
import {
  planRecording,
  type AttemptResult,
  type ClaimedDelivery,
  type RecordingPlan,
} from './webhooks.delivery-plan.js';
import type { SecretBox } from './webhooks.secret-box.js';
import { signedHeaders } from './webhooks.signing.js';

/** How long finished attempts wait for company before their results are written. */
const FLUSH_WINDOW_MS = 10;
const FLUSH_BATCH = 64;
/** Rows per statement when writing many at once. */
const CHUNK = 500;
/** How often the worker looks for deliveries when nothing woke it (retries coming due, other processes' events). */
const DELIVERY_POLL_MS = SECOND_MS;
/** The most opened signing secrets kept (see #opened). */
const OPENED_SECRETS_CACHED = 10_000;

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
  readonly #options: DeliveryEngineOptions;
  readonly #db: Kysely<DB>;
  readonly #random: () => number;
  readonly #fairClaim = new FairClaim<ClaimedDelivery>(
    { table: 'webhook_deliveries', key: 'id', statuses: ['pending'], due: 'next_attempt_at' },
    ['id', 'tenant_id', 'subscription_id', 'event_id', 'attempts'],
  );
  #pending: AttemptResult[] = [];
  #flushing: Promise<void> | null = null;
  /** Opened secrets by sealed value: opening is cheap, but not free at thousands per second. */
  #opened = new Map<string, string>();

  constructor(options: DeliveryEngineOptions) {
    this.#options = options;
    this.#db = options.database.kysely;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Claims up to `limit` due deliveries fairly across tenants (FairClaim: one tenant's backlog
   * never starves another's delivery; with the worker's `slots`, a slow receiver cannot take every
   * slot) and holds them for one lease, by moving their `next_attempt_at` one lease ahead.
   */
  async claim(limit: number, slots?: TenantSlots): Promise<Prepared[]> {
    if (limit <= 0) return [];
    const now = this.#options.clock.now();
    const claimed = await this.#db.transaction().execute(async (trx) => {
      const rows = await this.#fairClaim.take(trx, this.#options.database.engine, now.toISOString(), limit, slots);
      for (let i = 0; i < rows.length; i += CHUNK) {
        await trx
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: new Date(now.getTime() + this.#options.leaseMs).toISOString() })
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
      // An inactive subscription's deliveries are closed, never signed (a deleted one has no secret left).
      if (!s.active) continue;
      try {
        const list = [this.#open(s.secret, s.id)];
        if (s.previous_secret && s.previous_secret_expires_at && s.previous_secret_expires_at > now.toISOString())
          list.push(this.#open(s.previous_secret, s.id));
        secrets.set(s.id, list);
      } catch (err) {
        // Wrong or missing SECRET_KEY (or a secret sealed for another subscription): leave its deliveries claimed; they come due again
        // when the lease ends, and go out once a process with the right key takes them.
        this.#options.logger.error({ err, subscriptionId: s.id }, 'cannot open the signing secret of a subscription');
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
      if (this.#opened.size >= OPENED_SECRETS_CACHED) this.#opened.clear();
      plain = this.#options.secretBox().open(sealed, subscriptionId);
      this.#opened.set(cacheKey, plain);
    }
    return plain;
  }

  async #send(prepared: Prepared): Promise<AttemptResult> {
    const { delivery, failingSince, request } = prepared;
    const now = this.#options.clock.now();
    const attemptedAt = now.toISOString();
    if (request === null) return { delivery, failingSince, attemptedAt, outcome: null };
    // Signed now, not when claimed: `webhook-timestamp` is the time of this attempt.
    const headers = signedHeaders(request.eventId, now, request.body, request.secrets);
    const outcome = await this.#options.client.post(request.url, headers, request.body);
    return { delivery, failingSince, attemptedAt, outcome };
  }

  /** Writes the results of a batch of attempts in one transaction. */
  async record(results: AttemptResult[]): Promise<void> {
    if (results.length === 0) return;
    const now = this.#options.clock.now();
    const plan = planRecording(results, now, this.#random);
    const deactivated = await this.#db.transaction().execute((trx) => this.#apply(trx, plan, now.toISOString()));
    for (const [subscriptionId, reason] of deactivated)
      this.#options.logger.warn({ subscriptionId, reason }, 'webhook subscription deactivated');
    let delivered = 0;
    for (const ids of plan.succeededByStatus.values()) delivered += ids.length;
    const failed = plan.failed.filter((f) => f.changes.status === 'failed').length;
    webhookAttempts.inc({ outcome: 'delivered' }, delivered);
    webhookAttempts.inc({ outcome: 'retrying' }, plan.failed.length - failed);
    webhookAttempts.inc({ outcome: 'failed' }, failed);
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
    // A subscription's run of failures ends at a success and begins at its first failure.
    const failingSince = async (ids: string[], since: string | null) => {
      if (ids.length === 0) return;
      await trx
        .updateTable('webhook_subscriptions')
        .set({ failing_since: since })
        .where('id', 'in', ids)
        .where('failing_since', since === null ? 'is not' : 'is', null)
        .execute();
    };
    await failingSince(plan.healthy, null);
    await failingSince(plan.startFailing, nowIso);
    for (const [id, reason] of plan.deactivate) await this.#options.deactivate(trx, id, reason, nowIso);
    return plan.deactivate;
  }

  /** Claims, sends and records until nothing is due (tests and the CLI use it; no concurrency limit games). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await this.claim(this.#options.concurrency);
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
  worker(name = 'webhook-delivery', pollMs = DELIVERY_POLL_MS): BackgroundWorker {
    const slots = new TenantSlots(this.#options.concurrency);
    const worker = slottedWorker({
      name,
      channels: [EVENTS_CHANNEL],
      pollMs,
      logger: this.#options.logger,
      slots,
      claim: (limit) => this.claim(limit, slots),
      tenantOf: (prepared) => prepared.delivery.tenant_id,
      start: async (prepared) => {
        let result: AttemptResult;
        try {
          result = await this.#send(prepared);
        } catch (err) {
          this.#options.logger.error({ err, deliveryId: prepared.delivery.id }, 'webhook send failed');
          return;
        }
        this.#pending.push(result);
        // The next claim waits for the results to be recorded: one claim per batch, not per attempt.
        this.#scheduleFlush(() => worker.wakeIfSaturated());
      },
      wakeWhenFreed: false,
      onStop: async () => {
        await this.#flushing;
        await this.#flushNow();
      },
    });
    return worker;
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
      this.#options.logger.error({ err, count: batch.length }, 'recording webhook attempts failed');
    }
  }
}
