import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type SqlBool, type Updateable } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/connect.js';
import { forUpdate, lockKey } from '../db/dialect.js';
import type { DB, TenantTable } from '../db/schema.js';
import { TenantScope } from '../db/tenant-scope.js';
import { HOUR_MS, MINUTE_MS, SECOND_MS, type Clock } from '../lib/clock.js';
import { jobRuns, observeJobQueue } from '../metrics/metrics.js';
import { FairClaim } from './fair-claim.js';
import { slottedWorker } from './slotted-worker.js';
import { TenantSlots } from './tenant-slots.js';
import type { BackgroundWorker } from './worker.js';

/**
 * The one runner of leased background jobs (docs/architecture.md, Background work). A job is a
 * row of its kind's table, which is its own queue entry:
 *
 * - **claim**: due rows are taken fairly across tenants (FairClaim) in one short transaction; each
 *   gets a lease (a token, an expiry in `available_at`) and one more attempt, counted now so that
 *   a run lost to a crash counts too. A job still `running` whose lease ran out on its last
 *   attempt is given up there, with its kind's final failure (and event).
 * - **work** runs outside any transaction and returns done / retry / fail.
 * - **finish**, in a transaction of the job's tenant, only while the lease is still the worker's:
 *   `complete`, or a retry on RETRY_DELAYS_MS (or after the `afterMs` the work asked for), or `fail`.
 *   A worker that only was slow finds its lease taken over and finishes nothing.
 *
 * The runner builds every scope itself (TenantScope.of / acrossTenants), so what a kind's
 * functions register with `afterCommit` is sent once their transaction has committed.
 */

/**
 * The one retry schedule of leased jobs: the wait before run n + 1 after run n failed (the last
 * entry repeats for kinds with more attempts). Short first, for a blip (a restart, a dropped
 * connection); then about five times longer each time, so that a few attempts ride out an outage
 * of half an hour without hammering a provider that is down. No jitter: a process runs at most
 * `concurrency` jobs at once, so retries that come due together go a few at a time anyway.
 */
export const RETRY_DELAYS_MS = [10 * SECOND_MS, MINUTE_MS, 5 * MINUTE_MS, 30 * MINUTE_MS] as const;

/** The longest wait a `retry(…, { afterMs })` is granted unless the kind says otherwise. */
const DEFAULT_MAX_RETRY_AFTER_MS = HOUR_MS;

export function retryDelayMs(attemptsMade: number): number {
  return RETRY_DELAYS_MS[Math.min(Math.max(attemptsMade, 1), RETRY_DELAYS_MS.length) - 1]!;
}

/** What one run of a job came to: see done(), retry() and fail(). */
export type WorkResult<Value, Failure> =
  | { kind: 'done'; value: Value }
  | { kind: 'retry'; failure: Failure; afterMs?: number; countsAsAttempt: boolean }
  | { kind: 'fail'; failure: Failure };

/** The run succeeded: `complete` records `value`. */
export function done<Value>(value: Value): WorkResult<Value, never> {
  return { kind: 'done', value };
}

/**
 * The run failed in a way that may pass: the job runs again on the retry schedule, or after
 * `afterMs` when the work knows better (a provider's `Retry-After`; never sooner than the
 * schedule while the attempt counts). `countsAsAttempt: false` (a 429, a budget to wait for) keeps
 * the attempt: the job waits without coming closer to failing. A counted failure on the last
 * attempt fails the job with `failure`.
 */
export function retry<Failure>(
  failure: Failure,
  options: { afterMs?: number; countsAsAttempt?: boolean } = {},
): WorkResult<never, Failure> {
  return { kind: 'retry', failure, afterMs: options.afterMs, countsAsAttempt: options.countsAsAttempt ?? true };
}

/** The run failed for good (a bad key, an input that can never work): no more attempts. */
export function fail<Failure>(failure: Failure): WorkResult<never, Failure> {
  return { kind: 'fail', failure };
}

/** The tables that can be a leased-job queue: tenant rows with these columns. */
export type LeasedJobTable = {
  [T in TenantTable]: 'status' | 'attempts' | 'lease_token' | 'available_at' extends keyof DB[T] ? T : never;
}[TenantTable];

/** What the runner reads of every job (the kind names the rest: `columns`). */
export interface LeasedRow {
  tenant_id: string;
  status: string;
  /** Runs so far, the current one included. */
  attempts: number;
  lease_token: string | null;
  /** While waiting: when the next run is due; while running: the end of the lease. */
  available_at: string | null;
}

export interface LeaseSettings {
  /** How long a claimed job is held before another worker may take it over (it is presumed dead). */
  leaseMs: number;
  /** Runs, including ones lost to crashes, before the job fails for good. */
  maxAttempts: number;
  /** Jobs one process runs at once; a tenant holds at most half of them (TenantSlots), or `perTenant`. */
  concurrency: number;
  /**
   * The most jobs one tenant runs at once in a process (default half of `concurrency`). All of
   * them when every job waits on the same shared resource (one provider): the claims still take
   * tenants round-robin for every slot that frees, so another tenant's job takes the next one.
   */
  perTenant?: number;
  /** How often the worker looks for due jobs when nothing woke it. */
  pollMs: number;
  /** The longest `afterMs` a retry is granted (default an hour). */
  maxRetryAfterMs?: number;
  /**
   * Jobs of the kind running at once across every process (a provider's concurrency limit); the
   * claims take turns to count them. Unset: each process's `concurrency` is the only bound.
   */
  maxRunning?: number;
}

/** A kind of job: its table, its settings and the three functions only it knows. */
export interface LeasedJobKind<T extends LeasedJobTable, Job extends LeasedRow, Value, Failure, Completion = void> {
  /** The worker's name, in logs. */
  name: string;
  /** Wakes the worker at once: register it with `afterCommit` where a job is queued. */
  channel: string;
  table: T;
  /** The table's key column. */
  key: keyof Job & string;
  /** The columns the kind's functions read of a job, besides LeasedRow's. */
  columns: readonly (keyof Job & string)[];
  /** The statuses of a job waiting for its (next) run, and of a job being run. */
  statuses: { waiting: readonly string[]; running: string };
  settings: LeaseSettings;
  /** One run, outside any transaction; reads what it needs through `scope`, the job's tenant. */
  work(job: Job, scope: TenantScope): Promise<WorkResult<Value, Failure>>;
  /** Records a successful run, moving the job out of `running`. */
  complete(tx: TenantScope, job: Job, value: Value): Promise<Completion>;
  /** Ends the job as failed for good (its final event). */
  fail(tx: TenantScope, job: Job, failure: Failure): Promise<void>;
  /** The failure of a job whose lease ran out on every attempt. */
  interrupted(job: Job): Failure;
  /** The columns a claim writes besides the lease (default: the running status). */
  onClaim?(job: Job, nowIso: string): Updateable<DB[T]>;
  /** The columns a retry writes besides the lease (default: the first waiting status). */
  onRetry?(job: Job, failure: Failure, nowIso: string): Updateable<DB[T]>;
  /**
   * Takes the locks that must come before the job's row when a run finishes (the kind's lock
   * order); false drops the result (the job is no longer wanted).
   */
  beforeFinish?(tx: TenantScope, job: Job): Promise<boolean>;
}

/** What became of one job (tests, logs). `lost`: the work threw; the job waits for its lease to end. */
export type JobStep<Completion> =
  | { key: string; outcome: 'completed'; completion: Completion }
  | { key: string; outcome: 'retried' | 'failed' | 'given up' | 'stale' | 'lost' };

export interface LeasedJobDeps {
  database: Database;
  clock: Clock;
  logger: Logger;
}

/** The runner of one kind of job over a database: its worker, and the worker's steps for tests. */
export class LeasedJobs<T extends LeasedJobTable, Job extends LeasedRow, Value, Failure, Completion = void> {
  readonly #kind: LeasedJobKind<T, Job, Value, Failure, Completion>;
  readonly #deps: LeasedJobDeps;
  readonly #fairClaim: FairClaim<Job>;

  constructor(kind: LeasedJobKind<T, Job, Value, Failure, Completion>, deps: LeasedJobDeps) {
    this.#kind = kind;
    this.#deps = deps;
    const { table, key, statuses } = kind;
    this.#fairClaim = new FairClaim(
      { table, key, statuses: [...statuses.waiting, statuses.running], due: 'available_at' },
      columnsOf(kind),
    );
  }

  /** The background worker: up to `concurrency` jobs in flight, woken by the kind's channel. */
  worker(): BackgroundWorker {
    const { name, channel, settings } = this.#kind;
    const slots = new TenantSlots(settings.concurrency, settings.perTenant);
    observeJobQueue(name, () => this.#queue());
    return slottedWorker({
      name,
      channels: [channel],
      pollMs: settings.pollMs,
      logger: this.#deps.logger,
      slots,
      claim: async (limit) => (await this.#claim(limit, slots)).leased,
      tenantOf: (job) => job.tenant_id,
      start: async (job) => {
        await this.#run(job);
      },
    });
  }

  /** Claims up to `limit` due jobs and runs them: what a tick of the worker does (tests). */
  async runDue(limit = this.#kind.settings.concurrency): Promise<JobStep<Completion>[]> {
    const { leased, steps } = await this.#claim(limit);
    return [...steps, ...(await Promise.all(leased.map((job) => this.#run(job))))];
  }

  /** Runs due jobs until none is left (tests). */
  async drain(): Promise<JobStep<Completion>[]> {
    const all: JobStep<Completion>[] = [];
    for (let steps = await this.runDue(); steps.length > 0; steps = await this.runDue()) all.push(...steps);
    return all;
  }

  /** Claims due jobs as the worker does, without running them (a worker that dies now: tests). */
  async claim(limit: number): Promise<Job[]> {
    return (await this.#claim(limit)).leased;
  }

  /** Records a run's result, if the lease is still the one `job` was claimed with. */
  finish(job: Job, result: WorkResult<Value, Failure>): Promise<JobStep<Completion>> {
    const { database, clock } = this.#deps;
    return TenantScope.of(database, job.tenant_id).transaction((tx) => finishJob(this.#kind, clock, tx, job, result));
  }

  async #claim(limit: number, slots?: TenantSlots): Promise<{ leased: Job[]; steps: JobStep<Completion>[] }> {
    const { database, clock, logger } = this.#deps;
    return TenantScope.acrossTenants(database, async (trx, scopeOf) => {
      const now = clock.now().toISOString();
      const rows = await this.#fairClaim.take(trx, database.engine, now, await this.#room(trx, limit, now), slots);
      const leased: Job[] = [];
      const steps: JobStep<Completion>[] = [];
      for (const row of rows) {
        const job = await leaseOrGiveUp(this.#kind, clock, scopeOf(row.tenant_id), row);
        if (job === 'given up') {
          steps.push({ key: keyOf(this.#kind, row), outcome: 'given up' });
          logger.warn({ worker: this.#kind.name, job: keyOf(this.#kind, row) }, 'job given up: every lease ran out');
        } else if (job !== null) leased.push(job);
      }
      return { leased, steps };
    });
  }

  /** How many of `limit` may start now: all of them, unless `maxRunning` caps the kind. */
  async #room(trx: Kysely<DB>, limit: number, nowIso: string): Promise<number> {
    const { settings, statuses, table } = this.#kind;
    if (settings.maxRunning === undefined) return limit;
    await lockKey(this.#deps.database.engine, trx, `leased-jobs:${table}`);
    const running = await this.#fairClaim.countNotDue(trx, statuses.running, nowIso);
    return Math.max(0, Math.min(limit, settings.maxRunning - running));
  }

  async #run(job: Job): Promise<JobStep<Completion>> {
    const { name } = this.#kind;
    const key = keyOf(this.#kind, job);
    try {
      const result = await this.#kind.work(job, TenantScope.of(this.#deps.database, job.tenant_id));
      const step = await this.finish(job, result);
      jobRuns.inc({ kind: name, outcome: step.outcome });
      if (step.outcome === 'retried' && result.kind === 'retry') {
        this.#deps.logger.warn({ worker: name, job: key, failure: result.failure }, 'job will be retried');
      }
      return step;
    } catch (err) {
      this.#deps.logger.error({ err, worker: name, job: key }, 'job run failed; it runs again when its lease ends');
      jobRuns.inc({ kind: name, outcome: 'lost' });
      return { key, outcome: 'lost' };
    }
  }

  /** The kind's queue, across tenants (metrics): waiting and running jobs, and how late the oldest due one is. */
  async #queue(): Promise<{ waiting: number; running: number; oldestDueSeconds: number }> {
    const { table, statuses } = this.#kind;
    const now = this.#deps.clock.now();
    const nowIso = now.toISOString();
    const waiting = sql.join(statuses.waiting.map((status) => sql.lit(status)));
    const { rows } = await sql<{ waiting: number | string; running: number | string; oldest_due: string | null }>`
      select
        count(case when status in (${waiting}) then 1 end) as waiting,
        count(case when status = ${statuses.running} then 1 end) as running,
        min(case when status in (${waiting}) and available_at <= ${nowIso} then available_at end) as oldest_due
      from ${sql.table(table)}
      where status in (${waiting}, ${statuses.running})`.execute(this.#deps.database.kysely);
    const row = rows[0];
    const oldest = row?.oldest_due ? Date.parse(row.oldest_due) : Number.NaN;
    return {
      waiting: Number(row?.waiting ?? 0),
      running: Number(row?.running ?? 0),
      oldestDueSeconds: Number.isNaN(oldest) ? 0 : Math.max(0, (now.getTime() - oldest) / 1000),
    };
  }
}

/**
 * Takes the lease of one job inside the caller's transaction (operator side, tests): null when it
 * is not due, or is given up now (its every lease ran out).
 */
export async function claimJobIn<T extends LeasedJobTable, Job extends LeasedRow>(
  kind: LeasedJobKind<T, Job, unknown, unknown, unknown>,
  clock: Clock,
  tx: TenantScope,
  key: string,
): Promise<Job | null> {
  const row = await readJob(kind, tx, key);
  if (row === undefined || row.available_at === null || row.available_at > clock.now().toISOString()) return null;
  const job = await leaseOrGiveUp(kind, clock, tx, row);
  return job === 'given up' ? null : job;
}

/**
 * Claims, runs and finishes one job inside the caller's transaction (operator side: the first
 * version of a new audience, demo data); only for work that is quick and local.
 */
export async function runJobNow<T extends LeasedJobTable, Job extends LeasedRow, Value, Failure, Completion>(
  kind: LeasedJobKind<T, Job, Value, Failure, Completion>,
  clock: Clock,
  tx: TenantScope,
  key: string,
): Promise<JobStep<Completion>> {
  const job = await claimJobIn(kind, clock, tx, key);
  if (job === null) throw new Error(`${kind.name}: job ${key} is not due`);
  return finishJob(kind, clock, tx, job, await kind.work(job, tx));
}

/**
 * A long run's heartbeat: writes `changes` (its progress) to the job's row and extends its lease
 * by the kind's `leaseMs`, only while the lease is still the one `job` was claimed with. False:
 * the lease was lost (the run was presumed dead and the job taken over): stop working, the result
 * would be stale anyway.
 */
export async function holdLease<T extends LeasedJobTable, Job extends LeasedRow>(
  kind: Pick<LeasedJobKind<T, Job, unknown, unknown, unknown>, 'table' | 'key' | 'settings'>,
  clock: Clock,
  scope: TenantScope,
  job: Job,
  changes: Updateable<DB[T]> = {},
): Promise<boolean> {
  const leaseEnd = new Date(clock.now().getTime() + kind.settings.leaseMs).toISOString();
  return scope.transaction((tx) => updateJob(kind, tx, job, { ...changes, available_at: leaseEnd }));
}

function keyOf<Job extends LeasedRow>(kind: { key: keyof Job & string }, job: Job): string {
  return String(job[kind.key]);
}

/** What the runner reads of a job: its key, LeasedRow's columns and the kind's. */
function columnsOf(kind: { key: string; columns: readonly string[] }): string[] {
  const leased: (keyof LeasedRow)[] = ['tenant_id', 'status', 'attempts', 'lease_token', 'available_at'];
  return [...new Set([kind.key, ...leased, ...kind.columns])];
}

/** Leases a due job (locked by the caller), or gives it up when its every lease ran out. */
async function leaseOrGiveUp<T extends LeasedJobTable, Job extends LeasedRow>(
  kind: LeasedJobKind<T, Job, unknown, unknown, unknown>,
  clock: Clock,
  tx: TenantScope,
  row: Job,
): Promise<Job | 'given up' | null> {
  const { statuses, settings } = kind;
  if (row.status === statuses.running && row.attempts >= settings.maxAttempts) {
    await kind.fail(tx, row, kind.interrupted(row));
    return 'given up';
  }
  if (row.status !== statuses.running && !statuses.waiting.includes(row.status)) return null;
  const now = clock.now();
  const lease = {
    status: statuses.running,
    attempts: row.attempts + 1,
    lease_token: randomUUID(),
    available_at: new Date(now.getTime() + settings.leaseMs).toISOString(),
  };
  const claimed = { ...kind.onClaim?.(row, now.toISOString()), ...lease };
  return (await updateJob(kind, tx, row, claimed)) ? { ...row, ...lease } : null;
}

/** Records a run's result in `tx`, if the lease is still the one `job` was claimed with. */
async function finishJob<T extends LeasedJobTable, Job extends LeasedRow, Value, Failure, Completion>(
  kind: LeasedJobKind<T, Job, Value, Failure, Completion>,
  clock: Clock,
  tx: TenantScope,
  job: Job,
  result: WorkResult<Value, Failure>,
): Promise<JobStep<Completion>> {
  const key = keyOf(kind, job);
  if (kind.beforeFinish && !(await kind.beforeFinish(tx, job))) return { key, outcome: 'stale' };
  const current = await readJob(kind, tx, key);
  if (current?.status !== kind.statuses.running || current.lease_token !== job.lease_token) {
    return { key, outcome: 'stale' };
  }
  if (result.kind === 'done')
    return { key, outcome: 'completed', completion: await kind.complete(tx, job, result.value) };
  if (result.kind === 'fail' || (result.countsAsAttempt && job.attempts >= kind.settings.maxAttempts)) {
    await kind.fail(tx, job, result.failure);
    return { key, outcome: 'failed' };
  }
  const now = clock.now();
  await updateJob(kind, tx, job, {
    ...(kind.onRetry?.(job, result.failure, now.toISOString()) ?? { status: kind.statuses.waiting[0] }),
    attempts: result.countsAsAttempt ? job.attempts : job.attempts - 1,
    lease_token: null,
    available_at: new Date(now.getTime() + retryWait(kind.settings, job.attempts, result)).toISOString(),
  });
  return { key, outcome: 'retried' };
}

/** How long a retried job waits: the schedule, or what the work asked (see retry()). */
function retryWait(
  settings: LeaseSettings,
  attemptsMade: number,
  result: { afterMs?: number; countsAsAttempt: boolean },
): number {
  const scheduled = retryDelayMs(attemptsMade);
  if (result.afterMs === undefined) return scheduled;
  const asked = Math.min(result.afterMs, settings.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS);
  return result.countsAsAttempt ? Math.max(scheduled, asked) : asked;
}

/** The job's row, locked (PostgreSQL) until the transaction ends. */
async function readJob<Job extends LeasedRow>(
  kind: { table: LeasedJobTable; key: keyof Job & string; columns: readonly string[] },
  tx: TenantScope,
  key: string,
): Promise<Job | undefined> {
  const query = tx
    .selectFrom(kind.table)
    .select(columnsOf(kind).map((c) => sql.ref(c).as(c)))
    .where(sql<SqlBool>`${sql.ref(kind.key)} = ${key}`);
  return (await forUpdate(tx.engine, query).executeTakeFirst()) as Job | undefined;
}

/** Changes the job only while it is as the runner last saw it (its status and lease token). */
async function updateJob<Job extends LeasedRow>(
  kind: { table: LeasedJobTable; key: keyof Job & string },
  tx: TenantScope,
  job: Job,
  changes: object,
): Promise<boolean> {
  const lease =
    job.lease_token === null ? sql<SqlBool>`lease_token is null` : sql<SqlBool>`lease_token = ${job.lease_token}`;
  const result = await tx
    .updateTable(kind.table)
    // The table is one of several: Kysely cannot type the columns they have in common.
    .set(changes as never)
    .where(sql<SqlBool>`${sql.ref(kind.key)} = ${keyOf(kind, job)}`)
    .where(sql<SqlBool>`status = ${job.status}`)
    .where(lease)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
