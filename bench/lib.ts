import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import type { Database } from '../src/db/connect.js';
import { TenantScope } from '../src/db/tenant-scope.js';
import { systemClock, type Clock } from '../src/lib/clock.js';
import { createApiKey, createTenant } from '../src/modules/tenants/tenants.service.js';

/** One measured load: what `npm run bench` prints and writes to bench/results/. */
export interface Measurement {
  scenario: string;
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  responseBytes: number;
  non2xx: number;
  errors: number;
  /** requestsPerSecond / the bare node:http ceiling for a body of the same size, same run. */
  ratioToCeiling: number | null;
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
  /** Skip the ceiling comparison (e.g. for write paths where it means little). Default false. */
  noCeiling?: boolean;
  /** Extra request headers (e.g. the Host of a tenant's page domain). */
  headers?: Record<string, string>;
  /** Told the number and status of every completed request (each connection sends one at a time). */
  onResponse?: (n: number, status: number) => void;
  extra?: Record<string, unknown>;
}

export interface Service {
  baseUrl: string;
  stop(): Promise<void>;
}

export interface BenchContext {
  /** The bench's own SQLite database (the one the service runs on); seed straight into it. */
  database: Database;
  clock: Clock;
  dataDir: string;
  /** A new tenant with an API key. */
  createTenant(name: string): Promise<{ tenantId: string; apiKey: string; scope: TenantScope }>;
  /** The service under test (started once per run with rate limiting off and quiet logs). */
  service: Service;
  /** Drives load at the service and records the measurement. */
  load(options: LoadOptions): Promise<Measurement>;
  /** Records a measurement made otherwise (e.g. webhook deliveries per second). */
  record(measurement: Measurement): void;
  /** Short runs for a smoke test of the bench itself (BENCH_QUICK=1). */
  quick: boolean;
}

export interface BenchScenario {
  name: string;
  run(ctx: BenchContext): Promise<void>;
}

export const CONNECTIONS = 32;

/** Starts `node dist/main/server.js` against `dataDir`, resolves when it is listening. */
export async function startService(dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const flags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...flags, path.resolve('dist/main/server.js')], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_SECOND: '0',
      // capacity is measured, not the limits that protect it
      PAGE_EVENTS_PER_SECOND: '0',
      PAGE_EVENTS_PER_PAGE_PER_SECOND: '0',
      PAGE_MISSES_PER_MINUTE: '0',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { baseUrl, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** The bare-Node ceiling for a body of `bytes`, measured once per size bucket. */
export class Ceiling {
  readonly #cache = new Map<number, number>();
  constructor(private readonly durationSeconds: number) {}

  async requestsPerSecond(bytes: number): Promise<number> {
    const bucket = bytes < 1024 ? Math.max(64, Math.round(bytes / 64) * 64) : Math.round(bytes / 1024) * 1024;
    const cached = this.#cache.get(bucket);
    if (cached !== undefined) return cached;
    const child = spawn(process.execPath, [path.resolve('bench/ceiling.mjs'), String(bucket)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(readline.createInterface({ input: child.stdout! }), 'line')) as [string];
    const { port } = JSON.parse(line) as { port: number };
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/`,
      connections: CONNECTIONS,
      duration: this.durationSeconds,
    });
    await stopChild(child);
    this.#cache.set(bucket, result.requests.average);
    return result.requests.average;
  }
}

export async function runLoad(
  baseUrl: string,
  options: LoadOptions,
  durationSeconds: number,
): Promise<Omit<Measurement, 'scenario' | 'ratioToCeiling'>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  const method = options.method ?? 'GET';
  const paths = options.paths ?? [options.path];
  let i = 0;
  let responseBytes = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: options.connections ?? CONNECTIONS,
    duration: options.durationSeconds ?? durationSeconds,
    requests: [
      {
        method,
        headers,
        setupRequest: (req, context) => {
          const n = i++;
          (context as { n?: number }).n = n;
          const body = typeof options.body === 'function' ? (options.body as (i: number) => unknown)(n) : options.body;
          return {
            ...req,
            path: paths[n % paths.length]!,
            body: body === undefined ? undefined : JSON.stringify(body),
          };
        },
        onResponse: (status, body, context) => {
          if (responseBytes === 0) responseBytes = Buffer.byteLength(body);
          options.onResponse?.((context as { n: number }).n, status);
        },
      },
    ],
  });
  return {
    name: options.name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    responseBytes,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    extra: options.extra,
  };
}

export async function benchTenant(database: Database, name: string, clock: Clock = systemClock) {
  const tenant = await createTenant(database.kysely, clock, { name });
  const key = await createApiKey(database.kysely, clock, { tenantId: tenant.tenantId, name: 'bench' });
  return {
    tenantId: tenant.tenantId,
    apiKey: key.apiKey,
    scope: new TenantScope(database.kysely, database.engine, tenant.tenantId),
  };
}
