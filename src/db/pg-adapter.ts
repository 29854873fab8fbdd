import pg from 'pg';

/**
 * Named prepared statements for PostgreSQL. Kysely sends every query unnamed, so the server
 * parses and plans it anew each time; for the statements of the hot paths (registered by
 * `preparedQuery`) this client sends the same text under a stable name instead, and pg then
 * parses it once per connection and only binds and executes afterwards. Other queries are
 * sent as before.
 */
const names = new Map<string, string>();

/** Registers `text` to be sent as a named prepared statement; returns its name. */
export function nameStatement(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `aps_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

type Query = (...args: unknown[]) => unknown;

export class NamingClient extends pg.Client {
  // @ts-expect-error pg's overloads cannot be restated one by one; this forwards all of them.
  override query(config: unknown, values?: unknown, callback?: unknown): unknown {
    const send = super.query as unknown as Query;
    if (typeof config === 'string' && Array.isArray(values)) {
      const name = names.get(config);
      if (name !== undefined) return send.call(this, { name, text: config, values }, callback);
    }
    return send.call(this, config, values, callback);
  }
}
