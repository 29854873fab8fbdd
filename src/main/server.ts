import { buildApp } from '../app.js';
import { ConfigError, parseConfig } from '../config.js';
import { connectDatabase, sqliteFileIn } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { createLogger } from '../lib/logger.js';
import { systemClock } from '../lib/clock.js';
import { modules } from '../modules/index.js';
import { maintenanceWorker } from '../workers/maintenance.js';
import { WorkerRunner } from '../workers/runner.js';

/** The service process: config from the environment, migrate, serve, run workers, drain on SIGTERM. */
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
  const database = connectDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileIn(config.dataDir) });
  const applied = await migrateToLatest(database);
  logger.info({ database: database.description, migrationsApplied: applied }, 'database ready');

  const workers = new WorkerRunner({ database, config, clock: systemClock, logger }, [
    (ctx) => [maintenanceWorker(ctx)],
    ...modules.flatMap((m) => (m.workers ? [m.workers] : [])),
  ]);
  const app = await buildApp({ config, database, logger, clock: systemClock, notify: workers.notify });
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

main().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
