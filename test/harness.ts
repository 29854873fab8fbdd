import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { parseConfig, type Config } from '../src/config.js';
import { connectDatabase, type Database, type Engine } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { TenantScope } from '../src/db/tenant-scope.js';
import type { Clock } from '../src/lib/clock.js';
import { createApiKey, createTenant } from '../src/modules/tenants/tenants.service.js';

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

/** A fresh, migrated database for one test file: a temp SQLite file or a new PostgreSQL schema. */
export async function createTestDatabase(): Promise<TestDatabase> {
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
    await migrateToLatest(database);
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
  await migrateToLatest(database);
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
  return parseConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0', ...overrides });
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
  /** Records of `notify(channel)` calls made by the app. */
  notified: string[];
  createTenant(name?: string): Promise<Tenant>;
  /** `app.inject` with the tenant's key; `body` objects are sent as JSON. */
  request(tenant: Tenant | null, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startTestApp(
  options: { config?: Record<string, string>; clock?: TestClock } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const clock = options.clock ?? new TestClock();
  const notified: string[] = [];
  const app = await buildApp({
    // The app sees the test's database URL (PostgreSQL) and data directory, as a deployed one would.
    config: testConfig({ ...database.env, ...options.config }),
    database,
    logger: pino({ level: 'silent' }),
    clock,
    notify: (channel) => notified.push(channel),
  });
  await app.ready();
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
        scope: new TenantScope(database.kysely, database.engine, tenant.tenantId),
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
