import pg from 'pg';
import type { DirectRunner } from './direct-runner.js';

/**
 * Named prepared statements for PostgreSQL. Kysely sends every query unnamed, so the server
 * parses and plans it anew each time: for a join of five tables that costs more than running it
 * (docs/performance.md: serving a page by Host went from 1,300 to 5,600 req/s once its statement
 * was named). This client sends a statement text under a stable name instead, and pg then parses
 * it once per connection and only binds and executes afterwards.
 *
 * Which texts are named:
 * - those registered by `preparedQuery`/`preparedRawQuery` (the hot paths), from their first use;
 * - any other text from its second use, up to `MAX_NAMED` texts in all, so that statements whose
 *   text varies with the input (an `in (…)` list, a literal) cannot grow every connection's
 *   statement cache without bound. Past the cap, new texts go unnamed as before.
 */
const names = new Map<string, string>();
/** Texts seen once and not named yet (cleared when it grows large: it only delays naming). */
const seenOnce = new Set<string>();
const MAX_NAMED = 2_000;
const MAX_SEEN_ONCE = 10_000;

/** Registers `text` to be sent as a named prepared statement; returns its name. */
export function nameStatement(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `aps_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

function nameOf(text: string): string | undefined {
  const name = names.get(text);
  if (name !== undefined || names.size >= MAX_NAMED) return name;
  if (seenOnce.delete(text)) return nameStatement(text);
  if (seenOnce.size >= MAX_SEEN_ONCE) seenOnce.clear();
  seenOnce.add(text);
  return undefined;
}

type Query = (...args: unknown[]) => unknown;

export class NamingClient extends pg.Client {
  // @ts-expect-error pg's overloads cannot be restated one by one; this forwards all of them.
  override query(config: unknown, values?: unknown, callback?: unknown): unknown {
    const send = super.query as unknown as Query;
    if (typeof config === 'string' && Array.isArray(values)) {
      const name = nameOf(config);
      if (name !== undefined && callback === undefined) return this.#named(name, config, values);
    }
    return send.call(this, config, values, callback);
  }

  /**
   * The query built from the text (pg copies a config object property by property, about 5 µs
   * per query in the profile of a person-log write) and then named, submitted as a query object.
   */
  #named(name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
    const query = new pg.Query(text, values) as pg.Query & { name: string; callback?: unknown };
    query.name = name;
    return new Promise((resolve, reject) => {
      query.callback = (error: Error | null, result: pg.QueryResult) => (error ? reject(error) : resolve(result));
      (super.query as unknown as Query).call(this, query);
    });
  }
}

/**
 * Runs compiled statements outside any transaction straight on the pool (registered for the root
 * Kysely instance by connect.ts; db/direct-runner.ts): a connection checked out, the statement,
 * the connection returned.
 */
export class PoolRunner implements DirectRunner {
  constructor(readonly pool: pg.Pool) {}

  async run(text: string, parameters: unknown[]): Promise<unknown[]> {
    // Not pool.query: it releases the connection with the statement's error, and the pool then
    // closes it, so every refused write (a unique violation) would cost a new connection.
    const client = await this.pool.connect();
    try {
      return (await client.query(text, parameters)).rows;
    } finally {
      client.release();
    }
  }
}

/** PostgreSQL's text form of a timestamptz in a UTC session: `2026-11-23 07:04:53.934333+00`. */
const UTC_TIMESTAMPTZ = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.(\d{1,6}))?\+00$/;

/**
 * A timestamptz as the ISO 8601 string with milliseconds the API returns, exactly as
 * `new Date(text).toISOString()` gives it (fractions truncated to milliseconds), but without the
 * Date: its parser costs about a microsecond for this form, and a list of 20 pages carries 40–80
 * timestamps (docs/performance.md, fifth pass). Any other form (a session time zone other than
 * UTC, a year past 9999, BC) goes through Date as before.
 */
export function isoTimestamp(text: string): string {
  const match = UTC_TIMESTAMPTZ.exec(text);
  if (match === null) return new Date(text).toISOString();
  const milliseconds = match[1] === undefined ? '000' : `${match[1]}00`.slice(0, 3);
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${milliseconds}Z`;
}
