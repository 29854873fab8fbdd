import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import pg from 'pg';
import { connectDatabase, sqliteFileIn, type Database, type Engine } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { TenantScope } from '../src/db/tenant-scope.js';
import { systemClock, type Clock } from '../src/lib/clock.js';
import { wireEventFanOut } from '../src/main/wiring.js';
import { createPage } from '../src/modules/pages/pages.service.js';
import type { LoadResult } from './load.js';
import { createApiKey, createTenant } from '../src/modules/tenants/tenants.service.js';

/** One measured load: what `npm run bench` prints and writes to bench/results/. */
export interface Measurement {
  scenario: string;
  name: string;
  engine?: Engine;
  /** Median over the rounds. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  responseBytes: number;
  non2xx: number;
  errors: number;
  /** Median over the rounds of requestsPerSecond / the bare node:http ceiling measured right after it. */
  ratioToCeiling: number | null;
  /**
   * Median over the rounds of requestsPerSecond / the same-bytes ceiling measured right after it
   * (a bare node:http server answering the exact response the service sent; loads with
   * `sameBytesCeiling` only).
   */
  ratioToSameBytesCeiling?: number | null;
  /** Anything else worth reporting (counts checked after the run, seeded sizes, …). */
  extra?: Record<string, unknown>;
}

export interface LoadOptions {
  name: string;
  path: string;
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  apiKey?: string;
  /** A fixed JSON body, or a function giving each request its own (e.g. unique emails). */
  body?: unknown | ((i: number) => unknown);
  /** Several paths to rotate through (e.g. different search terms), instead of `path`. */
  paths?: string[];
  connections?: number;
  durationSeconds?: number;
  /** Rounds to take the median of (default BENCH_ROUNDS, 3). */
  rounds?: number;
  /** Skip the ceiling comparison (e.g. for write paths where it means little). Default false. */
  noCeiling?: boolean;
  /**
   * Also measure, right after each round, a bare node:http server answering the exact response
   * the service sent for this request (status, header names and values in order, body bytes;
   * `bench/ceiling.mjs --response`), captured once with the load's headers (a POST is sent once
   * more for it, before the load).
   */
  sameBytesCeiling?: boolean;
  /** Extra request headers (e.g. the Host of a tenant's page domain). */
  headers?: Record<string, string>;
  /**
   * Told the number and status of every completed request (each connection sends one at a time).
   * wrk cannot report single responses, so such a load runs with autocannon.
   */
  onResponse?: (n: number, status: number) => void;
  extra?: Record<string, unknown>;
  /** Another server to load instead of the service (the stack's reference, bench/reference.mjs). */
  target?: { baseUrl: string; pid: number };
}

export interface Service {
  baseUrl: string;
  /** The service's (main) process id, to read its CPU time and memory. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * A loopback HTTP server in the bench process that the service under test may deliver webhooks
 * to: it listens before the service starts, so that its port can be in the service's
 * WEBHOOK_ALLOWED_PORTS (with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true). A scenario sets what answers.
 */
export interface Subscriber {
  baseUrl: string;
  /** Sets the handler of every request from now on; null (the default) answers 503. */
  handle(handler: http.RequestListener | null): void;
  close(): Promise<void>;
}

export async function startSubscriber(): Promise<Subscriber> {
  let current: http.RequestListener | null = null;
  const server = http.createServer((req, res) => {
    if (current) current(req, res);
    else req.resume().on('end', () => res.writeHead(503).end());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handle: (handler) => (current = handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface BenchContext {
  engine: Engine;
  /** The bench's own connection to the database the service runs on; seed straight into it. */
  database: Database;
  clock: Clock;
  dataDir: string;
  /** A new tenant with an API key. */
  createTenant(name: string): Promise<{ tenantId: string; apiKey: string; scope: TenantScope }>;
  /** The service under test (started once per run with rate limiting off and quiet logs). */
  service: Service;
  /** Where the service may deliver webhooks (a scenario's local subscriber). */
  subscriber: Subscriber;
  /** Drives load at the service and records the measurement. */
  load(options: LoadOptions): Promise<Measurement>;
  /** Records a measurement made otherwise (e.g. webhook deliveries per second). */
  record(measurement: Measurement): void;
  /** A fresh, migrated database of the run's engine (e.g. for an in-process worker). */
  freshDatabase(label: string): Promise<BenchDatabase>;
  /** Short runs for a smoke test of the bench itself (BENCH_QUICK=1). */
  quick: boolean;
}

export interface BenchScenario {
  name: string;
  run(ctx: BenchContext): Promise<void>;
}

/** As the issue measured: `wrk -t1 -c50`. */
export const CONNECTIONS = 50;

export interface BenchDatabase {
  database: Database;
  /** Environment for a service process to use the same database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** PostgreSQL server for BENCH_ENGINE=postgres; every run creates (and drops) its own databases. */
export const BENCH_PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A fresh, migrated database: a SQLite file under `dataDir`, or a new PostgreSQL database
 * (`aps_bench_<label>_<pid>`) on BENCH_PG_URL, dropped by `drop()`.
 */
export async function createBenchDatabase(engine: Engine, dataDir: string, label: string): Promise<BenchDatabase> {
  wireEventFanOut();
  if (engine === 'sqlite') {
    const database = connectDatabase({ databaseUrl: null, sqliteFile: sqliteFileIn(dataDir) });
    await migrateToLatest(database);
    return { database, env: { DATA_DIR: dataDir }, drop: () => database.close() };
  }
  const name = `aps_bench_${label.replace(/\W/g, '_')}_${process.pid}`;
  const admin = new pg.Client({ connectionString: BENCH_PG_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(BENCH_PG_URL);
  url.pathname = `/${name}`;
  const database = connectDatabase({ databaseUrl: url.toString(), pgPoolSize: 10 });
  await migrateToLatest(database);
  return {
    database,
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    async drop() {
      await database.close();
      const c = new pg.Client({ connectionString: BENCH_PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** The Node flags of `npm start` (package.json), so that the bench runs the service as it is run. */
const START_FLAGS = (
  JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--'));

/** Starts the service as `npm start` does, with `env` (behind `prefix`, e.g. `nice -n 10`), resolves when it is listening. */
export async function startService(env: Record<string, string>, prefix: string[] = []): Promise<Service> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const flags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const [command, ...args] = [
    ...prefix,
    process.execPath,
    ...START_FLAGS,
    ...flags,
    path.resolve('dist/main/server.js'),
  ];
  const child = spawn(command!, args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_SECOND: '0',
      // Files on disk on both engines, so that a scenario can seed them where the service reads.
      FILE_STORAGE: 'disk',
      // capacity is measured, not the limits that protect it
      PAGE_EVENTS_PER_SECOND: '0',
      PAGE_EVENTS_PER_PAGE_PER_SECOND: '0',
      PAGE_MISSES_PER_MINUTE: '0',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { baseUrl, pid: child.pid!, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** The stack's reference server (bench/reference.mjs), seeded and listening. */
export async function startReference(engine: Engine, where: string) {
  const flags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...flags, path.resolve('bench/reference.mjs'), engine, where], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(readline.createInterface({ input: child.stdout! }), 'line')) as [string];
  const { port, key, persons } = JSON.parse(line) as { port: number; key: string; persons: number };
  const step = (count: number) => Math.max(1, Math.floor(persons / count));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    key,
    /** `count` paths of persons spread over the table, like the service's load. */
    paths: (count: number) =>
      Array.from({ length: count }, (_, i) => `/v0/persons/person_${String(i * step(count)).padStart(26, '0')}`),
    stop: () => stopChild(child),
  };
}

/** One response as the service sent it: what the same-bytes ceiling answers. */
export interface CapturedResponse {
  status: number;
  /** Names and values as sent, in order; Date, Connection and Keep-Alive left out (node adds its own). */
  headers: [string, string][];
  bodyBase64: string;
}

type CeilingServer = { child: ChildProcess; baseUrl: string };

/**
 * The bare-Node ceilings. `server(bytes)`: `bench/ceiling.mjs` answering a body of about the same
 * size with two headers; one server per size bucket. `sameBytes(response)`: `bench/ceiling.mjs
 * --response` answering exactly a captured response of the service; one server per distinct
 * response. Each is kept running for the whole run and measured again right after each round of
 * the service, so that both see the same machine load.
 */
export class Ceilings {
  readonly #servers = new Map<string, Promise<CeilingServer>>();
  readonly #dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-ceiling-'));

  static bucket(bytes: number): number {
    return bytes < 1024 ? Math.max(64, Math.round(bytes / 64) * 64) : Math.round(bytes / 1024) * 1024;
  }

  server(bytes: number): Promise<CeilingServer> {
    const bucket = String(Ceilings.bucket(bytes));
    return this.#start(bucket, [bucket]);
  }

  sameBytes(response: CapturedResponse): Promise<CeilingServer> {
    const json = JSON.stringify(response);
    const key = `response-${createHash('sha256').update(json).digest('hex').slice(0, 16)}`;
    const file = path.join(this.#dir, `${key}.json`);
    if (!fs.existsSync(file)) fs.writeFileSync(file, json);
    return this.#start(key, ['--response', file]);
  }

  #start(key: string, args: string[]): Promise<CeilingServer> {
    let server = this.#servers.get(key);
    if (server === undefined) {
      server = (async () => {
        const child = spawn(process.execPath, [path.resolve('bench/ceiling.mjs'), ...args], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const [line] = (await once(readline.createInterface({ input: child.stdout! }), 'line')) as [string];
        const { port } = JSON.parse(line) as { port: number };
        return { child, baseUrl: `http://127.0.0.1:${port}` };
      })();
      this.#servers.set(key, server);
    }
    return server;
  }

  async stop(): Promise<void> {
    for (const server of this.#servers.values()) await stopChild((await server).child);
    this.#servers.clear();
    fs.rmSync(this.#dir, { recursive: true, force: true });
  }
}

export async function benchTenant(database: Database, name: string, clock: Clock = systemClock) {
  const tenant = await createTenant(database.kysely, clock, { name });
  const key = await createApiKey(database.kysely, clock, { tenantId: tenant.tenantId, name: 'bench' });
  return {
    tenantId: tenant.tenantId,
    apiKey: key.apiKey,
    scope: TenantScope.of(database, tenant.tenantId),
  };
}

/** A request with a Host of our choosing (fetch will not send one). */
export function request(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${options.path}`,
      { method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A page as the scenarios that serve one create it: published, with a brief and one action. */
export function benchPage(scope: TenantScope, name: string): Promise<string> {
  return createPage(scope, systemClock, {
    name,
    title: 'A plan for {{company}}',
    pageContext: 'Outbound to VP Sales.\n\n## Pricing\nPriced by live pages, not seats.',
    pageType: 'outbound',
    status: 'published',
    brandId: 'brand_bench',
    actions: [{ purpose: 'Book', buttonTitle: 'Book a demo', actionType: 'calendar', url: 'https://example.com/b' }],
    headerActionIndex: 0,
    metadata: { title: 'A plan', description: 'For your team' },
  });
}

/** A measurement of one load that has no ceiling (latency under a condition, a screen's time). */
export function measured(
  scenario: string,
  name: string,
  result: LoadResult,
  extra: Record<string, unknown> = {},
): Measurement {
  return {
    scenario,
    name,
    requestsPerSecond: Math.round(result.requestsPerSecond),
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    responseBytes: result.bytesPerResponse,
    non2xx: result.non2xx,
    errors: result.errors,
    ratioToCeiling: null,
    extra,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The p-th percentile of sorted values (nearest rank), to `decimals` places. */
export function percentile(sorted: number[], p: number, decimals = 1): number {
  if (sorted.length === 0) return 0;
  const scale = 10 ** decimals;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * scale) / scale;
}
