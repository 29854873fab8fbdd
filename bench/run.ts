/**
 * `npm run bench`: seeds a realistic data set into a fresh database, starts the built service on
 * it, drives each scenario's endpoints with wrk (`-t1 -c50`), and after each round measures a bare
 * node:http server answering a body of the same size (the ceiling), so that every figure is a
 * ratio to what the machine does at that moment. Prints `req/s, p50/p99, × ceiling` per load
 * (medians over the rounds) and writes bench/results/<time>.json and bench/results/latest.json.
 * A load with `sameBytesCeiling` is also measured against a bare node:http server answering the
 * exact response the service sent (`× same-bytes ceiling`, printed on a second line).
 *
 * BENCH_ENGINE=sqlite (default) | postgres | both     BENCH_DATABASE_URL: the PostgreSQL server
 * BENCH_ONLY=pages,persons: some scenarios            BENCH_LOADS=limit=1,…: loads whose name has one of these
 * BENCH_ROUNDS=3, BENCH_DURATION=5 (seconds)
 * BENCH_QUICK=1: a smoke run (1 round of 2 s, smaller data)
 * BENCH_LOADER=autocannon: the in-process fallback    BENCH_NODE_FLAGS: flags for the service's (and the reference's) node
 * BENCH_WEB_CONCURRENCY=N: the service's WEB_CONCURRENCY (PostgreSQL)
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Engine } from '../src/db/connect.js';
import { systemClock } from '../src/lib/clock.js';
import {
  benchTenant,
  Ceilings,
  CONNECTIONS,
  createBenchDatabase,
  median,
  startService,
  startSubscriber,
  type BenchContext,
  type CapturedResponse,
  type LoadOptions,
  type Measurement,
} from './lib.js';
import {
  chooseLoader,
  postgresCpuSeconds,
  processTreeCpuMicros,
  runLoad,
  type BenchRequest,
  type LoadResult,
} from './load.js';
import { scenarios } from './scenarios/index.js';

const quick = process.env.BENCH_QUICK === '1';
const duration = Number(process.env.BENCH_DURATION ?? (quick ? 2 : 5));
const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
/** BENCH_LOADS=limit=1,persons/{id}: run only the loads whose name contains one of these. */
const onlyLoads = process.env.BENCH_LOADS?.split(',').map((s) => s.trim());
// BENCH_DATABASE_URL alone (as before BENCH_ENGINE existed) means PostgreSQL.
const engineChoice = (process.env.BENCH_ENGINE ?? (process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite')).trim();
if (!['sqlite', 'postgres', 'both'].includes(engineChoice)) {
  throw new Error(`BENCH_ENGINE must be sqlite, postgres or both, got "${engineChoice}"`);
}
const engines: Engine[] = engineChoice === 'both' ? ['sqlite', 'postgres'] : [engineChoice as Engine];
const serviceEnv: Record<string, string> = {};
// One load generator is one client address: the forms scenario measures throughput, not the per-address limit.
serviceEnv.FORM_SUBMISSIONS_PER_MINUTE = '0';
// Submissions go at once: the fill time's wait is per visitor, not a cost of the service.
serviceEnv.FORM_MIN_FILL_MS = '0';
if (process.env.BENCH_WEB_CONCURRENCY) serviceEnv.WEB_CONCURRENCY = process.env.BENCH_WEB_CONCURRENCY;

const loader = chooseLoader();
const measurements: Measurement[] = [];
const started = new Date();
console.log(
  `bench: ${engines.join(' + ')}, ${loader} -t1 -c${CONNECTIONS}, ${rounds} round(s) × ${duration} s, ` +
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
);

/** Where request numbers of a round start, so that rounds never reuse a number. */
const roundOffset = (options: LoadOptions, round: number) => round * (options.durationSeconds ?? duration) * 20_000;

/** Request n of a round, made when it is sent (for loads that watch each response). */
function lazyRequests(options: LoadOptions, round: number): (n: number) => BenchRequest {
  const method = options.method ?? 'GET';
  const paths = options.paths ?? [options.path];
  const offset = roundOffset(options, round);
  return (n) => {
    const i = offset + n;
    const body = typeof options.body === 'function' ? (options.body as (i: number) => unknown)(i) : options.body;
    return { method, path: paths[i % paths.length]!, body: body === undefined ? undefined : JSON.stringify(body) };
  };
}

/** Requests to rotate through: the distinct paths, or as many bodies as a round can send. */
function requestsOf(options: LoadOptions, round: number): BenchRequest[] {
  const method = options.method ?? 'GET';
  const paths = options.paths ?? [options.path];
  if (typeof options.body !== 'function') {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    return paths.map((p) => ({ method, path: p, body }));
  }
  const perRound = (options.durationSeconds ?? duration) * 20_000;
  const make = options.body as (i: number) => unknown;
  return Array.from({ length: perRound }, (_, k) => {
    const i = round * perRound + k;
    return { method, path: paths[i % paths.length]!, body: JSON.stringify(make(i)) };
  });
}

/** Response headers node:http adds to every response on its own: the same-bytes ceiling's node adds them too. */
const NODE_OWN_HEADERS = new Set(['date', 'connection', 'keep-alive']);

/**
 * The first response to a GET, sent with the load's headers (Host included): its body size (to
 * pick the ceiling's), and the response itself for the same-bytes ceiling. Other methods only for
 * the same-bytes ceiling (`capture`): the request is then sent once more than the load sends it.
 */
function firstResponse(
  baseUrl: string,
  headers: Record<string, string>,
  request: BenchRequest,
  capture: boolean,
): Promise<{ bytes: number; response: CapturedResponse | null }> {
  if (request.method !== 'GET' && !capture) return Promise.resolve({ bytes: 0, response: null });
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${request.path}`, { method: request.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const sent: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!;
          if (!NODE_OWN_HEADERS.has(name.toLowerCase())) sent.push([name, res.rawHeaders[i + 1]!]);
        }
        resolve({
          bytes: body.length,
          response: { status: res.statusCode ?? 0, headers: sent, bodyBase64: body.toString('base64') },
        });
      });
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

const skipped: Measurement = {
  scenario: '',
  name: '',
  requestsPerSecond: 0,
  p50Ms: 0,
  p99Ms: 0,
  responseBytes: 0,
  non2xx: 0,
  errors: 0,
  ratioToCeiling: null,
};

/** A ceiling's round: its throughput, latency and CPU per request under the same wrk command. */
async function ceilingRound(
  server: { child: { pid?: number }; baseUrl: string },
  headers: Record<string, string>,
  requests: BenchRequest[],
  options: LoadOptions,
): Promise<CeilingRound> {
  const before = processTreeCpuMicros(server.child.pid!);
  const bare = await runLoad({
    baseUrl: server.baseUrl,
    headers,
    requests,
    connections: options.connections ?? CONNECTIONS,
    durationSeconds: options.durationSeconds ?? duration,
  });
  return {
    requestsPerSecond: bare.requestsPerSecond,
    latency: { p50Ms: bare.p50Ms, p99Ms: bare.p99Ms },
    cpuMicrosPerRequest:
      Math.round(((processTreeCpuMicros(server.child.pid!) - before) / Math.max(1, bare.requests)) * 10) / 10,
  };
}

interface CeilingRound {
  requestsPerSecond: number;
  /** The bare server's own latency under the same load: the tail the machine itself has. */
  latency: { p50Ms: number; p99Ms: number };
  cpuMicrosPerRequest: number;
}

async function runEngine(engine: Engine) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-bench-'));
  const main = await createBenchDatabase(engine, dataDir, 'main');
  // The local subscriber listens first: the service must be told its port.
  const subscriber = await startSubscriber();
  const service = await startService({
    ...main.env,
    ...serviceEnv,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_ALLOWED_PORTS: new URL(subscriber.baseUrl).port,
  });
  const ceilings = new Ceilings();
  let current = '';
  console.log(`\n# ${engine}${serviceEnv.WEB_CONCURRENCY ? ` (WEB_CONCURRENCY=${serviceEnv.WEB_CONCURRENCY})` : ''}`);

  const ctx: BenchContext = {
    engine,
    database: main.database,
    clock: systemClock,
    dataDir,
    quick,
    service,
    subscriber,
    createTenant: (name) => benchTenant(main.database, name),
    freshDatabase: (label) =>
      createBenchDatabase(engine, fs.mkdtempSync(path.join(os.tmpdir(), `aps-bench-${label}-`)), label),
    async load(options) {
      if (onlyLoads && !onlyLoads.some((part) => options.name.includes(part))) {
        return { ...skipped, scenario: current, name: options.name, extra: {} };
      }
      const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
      if (options.apiKey) headers['x-api-key'] = options.apiKey;
      const n = options.rounds ?? rounds;
      const results: (LoadResult & {
        ceiling: number | null;
        /** The bare server's own latency under the same load: the tail the machine itself has. */
        ceilingLatency: { p50Ms: number; p99Ms: number } | null;
        cpuMicrosPerRequest: number;
        /** PostgreSQL's server processes (when local), per request: the other half of a request's cost. */
        databaseCpuMicrosPerRequest: number | null;
        ceilingCpuMicrosPerRequest: number | null;
        /** The same-bytes ceiling's round (loads with `sameBytesCeiling`). */
        sameBytes: CeilingRound | null;
      })[] = [];
      let bytes = 0;
      let captured: CapturedResponse | null = null;
      const loadAverage = os.loadavg()[0]!;
      const target = options.target ?? service;
      for (let round = 0; round < n; round++) {
        // A load that watches each response makes each request when it is sent (autocannon).
        const requests = options.onResponse ? [lazyRequests(options, round)(0)] : requestsOf(options, round);
        if (round === 0) {
          const first = await firstResponse(target.baseUrl, headers, requests[0]!, options.sameBytesCeiling === true);
          bytes = first.bytes;
          if (options.sameBytesCeiling) captured = first.response;
        }
        const cpuBefore = processTreeCpuMicros(target.pid);
        const databaseCpuBefore = engine === 'postgres' ? postgresCpuSeconds() : null;
        const result = await runLoad({
          baseUrl: target.baseUrl,
          headers,
          requests,
          ...(options.onResponse
            ? {
                next: lazyRequests(options, round),
                onResponse: (n: number, status: number) => options.onResponse!(roundOffset(options, round) + n, status),
              }
            : {}),
          connections: options.connections ?? CONNECTIONS,
          durationSeconds: options.durationSeconds ?? duration,
        });
        const cpu = processTreeCpuMicros(target.pid) - cpuBefore;
        const databaseCpuAfter = databaseCpuBefore === null ? null : postgresCpuSeconds();
        const databaseCpu =
          databaseCpuBefore === null || databaseCpuAfter === null ? null : (databaseCpuAfter - databaseCpuBefore) * 1e6;
        let ceiling: number | null = null;
        let ceilingCpu: number | null = null;
        let ceilingLatency: { p50Ms: number; p99Ms: number } | null = null;
        if (!options.noCeiling) {
          const server = await ceilings.server(bytes || Math.max(64, result.bytesPerResponse - 250));
          const bare = await ceilingRound(server, {}, [{ method: 'GET', path: '/' }], options);
          ceiling = bare.requestsPerSecond;
          ceilingLatency = bare.latency;
          ceilingCpu = bare.cpuMicrosPerRequest;
        }
        // The same request, wrk's headers included, answered with the service's exact response.
        const sameBytes =
          captured === null ? null : await ceilingRound(await ceilings.sameBytes(captured), headers, requests, options);
        results.push({
          ...result,
          ceiling,
          ceilingLatency,
          cpuMicrosPerRequest: Math.round(cpu / Math.max(1, result.requests)),
          databaseCpuMicrosPerRequest:
            databaseCpu === null ? null : Math.round(databaseCpu / Math.max(1, result.requests)),
          ceilingCpuMicrosPerRequest: ceilingCpu,
          sameBytes,
        });
      }
      const ratios = results.filter((r) => r.ceiling).map((r) => r.requestsPerSecond / r.ceiling!);
      const sameBytesRounds = results.filter((r) => r.sameBytes !== null).map((r) => r.sameBytes!);
      const sameBytesRatios = results
        .filter((r) => r.sameBytes !== null)
        .map((r) => r.requestsPerSecond / r.sameBytes!.requestsPerSecond);
      const serviceCpu = median(results.map((r) => r.cpuMicrosPerRequest));
      const measurement: Measurement = {
        scenario: current,
        engine,
        name: options.name,
        requestsPerSecond: Math.round(median(results.map((r) => r.requestsPerSecond))),
        p50Ms: median(results.map((r) => r.p50Ms)),
        p99Ms: median(results.map((r) => r.p99Ms)),
        responseBytes: bytes || results[0]!.bytesPerResponse,
        non2xx: results.reduce((s, r) => s + r.non2xx, 0),
        errors: results.reduce((s, r) => s + r.errors, 0),
        ratioToCeiling: ratios.length > 0 ? Math.round(median(ratios) * 1000) / 1000 : null,
        ...(sameBytesRatios.length > 0
          ? { ratioToSameBytesCeiling: Math.round(median(sameBytesRatios) * 1000) / 1000 }
          : {}),
        extra: {
          ...options.extra,
          ...(ratios.length > 0
            ? {
                ceilingRequestsPerSecond: Math.round(median(results.map((r) => r.ceiling!))),
                ceilingP50Ms: median(results.map((r) => r.ceilingLatency!.p50Ms)),
                ceilingP99Ms: median(results.map((r) => r.ceilingLatency!.p99Ms)),
              }
            : {}),
          serviceCpuMicrosPerRequest: serviceCpu,
          ...(results.every((r) => r.databaseCpuMicrosPerRequest !== null)
            ? { databaseCpuMicrosPerRequest: median(results.map((r) => r.databaseCpuMicrosPerRequest!)) }
            : {}),
          // CPU per request of the ceiling over the service's: the ratio the machine's other load
          // disturbs least (both are CPU time, not throughput on shared cores).
          ...(ratios.length > 0
            ? {
                ceilingCpuMicrosPerRequest: median(results.map((r) => r.ceilingCpuMicrosPerRequest!)),
                cpuRatioToCeiling:
                  Math.round(
                    (median(results.map((r) => r.ceilingCpuMicrosPerRequest!)) /
                      median(results.map((r) => r.cpuMicrosPerRequest))) *
                      1000,
                  ) / 1000,
              }
            : {}),
          // The same-bytes ceiling: what a bare node:http server does answering the very response.
          ...(captured !== null && sameBytesRounds.length > 0
            ? {
                sameBytesCeilingRequestsPerSecond: Math.round(median(sameBytesRounds.map((r) => r.requestsPerSecond))),
                sameBytesCeilingP50Ms: median(sameBytesRounds.map((r) => r.latency.p50Ms)),
                sameBytesCeilingP99Ms: median(sameBytesRounds.map((r) => r.latency.p99Ms)),
                sameBytesCeilingCpuMicrosPerRequest: median(sameBytesRounds.map((r) => r.cpuMicrosPerRequest)),
                cpuRatioToSameBytesCeiling:
                  Math.round((median(sameBytesRounds.map((r) => r.cpuMicrosPerRequest)) / serviceCpu) * 1000) / 1000,
                sameBytesResponse: {
                  status: captured.status,
                  headers: captured.headers.length,
                  headerBytes: captured.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0),
                  bodyBytes: Buffer.from(captured.bodyBase64, 'base64').length,
                },
              }
            : {}),
          loadAverageBefore: Math.round(loadAverage * 100) / 100,
          // Responses over all rounds (a scenario checks what they wrote against it).
          requests: results.reduce((s, r) => s + r.requests, 0),
          rounds: results.map((r) => ({
            requestsPerSecond: r.requestsPerSecond,
            p50Ms: r.p50Ms,
            p99Ms: r.p99Ms,
            ceiling: r.ceiling,
            ceilingLatency: r.ceilingLatency,
            ceilingCpuMicrosPerRequest: r.ceilingCpuMicrosPerRequest,
            ...(r.sameBytes !== null
              ? {
                  sameBytesCeiling: r.sameBytes.requestsPerSecond,
                  sameBytesCeilingLatency: r.sameBytes.latency,
                  sameBytesCeilingCpuMicrosPerRequest: r.sameBytes.cpuMicrosPerRequest,
                }
              : {}),
            cpuMicrosPerRequest: r.cpuMicrosPerRequest,
            databaseCpuMicrosPerRequest: r.databaseCpuMicrosPerRequest,
          })),
        },
      };
      this.record(measurement);
      return measurement;
    },
    record(measurement) {
      measurement.engine ??= engine;
      measurements.push(measurement);
      const m = measurement;
      const ceiling = m.extra?.ceilingRequestsPerSecond as number | undefined;
      const ceilingTail =
        m.extra?.ceilingP99Ms === undefined
          ? ''
          : `, p50/p99 ${String(m.extra.ceilingP50Ms)}/${String(m.extra.ceilingP99Ms)} ms`;
      const ratio =
        m.ratioToCeiling === null
          ? ''
          : `  ${m.ratioToCeiling.toFixed(3)}× ceiling (${ceiling ?? '?'} req/s${ceilingTail})`;
      const cpu = m.extra?.serviceCpuMicrosPerRequest;
      const cpuRatio = m.extra?.cpuRatioToCeiling as number | undefined;
      const databaseCpu = m.extra?.databaseCpuMicrosPerRequest as number | undefined;
      const problems = m.non2xx + m.errors > 0 ? `  (${m.non2xx} non-2xx, ${m.errors} errors)` : '';
      const sameBytes = m.ratioToSameBytesCeiling;
      const ceilingCpu = m.extra?.ceilingCpuMicrosPerRequest as number | undefined;
      const sameBytesLine =
        sameBytes === undefined || sameBytes === null
          ? ''
          : `\n  ${''.padEnd(56)} ${sameBytes.toFixed(3)}× same-bytes ceiling (${String(m.extra?.sameBytesCeilingRequestsPerSecond)} req/s, ` +
            `p50/p99 ${String(m.extra?.sameBytesCeilingP50Ms)}/${String(m.extra?.sameBytesCeilingP99Ms)} ms); ` +
            `CPU/req: service ${String(cpu)} µs, same-bytes ceiling ${String(m.extra?.sameBytesCeilingCpuMicrosPerRequest)} µs` +
            (ceilingCpu === undefined ? '' : `, ceiling ${String(ceilingCpu)} µs`);
      console.log(
        `  ${m.name.padEnd(56)} ${String(m.requestsPerSecond).padStart(7)} req/s  p50/p99 ${String(m.p50Ms).padStart(6)}/${String(m.p99Ms).padEnd(7)} ms${ratio}${cpu !== undefined ? `  ${cpu} µs CPU/req` : ''}${cpuRatio !== undefined ? ` (${cpuRatio.toFixed(3)}× ceiling's)` : ''}${databaseCpu !== undefined ? ` + ${databaseCpu} µs PostgreSQL` : ''}${problems}${sameBytesLine}`,
      );
    },
  };

  try {
    for (const scenario of scenarios) {
      if (only && !only.includes(scenario.name)) continue;
      current = scenario.name;
      console.log(`\n## ${scenario.name} (${engine})`);
      await scenario.run(ctx);
    }
  } finally {
    await ceilings.stop();
    await service.stop();
    await subscriber.close();
    await main.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const engine of engines) await runEngine(engine);

const report = {
  startedAt: started.toISOString(),
  finishedAt: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAverageAtEnd: os.loadavg(),
  },
  loader,
  connections: CONNECTIONS,
  engines,
  serviceEnv,
  rounds,
  durationSecondsPerRound: duration,
  quick,
  measurements,
};
const dir = path.resolve('bench/results');
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify(report, null, 2));
fs.writeFileSync(path.join(dir, 'latest.json'), JSON.stringify(report, null, 2));
console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
