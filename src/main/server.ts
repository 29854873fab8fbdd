// First: it sets V8 flags before the rest of the service allocates anything.
import './heap-tuning.js';
import cluster from 'node:cluster';
import { buildApp } from '../app.js';
import { ConfigError, parseConfig } from '../config.js';
import { connectDatabase, connectionOptionsOf } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { createLogger } from '../lib/logger.js';
import { processMetrics, snapshotOf, type MetricsSnapshot } from '../metrics/metrics.js';
import { systemClock } from '../lib/clock.js';
import { resealWithKeyOf } from '../modules/webhooks/index.js';
import { WorkerRunner } from '../workers/runner.js';
import { CrossProcessWakeups } from '../workers/wakeups.js';
import { BackgroundThread, backgroundWorkers } from './background.js';
import { answerClusterMetrics, clusterWorkerMetrics } from './cluster-metrics.js';
import { wireEventFanOut } from './wiring.js';

/**
 * The service process: config from the environment, migrate, serve, run workers, drain on SIGTERM.
 * With WEB_CONCURRENCY=N (PostgreSQL) this process is the primary: it migrates once, then runs N
 * copies of itself (node:cluster) that share the port, and restarts one that dies.
 */
async function main() {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  wireEventFanOut();
  const database = connectDatabase(connectionOptionsOf(config));
  if (cluster.isPrimary) {
    const applied = await migrateToLatest(database, { resealWebhookSecret: resealWithKeyOf(config) });
    logger.info({ database: database.description, migrationsApplied: applied }, 'database ready');
    if (config.webConcurrency > 1) {
      await database.close();
      return runPrimary(config.webConcurrency, config.shutdownGraceMs, logger);
    }
  }

  // The background workers run in this thread (and take wake-ups from other processes here), or
  // on a thread of their own that does both itself (WORKERS_THREAD, the default on SQLite).
  const threaded = config.runWorkers && config.workersThread;
  const wakeups = new CrossProcessWakeups(database, logger);
  const workers = threaded
    ? new BackgroundThread(logger, (channel) => database.wakeups.send(channel))
    : new WorkerRunner({ database, config, clock: systemClock, logger }, backgroundWorkers, {
        publish: wakeups.publish,
      });
  database.wakeups.connect(workers.notify);
  // What a scrape adds up: this process (its app, its workers' thread) or, under WEB_CONCURRENCY, every process.
  const local = async (): Promise<MetricsSnapshot[]> => {
    const own = await snapshotOf(app.ctx.metrics, processMetrics);
    const thread = workers instanceof BackgroundThread ? await workers.metrics() : null;
    return thread === null ? [own] : [own, thread];
  };
  const everyProcess = cluster.isWorker ? clusterWorkerMetrics(local) : local;
  const app = await buildApp({ config, database, logger, clock: systemClock, metricsFrom: () => everyProcess() });
  if (workers instanceof WorkerRunner) await wakeups.start(workers.wake);
  await app.listen({ port: config.port, host: config.host });
  if (config.runWorkers) workers.start();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    const force = setTimeout(() => {
      logger.error('shutdown grace period over; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    try {
      await app.close(); // stops accepting, waits for in-flight requests
      await workers.stop(); // finishes the unit of work in hand
      await wakeups.stop();
      await database.close();
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** The primary of WEB_CONCURRENCY > 1: forks the server processes, replaces dead ones, drains them on SIGTERM. */
function runPrimary(count: number, graceMs: number, logger: ReturnType<typeof createLogger>) {
  let stopping = false;
  const fork = () =>
    cluster.fork().on('exit', (code, signal) => {
      if (stopping) return;
      logger.error({ code, signal }, 'a server process died; starting another');
      setTimeout(fork, 1000).unref();
    });
  answerClusterMetrics();
  for (let i = 0; i < count; i++) fork();
  logger.info({ processes: count }, 'server processes started (WEB_CONCURRENCY)');

  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining the server processes');
    // Each process drains its own requests and workers within SHUTDOWN_GRACE_MS, then exits.
    setTimeout(() => process.exit(1), graceMs + 5000).unref();
    const alive = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined && !w.isDead());
    let left = alive.length;
    if (left === 0) process.exit(0);
    for (const worker of alive) {
      worker!.once('exit', () => {
        if (--left === 0) process.exit(0);
      });
      worker!.process.kill(signal);
    }
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
