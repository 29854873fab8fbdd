import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { DirectRunner } from './direct-runner.js';

/**
 * Wraps a better-sqlite3 connection for Kysely's SqliteDialect and makes SQLite answer like
 * PostgreSQL does: columns declared BOOLEAN come back as booleans and columns declared
 * JSON_TEXT come back parsed. It also caches prepared statements (Kysely prepares every query
 * anew, which costs more than running a primary-key read) and turns Kysely's `begin` into
 * `begin immediate`, so a writing transaction takes the write lock up front instead of failing
 * with SQLITE_BUSY halfway through when another process (the CLI, a second worker) writes too.
 */
export class SqliteAdapter implements SqliteDatabase {
  readonly #raw: BetterSqlite3.Database;
  readonly #cache = new Map<string, CachedStatement>();
  static readonly cacheSize = 1000;

  constructor(raw: BetterSqlite3.Database) {
    this.#raw = raw;
  }

  get raw(): BetterSqlite3.Database {
    return this.#raw;
  }

  prepare(sql: string): SqliteStatement {
    let cached = this.#cache.get(sql);
    if (cached === undefined) {
      const text = sql === 'begin' ? 'begin immediate' : sql;
      cached = new CachedStatement(this.#raw.prepare(text));
      if (this.#cache.size >= SqliteAdapter.cacheSize) this.#cache.clear();
      this.#cache.set(sql, cached);
    }
    return cached;
  }

  close(): void {
    this.#cache.clear();
    this.#raw.close();
  }
}

type Row = Record<string, unknown>;

/**
 * Runs reads outside any transaction on a second, read-only connection (registered for the writer's
 * Kysely instance by connect.ts; db/direct-runner.ts). Such a read must not run on the writer's
 * connection directly: a group commit's batch may be open there, and the read would see its
 * uncommitted rows. The reader sees exactly what is committed, so a read after an acknowledged
 * write still sees the write (WAL: each read starts at the latest commit). Writes go through Kysely.
 */
export class SqliteReaderRunner implements DirectRunner {
  constructor(readonly reader: SqliteAdapter) {}

  run(text: string, parameters: unknown[]): Promise<unknown[]> | undefined {
    const statement = this.reader.prepare(text);
    return statement.reader ? Promise.resolve(statement.all(parameters)) : undefined;
  }
}

class CachedStatement implements SqliteStatement {
  readonly reader: boolean;
  readonly #stmt: BetterSqlite3.Statement;
  readonly #toRow: ((values: unknown[]) => Row) | null;

  constructor(stmt: BetterSqlite3.Statement) {
    this.#stmt = stmt;
    this.reader = stmt.reader;
    // Rows come back as arrays and are built here: better-sqlite3 builds each row object key by
    // key through V8's C++ API, which costs more than reading the values (a 20-row page list:
    // 121 µs as objects, 69 µs as arrays; docs/performance.md, fifth pass).
    this.#toRow = stmt.reader ? rowBuilder(stmt.raw(true).columns()) : null;
  }

  all(parameters: ReadonlyArray<unknown>): unknown[] {
    const rows = this.#stmt.all(...bindable(parameters)) as unknown[];
    const toRow = this.#toRow;
    if (toRow !== null) for (let i = 0; i < rows.length; i++) rows[i] = toRow(rows[i] as unknown[]);
    return rows;
  }

  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return this.#stmt.run(...bindable(parameters));
  }

  *iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    const toRow = this.#toRow;
    for (const values of this.#stmt.iterate(...bindable(parameters)) as Iterable<unknown[]>) {
      yield toRow === null ? values : toRow(values);
    }
  }
}

const PLAIN = 0;
const BOOLEAN = 1;
const JSON_TEXT = 2;

/**
 * Builds a row object from a raw row, the way better-sqlite3 would (a later column of the same
 * name wins), with columns declared BOOLEAN as booleans and JSON_TEXT parsed.
 */
function rowBuilder(columns: BetterSqlite3.ColumnDefinition[]): (values: unknown[]) => Row {
  const names = columns.map((column) => column.name);
  const kinds = columns.map((column) => {
    const declared = column.type?.toUpperCase();
    return declared === 'BOOLEAN' ? BOOLEAN : declared === 'JSON_TEXT' ? JSON_TEXT : PLAIN;
  });
  return (values) => {
    const row: Row = {};
    for (let i = 0; i < names.length; i++) {
      const value = values[i];
      const kind = kinds[i];
      if (kind === PLAIN || value === null || value === undefined) row[names[i]!] = value;
      else if (kind === BOOLEAN) row[names[i]!] = value === 1 || value === 1n;
      else row[names[i]!] = typeof value === 'string' ? JSON.parse(value) : value;
    }
    return row;
  };
}

/** better-sqlite3 refuses booleans and Dates as parameters; store them the way PostgreSQL reads back. */
function bindable(parameters: ReadonlyArray<unknown>): unknown[] {
  const out = new Array<unknown>(parameters.length);
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    if (typeof value === 'boolean') out[i] = value ? 1 : 0;
    else if (value instanceof Date) out[i] = value.toISOString();
    else out[i] = value;
  }
  return out;
}
