/**
 * `npm run bench`: seeds a realistic data set into a fresh SQLite database, starts the built
 * service on it, drives each scenario's endpoints with autocannon, and measures a bare node:http
 * server answering a body of the same size in the same run (the ceiling). Prints a table and
 * writes bench/results/<time>.json and bench/results/latest.json.
 *
 * BENCH_ONLY=pages,persons runs some scenarios; BENCH_QUICK=1 makes every run short (a smoke test).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { connectDatabase, sqliteFileIn } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { benchTenant, Ceiling, runLoad, startService, type BenchContext, type Measurement } from './lib.js';
import { scenarios } from './scenarios/index.js';

const quick = process.env.BENCH_QUICK === '1';
const duration = quick ? 2 : 8;
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-bench-'));
// BENCH_DATABASE_URL=postgres://… runs the service (and the seeding) on PostgreSQL, in a fresh schema.
const pgUrl = process.env.BENCH_DATABASE_URL?.trim() || null;
const pgSchema = pgUrl ? `bench_${process.pid}` : null;
if (pgUrl) {
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create schema ${pgSchema}`);
  await admin.query('create extension if not exists pg_trgm with schema public');
  await admin.end();
}
const database = pgUrl
  ? connectDatabase({ databaseUrl: pgUrl, pgSchema: `${pgSchema},public`, pgPoolSize: 10 })
  : connectDatabase({ databaseUrl: null, sqliteFile: sqliteFileIn(dataDir) });
await migrateToLatest(database);
const service = await startService(
  dataDir,
  pgUrl ? { DATABASE_URL: pgUrl, PGOPTIONS: `-c search_path=${pgSchema},public` } : {},
);
console.log(`engine: ${database.engine}`);
const ceiling = new Ceiling(duration);
const measurements: Measurement[] = [];
let current = '';

const ctx: BenchContext = {
  database,
  clock: systemClock,
  dataDir,
  quick,
  service,
  createTenant: (name) => benchTenant(database, name),
  async load(options) {
    const result = await runLoad(service.baseUrl, options, duration);
    const ceilingRps = options.noCeiling ? null : await ceiling.requestsPerSecond(result.responseBytes);
    const measurement: Measurement = {
      scenario: current,
      ...result,
      ratioToCeiling: ceilingRps ? Math.round((result.requestsPerSecond / ceilingRps) * 100) / 100 : null,
      extra: { ...result.extra, ...(ceilingRps ? { ceilingRequestsPerSecond: Math.round(ceilingRps) } : {}) },
    };
    this.record(measurement);
    return measurement;
  },
  record(measurement) {
    measurements.push(measurement);
    const ratio = measurement.ratioToCeiling === null ? '' : `  ${measurement.ratioToCeiling.toFixed(2)}× ceiling`;
    const problems =
      measurement.non2xx + measurement.errors > 0
        ? `  (${measurement.non2xx} non-2xx, ${measurement.errors} errors)`
        : '';
    console.log(
      `  ${measurement.name.padEnd(58)} ${String(measurement.requestsPerSecond).padStart(7)} req/s  p50 ${String(measurement.p50Ms).padStart(5)} ms  p99 ${String(measurement.p99Ms).padStart(5)} ms${ratio}${problems}`,
    );
  },
};

const started = new Date();
try {
  for (const scenario of scenarios) {
    if (only && !only.includes(scenario.name)) continue;
    current = scenario.name;
    console.log(`\n## ${scenario.name}`);
    await scenario.run(ctx);
  }
} finally {
  await service.stop();
  await database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (pgUrl) {
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`drop schema if exists ${pgSchema} cascade`);
    await admin.end();
  }
}

const report = {
  startedAt: started.toISOString(),
  finishedAt: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  },
  engine: database.engine,
  durationSecondsPerLoad: duration,
  quick,
  measurements,
};
const dir = path.resolve('bench/results');
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify(report, null, 2));
fs.writeFileSync(path.join(dir, 'latest.json'), JSON.stringify(report, null, 2));
console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
