import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { pino, type Logger } from 'pino';
import { buildApp } from '../src/app.js';
import { parseConfig, type Config } from '../src/config.js';
import { connectDatabase, type Database, type Engine } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { TenantTable } from '../src/db/schema.js';
import { TenantScope } from '../src/db/tenant-scope.js';
import { wireEventFanOut } from '../src/main/wiring.js';
import type { Clock } from '../src/lib/clock.js';
import { createApiKey, createTenant } from '../src/modules/tenants/index.js';
import { assertDocumentedResponse } from './openapi-responses.js';

export { undocumented } from './openapi-responses.js';

/** The engine this run tests: the suite runs once per engine (scripts/test.mjs). */
export const ENGINE: Engine = process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/** A clock the test moves by hand; starts at a fixed instant so runs are repeatable. */
export class TestClock implements Clock {
  #now: number;
  constructor(start = Date.parse('2026-11-01T09:00:00.000Z')) {
    this.#now = start;
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(ms: number): void {
    this.#now += ms;
  }
  set(iso: string): void {
    this.#now = Date.parse(iso);
  }
}

export interface TestDatabase extends Database {
  /** Drops what the test made (the PostgreSQL schema, the SQLite folder). */
  cleanup(): Promise<void>;
  /** Where the database lives, for a second process (CLI, server) to connect to it. */
  env: Record<string, string>;
  /** A temporary data directory (DATA_DIR) of the test, removed by cleanup (file storage lives here). */
  dataDir: string;
}

/**
 * A fresh, migrated database for one test file: a temp SQLite file or a new PostgreSQL schema.
 * `migrateUpTo` stops after that migration (a migration's own test adds the rest).
 */
export async function createTestDatabase(options: { migrateUpTo?: string } = {}): Promise<TestDatabase> {
  wireEventFanOut();
  const migrate = (database: Database) => migrateToLatest(database, {}, { upTo: options.migrateUpTo });
  if (ENGINE === 'postgres') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_ENGINE=postgres needs TEST_DATABASE_URL');
    const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    // `public` stays on the path for the pg_trgm operator classes installed there.
    const database = connectDatabase({ databaseUrl: url, pgSchema: `${schema},public`, pgPoolSize: 20 });
    await migrate(database);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-test-'));
    return {
      ...database,
      dataDir,
      env: { DATABASE_URL: url, PGOPTIONS: `-c search_path=${schema},public`, DATA_DIR: dataDir },
      cleanup: async () => {
        await database.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-test-'));
  const database = connectDatabase({ databaseUrl: null, sqliteFile: path.join(dir, 'audience-pages.sqlite') });
  await migrate(database);
  return {
    ...database,
    dataDir: dir,
    env: { DATA_DIR: dir },
    cleanup: async () => {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  // Limits that would make every test wait are off unless a test is about them (it sets them).
  return parseConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0', FORM_MIN_FILL_MS: '0', ...overrides });
}

export interface Tenant {
  tenantId: string;
  apiKey: string;
  keyId: string;
  scope: TenantScope;
}

export interface TestApp {
  app: FastifyInstance;
  database: TestDatabase;
  clock: TestClock;
  /** The wake-ups the test database's committed transactions sent (TenantScope.afterCommit). */
  notified: string[];
  createTenant(name?: string): Promise<Tenant>;
  /** `app.inject` with the tenant's key; `body` objects are sent as JSON. */
  request(tenant: Tenant | null, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startTestApp(
  options: { config?: Record<string, string>; clock?: TestClock; logger?: Logger } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const clock = options.clock ?? new TestClock();
  const notified: string[] = [];
  database.wakeups.connect((channel) => notified.push(channel));
  const app = await buildApp({
    // The app sees the test's database URL (PostgreSQL) and data directory, as a deployed one would.
    config: testConfig({ ...database.env, ...options.config }),
    database,
    logger: options.logger ?? pino({ level: 'silent' }),
    clock,
  });
  await app.ready();
  checkResponsesAgainstDocument(app);
  return {
    app,
    database,
    clock,
    notified,
    async createTenant(name = 'Test tenant') {
      const tenant = await createTenant(database.kysely, clock, { name });
      const key = await createApiKey(database.kysely, clock, { tenantId: tenant.tenantId });
      return {
        tenantId: tenant.tenantId,
        apiKey: key.apiKey,
        keyId: key.keyId,
        scope: TenantScope.of(database, tenant.tenantId),
      };
    },
    request(tenant, opts) {
      const headers: Record<string, string> = { ...(opts.headers as Record<string, string> | undefined) };
      if (tenant) headers['x-api-key'] = tenant.apiKey;
      return app.inject({ ...opts, headers });
    },
    async close() {
      await app.close();
      await database.cleanup();
    },
  };
}

/**
 * Makes the app's `inject` check every response against the committed OpenAPI document
 * (test/openapi-responses.ts), for the harness' `request` and for tests calling `app.inject`.
 */
function checkResponsesAgainstDocument(app: FastifyInstance): void {
  const inject = app.inject.bind(app) as (...args: unknown[]) => unknown;
  const checked = (options: InjectOptions | string | undefined, callback?: unknown) => {
    // The chained form (`inject().get(…)`) and the callback form are passed through unchecked.
    if (options === undefined || callback !== undefined) return inject(options, callback);
    const { method = 'GET', url = '/' } =
      typeof options === 'string' ? { url: options } : { method: options.method, url: options.url ?? options.path };
    return (inject(options) as Promise<LightMyRequestResponse>).then((response) => {
      assertDocumentedResponse(String(method).toUpperCase(), String(url), response);
      return response;
    });
  };
  app.inject = checked as typeof app.inject;
}

/** Asserts the problem+json shape and returns the parsed body. */
export function problem(response: LightMyRequestResponse) {
  if (!String(response.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(
      `expected problem+json, got ${response.statusCode} ${response.headers['content-type']}: ${response.body}`,
    );
  }
  return response.json() as {
    type: string;
    title: string;
    status: number;
    detail: string;
    code: string;
    requestId: string;
    errors: { path: string; message: string }[];
    [key: string]: unknown;
  };
}

export interface UseTestAppOptions<Names extends readonly string[]> {
  /** Tenants made before the file's tests run, in order: `const [alice, bob] = t.tenants`. */
  tenants?: Names;
  /** Environment overrides for the app's configuration. */
  config?: Record<string, string>;
  clock?: TestClock;
}

export interface UsedTestApp<Names extends readonly string[]> extends TestApp {
  /** The tenants named in the options; their fields are filled in before the first test runs. */
  readonly tenants: { readonly [K in keyof Names]: Tenant };
}

/**
 * The test file's app: registers its own `beforeAll` (a fresh database on the engine under test,
 * the app, the named tenants) and `afterAll` (close and drop), so a test file starts with
 *
 *     const t = useTestApp({ tenants: ['Alice', 'Bob'] });
 *     const [alice, bob] = t.tenants;
 *
 * Everything on `t` is usable inside hooks and tests (not at the top level of the file).
 */
export function useTestApp<const Names extends readonly string[] = []>(
  options: UseTestAppOptions<Names> = {},
): UsedTestApp<Names> {
  let current: TestApp | null = null;
  const tenants = (options.tenants ?? []).map(() => ({}) as Tenant) as unknown as UsedTestApp<Names>['tenants'];
  const started = (): TestApp => {
    if (current === null) throw new Error('useTestApp: the app is only available inside hooks and tests');
    return current;
  };
  beforeAll(async () => {
    current = await startTestApp({ config: options.config, clock: options.clock });
    for (const [i, name] of (options.tenants ?? []).entries()) {
      Object.assign((tenants as readonly Tenant[])[i]!, await current.createTenant(name));
    }
  });
  const close = async () => {
    await current?.close();
    current = null;
  };
  afterAll(close);
  return {
    tenants,
    get app() {
      return started().app;
    },
    get database() {
      return started().database;
    },
    get clock() {
      return started().clock;
    },
    get notified() {
      return started().notified;
    },
    createTenant: (name) => started().createTenant(name),
    request: (tenant, opts) => started().request(tenant, opts),
    close,
  };
}

/**
 * How many rows a tenant has in each of `tables` (default: every tenant table): taken before and
 * after a refused request, it shows that nothing was written.
 */
export async function rowCounts(tenant: Tenant, tables: readonly TenantTable[] = TENANT_TABLES) {
  const counts: Partial<Record<TenantTable, number>> = {};
  for (const table of tables) {
    const row = await tenant.scope
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

/** Every tenant table; the type below fails to compile when a new one is missing here. */
const TENANT_TABLES = [
  'api_keys',
  'pages',
  'page_counts',
  'serving_revisions',
  'persons',
  'person_logs',
  'person_erasures',
  'form_submissions',
  'accounts',
  'events',
  'idempotency_keys',
  'files',
  'assets',
  'topics',
  'topic_entries',
  'agent_passages',
  'agent_messages',
  'audiences',
  'audience_versions',
  'audience_sessions',
  'audience_session_hours',
  'tenant_domains',
  'tenant_domain_checks',
  'page_links',
  'webhook_subscriptions',
  'webhook_deliveries',
  'webhook_attempts',
  'enrichment_jobs',
  'console_users',
  'console_sign_in_links',
  'console_sessions',
  'audience_imports',
  'llm_token_days',
  'tenant_daily_counts',
] as const satisfies readonly TenantTable[];
type Unlisted = Exclude<TenantTable, (typeof TENANT_TABLES)[number]>;
const everyTenantTableListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTenantTableListed;
