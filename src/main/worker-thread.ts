import { parentPort } from 'node:worker_threads';
import { parseConfig } from '../config.js';
import { connectDatabase, connectionOptionsOf } from '../db/connect.js';
import { systemClock } from '../lib/clock.js';
import { createLogger } from '../lib/logger.js';
import { processMetrics, snapshotOf } from '../metrics/metrics.js';
import { WorkerRunner } from '../workers/runner.js';
import { CrossProcessWakeups } from '../workers/wakeups.js';
import { backgroundWorkers, type CommittedMessage, type MetricsMessage, type ThreadMessage } from './background.js';
import { wireEventFanOut } from './wiring.js';

/**
 * The background workers' thread (see BackgroundThread): its own database connection, its own
 * WorkerRunner, woken by the server thread's messages and, on PostgreSQL, by other processes.
 */
async function run(port: NonNullable<typeof parentPort>) {
  const config = parseConfig(process.env);
  const logger = createLogger(config.logLevel).child({ thread: 'workers' });
  wireEventFanOut();
  const database = connectDatabase(connectionOptionsOf(config));
  const wakeups = new CrossProcessWakeups(database, logger);
  const runner = new WorkerRunner({ database, config, clock: systemClock, logger }, backgroundWorkers, {
    publish: wakeups.publish,
  });
  database.wakeups.connect(runner.notify);
  // The server thread hears what this thread committed too (its page cache: a version published here).
  database.wakeups.connect((channel) => port.postMessage({ type: 'committed', channel } satisfies CommittedMessage));
  await wakeups.start(runner.wake);

  port.on('message', (message: ThreadMessage) => {
    if (message.type === 'wake') runner.notify(message.channel);
    else if (message.type === 'stop') void stop();
    else if (message.type === 'metrics') {
      void snapshotOf(processMetrics).then((snapshot) =>
        port.postMessage({ type: 'metrics', id: message.id, snapshot } satisfies MetricsMessage),
      );
    }
  });
  const stop = async () => {
    await runner.stop();
    await wakeups.stop();
    await database.close();
    port.close();
  };
  runner.start();
  logger.debug('background workers thread started');
}

if (parentPort === null) throw new Error('worker-thread.ts runs as a worker thread of the server');
await run(parentPort);
