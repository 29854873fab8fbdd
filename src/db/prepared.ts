import { CompiledQuery, type Compilable, type InferResult, type Kysely } from 'kysely';
import type { Engine } from './connect.js';
import type { DB } from './schema.js';
import { TenantScope } from './tenant-scope.js';

const SENTINEL = '\u0000param:';
const TENANT = `${SENTINEL}tenantId`;

type Placeholders<P> = { readonly [K in keyof P]: P[K] };

/**
 * A query on a hot path, built with Kysely once per engine and then executed with new values.
 * Building and compiling a Kysely query costs more than running a primary-key read on SQLite, so
 * the few queries every request makes (listing, counting) are compiled once: `build` receives a
 * TenantScope and placeholder values, and the compiled SQL is reused with the real tenant and
 * values substituted position by position. Tenant scoping is unchanged: the query is still built
 * through a TenantScope. `build` must use every value only as a query parameter (no branching on
 * values; make one prepared query per shape).
 */
export function preparedQuery<P extends Record<string, unknown>, Q extends Compilable<unknown>>(
  build: (scope: TenantScope, values: Placeholders<P>) => Q,
) {
  const compiled = new Map<Engine, { sql: string; slots: (string | { constant: unknown })[] }>();

  function compile(db: Kysely<DB>, engine: Engine) {
    const placeholders = new Proxy({} as Placeholders<P>, { get: (_t, key) => `${SENTINEL}${String(key)}` });
    const query = build(new TenantScope(db, engine, TENANT), placeholders).compile();
    const slots = query.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(SENTINEL) ? p.slice(SENTINEL.length) : { constant: p },
    );
    const entry = { sql: query.sql, slots };
    compiled.set(engine, entry);
    return entry;
  }

  return async function execute(scope: TenantScope, values: P): Promise<InferResult<Q>> {
    const entry = compiled.get(scope.engine) ?? compile(scope.unscopedDb(), scope.engine);
    const parameters = entry.slots.map((slot) =>
      typeof slot === 'string' ? (slot === 'tenantId' ? scope.tenantId : values[slot]) : slot.constant,
    );
    const result = await scope.unscopedDb().executeQuery(CompiledQuery.raw(entry.sql, parameters));
    return result.rows as InferResult<Q>;
  };
}
