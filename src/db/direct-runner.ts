/**
 * A way to run a compiled statement without Kysely's executor, which a hot statement outside a
 * transaction does not need: on SQLite the executor queues every query of the single connection
 * behind a mutex and several promise turns, on PostgreSQL its connection provider showed as
 * 6–10 µs of a 180 µs primary-key read (docs/performance.md, fourth and fifth passes).
 *
 * `connect.ts` registers one for the root Kysely instance of each engine (SqliteReaderRunner,
 * PoolRunner); a transaction's Kysely instance is another object and has none, so a statement
 * inside a transaction always runs on the transaction's connection.
 */
export interface DirectRunner {
  /** The statement's rows, or undefined when this statement must go through Kysely instead. */
  run(text: string, parameters: unknown[]): Promise<unknown[]> | undefined;
}

const runners = new WeakMap<object, DirectRunner>();

export function registerDirectRunner(db: object, runner: DirectRunner): void {
  runners.set(db, runner);
}

/** The direct runner of `db`, if `db` is a root instance that has one. */
export function directRunner(db: object): DirectRunner | undefined {
  return runners.get(db);
}
