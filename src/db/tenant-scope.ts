import {
  sql,
  type DeleteQueryBuilder,
  type DeleteResult,
  type Insertable,
  type InsertQueryBuilder,
  type InsertResult,
  type Kysely,
  type SelectQueryBuilder,
  type SqlBool,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import type { Database } from './connect.js';
import { lockKey, runTransaction, searchSource } from './dialect.js';
import type { RunOptions } from './group-commit.js';
import { withSavepoint } from './savepoint.js';
import type { DB, TenantTable } from './schema.js';
import type { WakeupSink } from './wakeup-sink.js';

type WithoutTenant<T extends TenantTable> = Omit<Insertable<DB[T]>, 'tenant_id'>;

/** What a scope needs of its database: the connection, the engine, where committed wake-ups go. */
type ScopeSource = Pick<Database, 'kysely' | 'engine' | 'wakeups'>;

/**
 * The only way request-handling code reaches tenant-owned tables. Every statement built through
 * a scope is filtered by (or stamped with) the tenant of the API key, so a query module cannot
 * forget it: a module that needs another tenant's rows would have to ask for the raw database,
 * which only operator code (CLI, workers) holds.
 *
 * A scope is made by {@link TenantScope.of} (a known tenant) or handed out by `transaction` and
 * `savepoint`; the constructor is private, so every scope carries its database's wake-up sink.
 */
export class TenantScope {
  readonly #db: Kysely<DB>;
  readonly #wakeups: WakeupSink;
  /** In a transaction: the channels to wake once it has committed. Null: not in a transaction. */
  readonly #afterCommit: Set<string> | null;

  private constructor(
    db: Kysely<DB>,
    readonly engine: Database['engine'],
    readonly tenantId: string,
    wakeups: WakeupSink,
    afterCommit: Set<string> | null,
  ) {
    this.#db = db;
    this.#wakeups = wakeups;
    this.#afterCommit = afterCommit;
  }

  /** The scope of a tenant the caller has already established (an API key, a host, a job's row). */
  static of(database: ScopeSource, tenantId: string): TenantScope {
    return new TenantScope(database.kysely, database.engine, tenantId, database.wakeups, null);
  }

  /**
   * One transaction over every tenant's rows, for worker plumbing that picks work across tenants
   * (workers/leased-jobs.ts): `work` gets the raw transaction and `scopeOf(tenantId)`, the scope of
   * each tenant it then touches. Their wake-ups are sent once the transaction has committed.
   */
  static acrossTenants<R>(
    database: ScopeSource,
    work: (trx: Kysely<DB>, scopeOf: (tenantId: string) => TenantScope) => Promise<R>,
    options?: RunOptions,
  ): Promise<R> {
    return TenantScope.#committed(
      database,
      (db, afterCommit) =>
        work(db, (tenantId) => new TenantScope(db, database.engine, tenantId, database.wakeups, afterCommit)),
      options,
    );
  }

  /**
   * Runs `work` in one transaction and, once it has committed, sends the channels it named. On
   * SQLite the transaction is one of a group commit (group-commit.ts): it resolves only once its
   * batch is durable, and rejects, sending nothing, when it (or its batch) was rolled back.
   */
  static async #committed<R>(
    database: ScopeSource,
    work: (db: Kysely<DB>, afterCommit: Set<string>) => Promise<R>,
    options?: RunOptions,
  ): Promise<R> {
    const afterCommit = new Set<string>();
    const value = await runTransaction(database.engine, database.kysely, (db) => work(db, afterCommit), options);
    for (const channel of afterCommit) database.wakeups.send(channel);
    return value;
  }

  get inTransaction(): boolean {
    return this.#afterCommit !== null;
  }

  /**
   * Wakes the workers listening on `channel` once the current transaction has committed (never if
   * it rolls back). Register it where the work is queued, in the same transaction. Outside a
   * transaction every statement has committed by the time it returns: the wake-up goes at once.
   */
  afterCommit(channel: string): void {
    if (this.#afterCommit === null) this.#wakeups.send(channel);
    else this.#afterCommit.add(channel);
  }

  /**
   * The database without the tenant filter: the escape hatch, kept explicit so every use can be
   * found and reviewed. For plumbing (prepared queries) and the few helpers that serve all tenants
   * (the file store, preview making); never for reading or writing a tenant's rows.
   */
  unscopedDb(): Kysely<DB> {
    return this.#db;
  }

  #owned(table: TenantTable) {
    return sql<SqlBool>`${sql.ref(`${table}.tenant_id`)} = ${this.tenantId}`;
  }

  selectFrom<T extends TenantTable>(table: T): SelectQueryBuilder<DB, T, {}> {
    return (this.#db.selectFrom(table) as unknown as SelectQueryBuilder<DB, TenantTable, {}>).where(
      this.#owned(table),
    ) as unknown as SelectQueryBuilder<DB, T, {}>;
  }

  /**
   * Like `selectFrom`, for a query filtered with `substringMatch`: lets the database drive the
   * query from its search index (see `searchSource` in dialect.ts).
   */
  searchFrom<T extends TenantTable>(table: T, query: string): SelectQueryBuilder<DB, T, {}> {
    return (
      this.#db.selectFrom(searchSource(this.engine, table, query) as T) as unknown as SelectQueryBuilder<
        DB,
        TenantTable,
        {}
      >
    ).where(this.#owned(table)) as unknown as SelectQueryBuilder<DB, T, {}>;
  }

  updateTable<T extends TenantTable>(table: T): UpdateQueryBuilder<DB, T, T, UpdateResult> {
    return (
      this.#db.updateTable(table) as unknown as UpdateQueryBuilder<DB, TenantTable, TenantTable, UpdateResult>
    ).where(this.#owned(table)) as unknown as UpdateQueryBuilder<DB, T, T, UpdateResult>;
  }

  deleteFrom<T extends TenantTable>(table: T): DeleteQueryBuilder<DB, T, DeleteResult> {
    return (this.#db.deleteFrom(table) as unknown as DeleteQueryBuilder<DB, TenantTable, DeleteResult>).where(
      this.#owned(table),
    ) as unknown as DeleteQueryBuilder<DB, T, DeleteResult>;
  }

  insertInto<T extends TenantTable>(
    table: T,
    values: WithoutTenant<T> | ReadonlyArray<WithoutTenant<T>>,
  ): InsertQueryBuilder<DB, T, InsertResult> {
    const stamp = (v: WithoutTenant<T>) => ({ ...v, tenant_id: this.tenantId }) as unknown as Insertable<DB[T]>;
    const rows = Array.isArray(values) ? (values as WithoutTenant<T>[]).map(stamp) : stamp(values as WithoutTenant<T>);
    return this.#db.insertInto(table).values(rows as never);
  }

  /**
   * Runs `work` in a savepoint of the current transaction: if it throws, what it wrote is undone
   * (its wake-ups too) and the transaction goes on (the error is rethrown for the caller to judge).
   */
  async savepoint<R>(name: string, work: (scope: TenantScope) => Promise<R>): Promise<R> {
    if (this.#afterCommit === null) throw new Error('a savepoint needs a transaction');
    const inner = new TenantScope(this.#db, this.engine, this.tenantId, this.#wakeups, new Set());
    const value = await withSavepoint(this.#db, name, () => work(inner));
    for (const channel of inner.#afterCommit!) this.#afterCommit.add(channel);
    return value;
  }

  /**
   * Serializes the transactions of this tenant that take the same `key` until they end (e.g.
   * "topics", so that two first topics cannot both become the default). See dialect.lockKey.
   */
  async lock(key: string): Promise<void> {
    await lockKey(this.engine, this.#db, `${key}:${this.tenantId}`);
  }

  /**
   * Runs `work` in one transaction (joining the current one if there is one). On SQLite it
   * begins with `begin immediate`, so writers queue for the lock instead of failing midway, and
   * concurrent transactions share one commit (group commit, see group-commit.ts): each is
   * isolated in a savepoint and resolves only once its batch is durable. What `work` registered
   * with `afterCommit` is sent after that, and only then.
   */
  async transaction<R>(work: (scope: TenantScope) => Promise<R>): Promise<R> {
    if (this.inTransaction) return work(this);
    const database = { kysely: this.#db, engine: this.engine, wakeups: this.#wakeups };
    return TenantScope.#committed(database, (db, afterCommit) =>
      work(new TenantScope(db, this.engine, this.tenantId, this.#wakeups, afterCommit)),
    );
  }
}
