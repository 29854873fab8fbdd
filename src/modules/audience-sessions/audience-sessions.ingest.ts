import type { Logger } from 'pino';
import type { Database } from '../../db/connect.js';
import { ingestEventsPerTransaction } from '../../db/dialect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { ingestBatchEvents, ingestFlushSeconds } from '../../metrics/metrics.js';
import type { SessionRow } from './audience-sessions.collect.js';
import { insertSessions, recordActivities, type ActivityTotals } from './audience-sessions.queries.js';

/** Events are written at most this long after they were acknowledged (the durability window). */
const INGEST_FLUSH_MS = 25;
/** …or as soon as this many are waiting. */
const MAX_BATCH = 1_000;
/** Events waiting (a database that is down): beyond this, new events are refused (503) rather than kept. */
const MAX_QUEUED = 100_000;
/**
 * An event for a session that no row matched yet is tried again for this long after the session
 * started: its start may still be waiting in another process's batch (several processes).
 */
const UNSTARTED_GRACE_MS = 5_000;

interface PendingStart {
  tenantId: string;
  row: SessionRow;
}

interface PendingUpdate {
  tenantId: string;
  totals: ActivityTotals;
  startedAtMs: number;
}

interface FlushReport {
  events: number;
  ms: number;
  failed: boolean;
}

/**
 * Visit events written in batches (docs/pages-runtime.md#durability-of-visit-events): the request
 * is validated and answered at once; what it asks to write waits here at most `INGEST_FLUSH_MS`
 * (or until `MAX_BATCH` events wait), and then the new sessions are written with their hourly
 * counts (multi-row insert and upsert, insertSessions), then the other events (multi-row updates
 * per tenant, recordActivities): in one transaction on PostgreSQL, in transactions of at most
 * `ingestEventsPerTransaction` events on SQLite (each holds the event loop until it commits).
 * Events of one session within a batch are merged (totals only grow, so the merge is the larger of
 * each), so the rows and the rollups are exactly what one write per event would have made. A failed
 * transaction keeps its events (and the flush's later ones) for the next flush; `stop` writes
 * everything acknowledged before the process exits. A hard crash loses at most the events of one
 * flush window; a rollup is never half-written (it commits with its sessions).
 */
export class SessionIngest {
  /** Every ingest not stopped yet (tests and the bench wait for them with `flushAll`). */
  static readonly #live = new Set<SessionIngest>();

  /** Writes what every ingest of this process holds now (tests: what was acknowledged is readable). */
  static async flushAll(): Promise<void> {
    for (const ingest of SessionIngest.#live) {
      while (ingest.queued > 0 || ingest.#flushing !== null) {
        await ingest.#flushing;
        await ingest.flush();
      }
    }
  }

  #starts: PendingStart[] = [];
  #updates = new Map<string, PendingUpdate>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> | null = null;

  constructor(
    private readonly database: Database,
    private readonly logger?: Logger,
    private readonly onFlush?: (report: FlushReport) => void,
  ) {
    SessionIngest.#live.add(this);
  }

  /** Events waiting to be written. */
  get queued(): number {
    return this.#starts.length + this.#updates.size;
  }

  /** Whether another event may be acknowledged now (false while a database outage fills the queue). */
  get accepting(): boolean {
    return this.queued < MAX_QUEUED;
  }

  start(tenantId: string, row: SessionRow): void {
    this.#starts.push({ tenantId, row });
    this.#schedule();
  }

  update(tenantId: string, totals: ActivityTotals, startedAtMs: number): void {
    const key = `${tenantId} ${totals.sessionId}`;
    const pending = this.#updates.get(key);
    this.#updates.set(key, pending === undefined ? { tenantId, totals, startedAtMs } : merged(pending, totals));
    this.#schedule();
  }

  #schedule(): void {
    if (this.queued >= MAX_BATCH) {
      void this.flush();
      return;
    }
    if (this.#timer !== null || this.#flushing !== null) return;
    this.#timer = setTimeout(() => void this.flush(), INGEST_FLUSH_MS);
  }

  /** Writes what waits now (after the flush in progress, if any). */
  flush(): Promise<void> {
    if (this.#flushing !== null) return this.#flushing;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.queued === 0) return Promise.resolve();
    this.#flushing = this.#write().finally(() => {
      this.#flushing = null;
      if (this.queued > 0) this.#schedule();
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const starts = this.#starts;
    const updates = [...this.#updates.values()];
    this.#starts = [];
    this.#updates = new Map();
    const began = performance.now();
    const perTransaction = ingestEventsPerTransaction(this.database.engine);
    const unmatched: PendingUpdate[] = [];
    // Starts first: an update of this flush may be for a session it starts.
    let s = 0;
    let u = 0;
    while (s < starts.length || u < updates.length) {
      const someStarts = starts.slice(s, s + perTransaction);
      const someUpdates = updates.slice(u, u + perTransaction - someStarts.length);
      const transactionBegan = performance.now();
      const last = s + someStarts.length === starts.length && u + someUpdates.length === updates.length;
      try {
        unmatched.push(...(await this.#transaction(someStarts, someUpdates, last)));
      } catch (err) {
        // Kept for the next flush (in front of what arrived meanwhile); what committed is written.
        const kept = starts.length - s + updates.length - u;
        this.logger?.warn({ err, events: kept }, 'writing visit events failed; retrying');
        this.#starts = [...starts.slice(s), ...this.#starts];
        for (const update of updates.slice(u)) this.#requeue(update);
        this.#retryUnstarted(unmatched);
        ingestFlushSeconds.observe({ outcome: 'failed' }, (performance.now() - transactionBegan) / 1000);
        this.onFlush?.({ events: kept, ms: performance.now() - began, failed: true });
        await new Promise((r) => setTimeout(r, INGEST_FLUSH_MS * 4));
        return;
      }
      ingestFlushSeconds.observe({ outcome: 'written' }, (performance.now() - transactionBegan) / 1000);
      s += someStarts.length;
      u += someUpdates.length;
    }
    ingestBatchEvents.observe(starts.length + updates.length);
    this.onFlush?.({ events: starts.length + updates.length, ms: performance.now() - began, failed: false });
    this.#retryUnstarted(unmatched);
  }

  /** A session whose start is still in another process's batch: once more, while it is young. */
  #retryUnstarted(unmatched: readonly PendingUpdate[]): void {
    const now = Date.now();
    for (const update of unmatched) if (now - update.startedAtMs < UNSTARTED_GRACE_MS) this.#requeue(update);
  }

  /**
   * One transaction: the sessions of `starts` with their hourly counts, then the events of
   * `updates`; the events no session matched are returned. Only the flush's last transaction waits
   * for the disk (on SQLite, an fsync each would cost a third of a millisecond of the event loop):
   * the flush as a whole is durable when it ends, as the durability rule says, and each of its
   * transactions survives the process dying as soon as it committed.
   */
  #transaction(
    starts: readonly PendingStart[],
    updates: readonly PendingUpdate[],
    lastOfFlush: boolean,
  ): Promise<PendingUpdate[]> {
    return TenantScope.acrossTenants(
      this.database,
      async (_trx, scopeOf) => {
        for (const [tenantId, rows] of byTenant(starts, (start) => start.tenantId)) {
          await insertSessions(
            scopeOf(tenantId),
            rows.map((start) => start.row),
          );
        }
        const missed: PendingUpdate[] = [];
        for (const [tenantId, pending] of byTenant(updates, (update) => update.tenantId)) {
          const matched = new Set(
            await recordActivities(
              scopeOf(tenantId),
              pending.map((update) => update.totals),
            ),
          );
          for (const update of pending) if (!matched.has(update.totals.sessionId)) missed.push(update);
        }
        return missed;
      },
      { syncOnCommit: lastOfFlush },
    );
  }

  #requeue(update: PendingUpdate): void {
    const key = `${update.tenantId} ${update.totals.sessionId}`;
    const pending = this.#updates.get(key);
    this.#updates.set(key, pending === undefined ? update : merged(update, pending.totals));
  }

  /** Writes everything acknowledged (shutdown). */
  async stop(): Promise<void> {
    SessionIngest.#live.delete(this);
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    for (let attempt = 0; attempt < 20 && (this.queued > 0 || this.#flushing !== null); attempt++) {
      await this.#flushing;
      await this.flush();
    }
  }
}

/** Two events of one session as one: the larger of each total, the earliest "ended before" check. */
function merged(pending: PendingUpdate, next: ActivityTotals): PendingUpdate {
  const a = pending.totals;
  return {
    ...pending,
    totals: {
      ...a,
      engaged: Math.max(a.engaged, next.engaged),
      scroll: Math.max(a.scroll, next.scroll),
      clicks: Math.max(a.clicks, next.clicks),
      conversion: a.conversion || next.conversion,
      nowMs: Math.max(a.nowMs, next.nowMs),
      endedBeforeMs: Math.min(a.endedBeforeMs, next.endedBeforeMs),
    },
  };
}

function byTenant<T>(items: readonly T[], tenantOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const tenantId = tenantOf(item);
    const group = groups.get(tenantId);
    if (group === undefined) groups.set(tenantId, [item]);
    else group.push(item);
  }
  return groups;
}
