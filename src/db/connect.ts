import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { registerDirectRunner } from './direct-runner.js';
import { isoTimestamp, NamingClient, PoolRunner } from './pg-adapter.js';
import type { DB } from './schema.js';
import { SqliteAdapter, SqliteReaderRunner } from './sqlite-adapter.js';
import { WakeupSink } from './wakeup-sink.js';

export type Engine = 'sqlite' | 'postgres';

export interface Database {
  readonly kysely: Kysely<DB>;
  readonly engine: Engine;
  /** A short description for logs, never containing credentials. */
  readonly description: string;
  /** Where the wake-ups of committed transactions go (TenantScope.afterCommit); the composition root connects it. */
  readonly wakeups: WakeupSink;
  /**
   * PostgreSQL only: a connection of its own that LISTENs on `channel` and hands each NOTIFY
   * payload to `onPayload` (reconnecting after a lost connection). Resolves to a stop function.
   */
  readonly listen?: (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** `postgres://…`; null selects SQLite. */
  databaseUrl: string | null;
  /** SQLite only: the database file (created with its folder when missing). */
  sqliteFile?: string;
  /** PostgreSQL only: the schema to use (tests give every run its own). */
  pgSchema?: string;
  pgPoolSize?: number;
}

const SQLITE_FILENAME = 'audience-pages.sqlite';

export function sqliteFileIn(dataDir: string): string {
  return path.join(dataDir, SQLITE_FILENAME);
}

/** The connection a process of the service opens, from its configuration (server, workers' thread, CLI). */
export function connectionOptionsOf(config: {
  databaseUrl: string | null;
  dataDir: string;
  pgPoolSize: number;
}): ConnectOptions {
  return { databaseUrl: config.databaseUrl, sqliteFile: sqliteFileIn(config.dataDir), pgPoolSize: config.pgPoolSize };
}

export function connectDatabase(options: ConnectOptions): Database {
  return options.databaseUrl === null
    ? connectSqlite(options.sqliteFile ?? sqliteFileIn('./data'))
    : connectPostgres(options);
}

/** The SQLite function registered on every connection: JavaScript's Unicode `toLowerCase`. */
export const UNICODE_LOWER = 'unicode_lower';

function openSqlite(file: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  const raw = new BetterSqlite3(file, options);
  // WAL lets readers run beside the writer; FULL makes an acknowledged commit survive power loss,
  // not only a crash of the process. The busy timeout covers a second process (CLI, worker).
  if (!options.readonly) raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // SQLite's lower() and LIKE fold ASCII only; searches too short for the trigram index need the
  // Unicode lowercase PostgreSQL's ilike applies (dialect.ts, substringMatch).
  raw.function(UNICODE_LOWER, { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? text.toLowerCase() : text,
  );
  return raw;
}

function connectSqlite(file: string): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const adapter = new SqliteAdapter(openSqlite(file));
  const kysely = new Kysely<DB>({ dialect: new SqliteDialect({ database: adapter }) });
  // Hot reads outside a transaction go to a second, read-only connection (db/prepared.ts).
  const reader = file === ':memory:' ? null : new SqliteAdapter(openSqlite(file, { readonly: true }));
  if (reader !== null) registerDirectRunner(kysely, new SqliteReaderRunner(reader));
  return {
    kysely,
    engine: 'sqlite',
    description: `sqlite:${file}`,
    wakeups: new WakeupSink(),
    close: async () => {
      await kysely.destroy();
      reader?.close();
    },
  };
}

const PG_TIMESTAMPTZ = 1184;
const PG_TIMESTAMP = 1114;
const PG_INT8 = 20;
const PG_NUMERIC = 1700;

function connectPostgres(options: ConnectOptions): Database {
  const url = options.databaseUrl!;
  // Per-pool type parsers (not pg's global ones) so that both engines return the same shapes:
  // timestamps as ISO 8601 strings with milliseconds, counts as numbers.
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === PG_TIMESTAMPTZ) return isoTimestamp;
      if (oid === PG_TIMESTAMP) return (value: string) => new Date(value).toISOString();
      if (oid === PG_INT8 || oid === PG_NUMERIC) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format);
    },
  };
  const pool = new pg.Pool({
    Client: NamingClient as unknown as typeof pg.Client,
    connectionString: url,
    max: options.pgPoolSize ?? 10,
    types: types as pg.CustomTypesConfig,
    options: options.pgSchema ? `-c search_path=${options.pgSchema}` : undefined,
  });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it. Queries report their own errors.
  });
  const kysely = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  // Compiled statements outside a transaction skip Kysely's executor (db/prepared.ts).
  registerDirectRunner(kysely, new PoolRunner(pool));
  const clientConfig: pg.ClientConfig = {
    connectionString: url,
    options: options.pgSchema ? `-c search_path=${options.pgSchema}` : undefined,
  };
  const safe = new URL(url);
  safe.password = '';
  safe.username = '';
  return {
    kysely,
    engine: 'postgres',
    description: `postgres:${safe.host}${safe.pathname}${options.pgSchema ? `#${options.pgSchema}` : ''}`,
    wakeups: new WakeupSink(),
    listen: (channel, onPayload) => listenOn(clientConfig, channel, onPayload),
    close: () => kysely.destroy(),
  };
}

async function listenOn(
  config: pg.ClientConfig,
  channel: string,
  onPayload: (payload: string) => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;
  const connect = async () => {
    const c = new pg.Client(config);
    c.on('notification', (message) => {
      if (message.channel === channel) onPayload(message.payload ?? '');
    });
    c.on('error', () => reconnect(c));
    c.on('end', () => reconnect(c));
    await c.connect();
    await c.query(`listen ${c.escapeIdentifier(channel)}`);
    client = c;
  };
  // A lost listener only delays wake-ups: the workers poll as well. Try again every second.
  const reconnect = (c: pg.Client) => {
    if (stopped || client !== c || retry !== null) return;
    client = null;
    retry = setTimeout(() => {
      retry = null;
      connect().catch(() => reconnect(c));
    }, 1000);
    retry.unref();
  };
  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
