import { CompiledQuery, type Compilable, type InferResult, type Kysely } from 'kysely';
import type { Engine } from './connect.js';
import { nameHotStatement } from './dialect.js';
import { directRunner } from './direct-runner.js';
import type { DB } from './schema.js';
import { TenantScope } from './tenant-scope.js';
import { WakeupSink } from './wakeup-sink.js';

const SENTINEL = '\u0000param:';
const TENANT = `${SENTINEL}tenantId`;
/** Distinct literal values a prepared query compiles statements for (e.g. limits 1..101). */
const MAX_VARIANTS = 256;
/** The scope a query is built through only compiles it, never runs it: nothing to wake. */
const COMPILING_ONLY = new WakeupSink();

type Placeholders<P> = { readonly [K in keyof P]: P[K] };
type Slot = string | { constant: unknown };
interface Compiled {
  sql: string;
  slots: Slot[];
}

/**
 * A query on a hot path, built with Kysely once per engine and then executed with new values.
 * Building and compiling a Kysely query costs more than running a primary-key read on SQLite, so
 * the queries every request of a hot endpoint makes are compiled once: `build` receives a
 * TenantScope and placeholder values, and the compiled SQL is reused with the real tenant and
 * values substituted position by position. Tenant scoping is unchanged: the query is still built
 * through a TenantScope. `build` must use every value only as a query parameter (no branching on
 * values; make one prepared query per shape) — except the values named in `literals`, which
 * `build` receives for real and writes into the SQL with `sql.lit` (one statement per distinct
 * value, at most 256): SQLite plans `limit 20` better than `limit ?` (docs/performance.md).
 *
 * On PostgreSQL the statement is also named (db/pg-adapter.ts), so each connection parses and
 * plans it once instead of on every execution.
 */
export function preparedQuery<P extends Record<string, unknown>, Q extends Compilable<unknown>>(
  build: (scope: TenantScope, values: Placeholders<P>) => Q,
  options: { literals?: readonly (keyof P & string)[] } = {},
) {
  const literals = options.literals ?? [];
  const compiled = new Map<string, Compiled>();

  function compile(db: Kysely<DB>, engine: Engine, values: P, variant: string): Compiled {
    const placeholders = new Proxy({} as Placeholders<P>, {
      get: (_t, key) =>
        literals.includes(key as keyof P & string) ? values[key as keyof P] : `${SENTINEL}${String(key)}`,
    });
    const entry = compileOnce(
      build(TenantScope.of({ kysely: db, engine, wakeups: COMPILING_ONLY }, TENANT), placeholders),
      engine,
    );
    if (compiled.size < MAX_VARIANTS) compiled.set(variant, entry);
    return entry;
  }

  return async function execute(scope: TenantScope, values: P): Promise<InferResult<Q>> {
    let variant: string = scope.engine;
    for (let i = 0; i < literals.length; i++) variant += `\u0001${String(values[literals[i]!])}`;
    const entry = compiled.get(variant) ?? compile(scope.unscopedDb(), scope.engine, values, variant);
    const slots = entry.slots;
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      parameters[i] = typeof slot === 'string' ? (slot === 'tenantId' ? scope.tenantId : values[slot]) : slot.constant;
    }
    return run(scope.unscopedDb(), entry.sql, parameters) as Promise<InferResult<Q>>;
  };
}

/**
 * The SQL of a query built with placeholder values, and where each of its parameters comes from: a
 * placeholder's name, or a constant the query itself holds. On PostgreSQL the text is also named
 * (db/pg-adapter.ts) from its first use.
 */
function compileOnce(query: Compilable<unknown>, engine: Engine): Compiled {
  const { sql, parameters } = query.compile();
  const slots = parameters.map((p) =>
    typeof p === 'string' && p.startsWith(SENTINEL) ? p.slice(SENTINEL.length) : { constant: p },
  );
  nameHotStatement(engine, sql);
  return { sql, slots };
}

/**
 * Runs a compiled hot query: outside any transaction on the engine's direct runner
 * (db/direct-runner.ts), where it takes the statement; everything else through Kysely.
 */
function run(db: Kysely<DB>, text: string, parameters: unknown[]): Promise<unknown[]> {
  return directRunner(db)?.run(text, parameters) ?? runOnKysely(db, text, parameters);
}

async function runOnKysely(db: Kysely<DB>, text: string, parameters: unknown[]): Promise<unknown[]> {
  return (await db.executeQuery(CompiledQuery.raw(text, parameters))).rows;
}

/**
 * `preparedQuery` for the few hot queries that run before a tenant is known (e.g. resolving a
 * page host): built on the raw database, so every tenant condition must be written in the query
 * itself. The same rules: values only as parameters, one prepared query per shape.
 */
export function preparedRawQuery<P extends Record<string, unknown>, Q extends Compilable<unknown>>(
  build: (db: Kysely<DB>, values: Placeholders<P>) => Q,
) {
  const compiled = new Map<Engine, Compiled>();

  return async function execute(db: Kysely<DB>, engine: Engine, values: P): Promise<InferResult<Q>> {
    let entry = compiled.get(engine);
    if (entry === undefined) {
      const placeholders = new Proxy({} as Placeholders<P>, { get: (_t, key) => `${SENTINEL}${String(key)}` });
      entry = compileOnce(build(db, placeholders), engine);
      compiled.set(engine, entry);
    }
    const parameters = entry.slots.map((slot) => (typeof slot === 'string' ? values[slot] : slot.constant));
    return run(db, entry.sql, parameters) as Promise<InferResult<Q>>;
  };
}
