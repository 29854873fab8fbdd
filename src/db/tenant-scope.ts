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
import type { Engine } from './connect.js';
import { lockKey, runTransaction, searchSource } from './dialect.js';
import { withSavepoint } from './savepoint.js';
import type { DB, TenantTable } from './schema.js';

type WithoutTenant<T extends TenantTable> = Omit<Insertable<DB[T]>, 'tenant_id'>;

/**
 * The only way request-handling code reaches tenant-owned tables. Every statement built through
 * a scope is filtered by (or stamped with) the tenant of the API key, so a query module cannot
 * forget it: a module that needs another tenant's rows would have to ask for the raw database,
 * which only operator code (CLI, workers) holds.
 */
export class TenantScope {
  readonly #db: Kysely<DB>;

  constructor(
    db: Kysely<DB>,
    readonly engine: Engine,
    readonly tenantId: string,
    readonly inTransaction = false,
  ) {
    this.#db = db;
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
   * and the transaction goes on (the error is rethrown for the caller to judge).
   */
  savepoint<R>(name: string, work: (scope: TenantScope) => Promise<R>): Promise<R> {
    if (!this.inTransaction) throw new Error('a savepoint needs a transaction');
    return withSavepoint(this.#db, name, () => work(this));
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
   * isolated in a savepoint and resolves only once its batch is durable.
   */
  async transaction<R>(work: (scope: TenantScope) => Promise<R>): Promise<R> {
    if (this.inTransaction) return work(this);
    return runTransaction(this.engine, this.#db, (trx) => work(new TenantScope(trx, this.engine, this.tenantId, true)));
  }
}
