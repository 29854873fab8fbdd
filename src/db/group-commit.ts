import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { TransactionLostError, withSavepoint } from './savepoint.js';
import type { DB } from './schema.js';

type Work = (db: Kysely<DB>) => Promise<unknown>;

interface Job {
  work: Work;
  /** False for work whose writes may wait for the next sync (see `RunOptions.syncOnCommit`). */
  syncOnCommit: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface RunOptions {
  /**
   * True (the default): the transaction is acknowledged once its commit reached the disk
   * (synchronous=FULL: the WAL is fsynced). False, for writes whose callers accept losing the
   * last ones to a power loss (the visit-event ingest, which writes what it acknowledged earlier):
   * a batch of only such transactions commits with synchronous=NORMAL, so it is durable against
   * the process dying (the WAL is in the operating system's hands) and reaches the disk with the
   * next synced commit or checkpoint, without an fsync of its own. One synced transaction in a
   * batch makes the whole batch synced.
   */
  syncOnCommit?: boolean;
}

/**
 * Group commit for SQLite. A durable commit (synchronous=FULL) costs an fsync, and SQLite has one
 * writer at a time, so committing each request's transaction on its own caps writes at the
 * disk's fsync rate. Instead, the transactions that queue up while one batch runs become the
 * next batch: one `begin immediate … commit` around all of them, each inside its own SAVEPOINT.
 *
 * - A transaction that fails is rolled back to its savepoint: nothing it wrote persists, and the
 *   others in the batch are unaffected.
 * - Callers learn their outcome only after the batch's commit returned, so an acknowledged write
 *   is durable. If the batch as a whole fails (commit error, or the transaction was lost), every
 *   caller in it gets the error: none of them was committed.
 * - Transactions of one batch run one after the other on the one connection, exactly as they
 *   would without batching; later ones see what earlier ones wrote.
 *
 * Like any SQLite transaction here, work must use only the connection it is given (awaiting
 * another transaction from inside one would wait forever) and must not wait on anything slow
 * (network, image processing): the whole batch, and every other query, waits with it.
 */
export class SqliteGroupCommit {
  readonly #db: Kysely<DB>;
  readonly #maxBatch: number;
  #queue: Job[] = [];
  #draining = false;
  /** Batches committed so far (for tests and diagnostics). */
  batches = 0;

  constructor(db: Kysely<DB>, maxBatch = 256) {
    this.#db = db;
    this.#maxBatch = maxBatch;
  }

  run<R>(work: (db: Kysely<DB>) => Promise<R>, options: RunOptions = {}): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const syncOnCommit = options.syncOnCommit ?? true;
      this.#queue.push({ work, syncOnCommit, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#draining) {
        this.#draining = true;
        void this.#drain();
      }
    });
  }

  /**
   * Queries on better-sqlite3 complete synchronously, so a transaction never yields to the event
   * loop and the commit blocks it: without a pause, every batch would hold one transaction.
   * Waiting one event-loop turn before each batch lets every request that is ready (often all
   * that arrived during the previous commit) reach the queue first.
   */
  async #drain() {
    try {
      do {
        await nextTurn();
        await this.#commit(this.#queue.splice(0, this.#maxBatch));
      } while (this.#queue.length > 0);
    } finally {
      this.#draining = false;
    }
  }

  async #commit(batch: Job[]) {
    const outcomes: Outcome[] = [];
    // SQLite refuses to change the level inside a transaction: it is set around it.
    const deferSync = batch.every((job) => !job.syncOnCommit);
    try {
      await this.#db.connection().execute(async (conn) => {
        if (deferSync) await sql`pragma synchronous = NORMAL`.execute(conn);
        try {
          await sql`begin immediate`.execute(conn);
          try {
            for (const job of batch) {
              try {
                outcomes.push({ ok: true, value: await withSavepoint(conn, 'group_commit', () => job.work(conn)) });
              } catch (error) {
                // Without its transaction the batch cannot commit: every caller in it fails below.
                if (error instanceof TransactionLostError) throw error;
                outcomes.push({ ok: false, error });
              }
            }
            await sql`commit`.execute(conn);
          } catch (error) {
            await sql`rollback`.execute(conn).catch(() => {});
            throw error;
          }
        } finally {
          // Whatever happened, every later commit on this connection (batched or not) syncs again.
          if (deferSync) await sql`pragma synchronous = FULL`.execute(conn);
        }
      });
    } catch (error) {
      for (const job of batch) job.reject(error);
      return;
    }
    this.batches++;
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
  }
}

const committers = new WeakMap<Kysely<DB>, SqliteGroupCommit>();

/** The group committer of a SQLite database (one per Kysely instance, i.e. per connection). */
export function groupCommitFor(db: Kysely<DB>): SqliteGroupCommit {
  let committer = committers.get(db);
  if (committer === undefined) {
    committer = new SqliteGroupCommit(db);
    committers.set(db, committer);
  }
  return committer;
}
