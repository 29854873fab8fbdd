import { sql } from 'kysely';
import type { Logger } from 'pino';
import { DAY_MS, type Clock } from '../lib/clock.js';
import type { Database } from './connect.js';
import { TenantScope } from './tenant-scope.js';

/** What a daily cap counts (the `kind` of `tenant_daily_counts`). */
export type DailyCapKind = 'sessions' | 'form_submissions';

export type DailyCapAnswer = { ok: true } | { ok: false; retryAfterSeconds: number };

/** One tenant's places in this process for one UTC day. */
interface Allowance {
  day: string;
  left: number;
  /** The day's cap is reached for every process: no more places until the next day. */
  spent: boolean;
  refill: Promise<void> | null;
}

/** The most places a process takes at once: a cap's thousandth, between 1 and 100. */
export const blockOf = (limit: number) => Math.max(1, Math.min(100, Math.floor(limit / 1000)));

const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * A per-tenant cap per UTC day on what visitors create (new sessions, form submissions), shared by
 * every process of the service (docs/pages-runtime.md#daily-caps).
 *
 * The day's row (`tenant_daily_counts`) counts the places handed out. A process takes them in
 * blocks (`blockOf`) with one conditional upsert, so processes racing for the last places never
 * hand out more than the cap, and then spends them from memory: a visit start costs a database
 * statement once per block, not once per visit. A block a process has not spent when it exits
 * stays counted, so the cap can only turn stricter (by at most a block per process and day), never
 * looser. Near the cap, places go one by one.
 */
export class DailyCap {
  readonly #allowances = new Map<string, Allowance>();
  readonly #block: number;

  /** `limit`: places per tenant and UTC day; 0: no cap (nothing is counted). */
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly kind: DailyCapKind,
    readonly limit: number,
  ) {
    this.#block = blockOf(limit);
  }

  /** One place for the tenant today, or how long until the next day's places. */
  async take(tenantId: string): Promise<DailyCapAnswer> {
    if (this.limit <= 0) return { ok: true };
    const now = this.clock.now();
    const day = utcDay(now);
    let allowance = this.#allowances.get(tenantId);
    if (allowance === undefined || allowance.day !== day) {
      allowance = { day, left: 0, spent: false, refill: null };
      this.#allowances.set(tenantId, allowance);
    }
    while (allowance.left <= 0 && !allowance.spent) {
      // Requests that find the allowance empty together wait for one refill, not one each.
      const current = allowance;
      current.refill ??= this.#refill(tenantId, current).finally(() => (current.refill = null));
      await current.refill;
    }
    if (allowance.spent && allowance.left <= 0) {
      const nextDay = Date.parse(`${day}T00:00:00.000Z`) + DAY_MS;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((nextDay - now.getTime()) / 1000)) };
    }
    allowance.left -= 1;
    return { ok: true };
  }

  async #refill(tenantId: string, allowance: Allowance): Promise<void> {
    for (const places of this.#block > 1 ? [this.#block, 1] : [1]) {
      if (await this.#grant(tenantId, allowance.day, places)) {
        allowance.left += places;
        return;
      }
    }
    allowance.spent = true;
    this.logger.warn(
      { tenantId, kind: this.kind, day: allowance.day, limit: this.limit },
      'a tenant reached its daily cap: nothing more of this kind is recorded until the next UTC day',
    );
  }

  /** Takes `places` from the day's row while they fit under the cap; false when they do not. */
  async #grant(tenantId: string, day: string, places: number): Promise<boolean> {
    const updatedAt = this.clock.now().toISOString();
    const granted = await TenantScope.of(this.database, tenantId)
      .insertInto('tenant_daily_counts', { day, kind: this.kind, granted: places, updated_at: updatedAt })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'day', 'kind'])
          .doUpdateSet({ granted: sql<number>`tenant_daily_counts.granted + ${places}`, updated_at: updatedAt })
          .where(sql<boolean>`tenant_daily_counts.granted + ${places} <= ${this.limit}`),
      )
      .returning('day')
      .executeTakeFirst();
    // The day's first row needs no check: a block is never more than the cap (blockOf).
    return granted !== undefined;
  }
}
