import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { MetricsSnapshot } from '../metrics/metrics.js';
import { modules } from '../modules/index.js';
import { maintenanceWorker } from '../workers/maintenance.js';
import type { WorkerFactory } from '../workers/worker.js';

/** Every background worker of the service: housekeeping, then each module's. */
export const backgroundWorkers: WorkerFactory[] = [
  (ctx) => [maintenanceWorker(ctx)],
  ...modules.flatMap((m) => (m.workers ? [m.workers] : [])),
];

/** What the server thread and the workers' thread say to each other. */
export type ThreadMessage = { type: 'wake'; channel: string } | { type: 'stop' } | { type: 'metrics'; id: number };
/** What the workers' thread tells the server thread: a channel one of its transactions committed. */
export type CommittedMessage = { type: 'committed'; channel: string };
/** The workers' thread's metrics, asked for by a scrape of the server thread. */
export type MetricsMessage = { type: 'metrics'; id: number; snapshot: MetricsSnapshot };

/** How long a scrape waits for the workers' thread before answering without its metrics. */
const METRICS_WAIT_MS = 2000;

/**
 * The background workers on a thread of their own (WORKERS_THREAD), as the server process sees
 * them: the same `notify`/`stop` as an in-process WorkerRunner. better-sqlite3 is synchronous, so
 * in-process a worker's statements and each commit's fsync hold the event loop that answers
 * requests; on their own thread, with their own connection, they only take SQLite's write lock
 * (WAL lets reads go on beside it). A thread that dies is replaced after a second.
 */
export class BackgroundThread {
  readonly #logger: Logger;
  #worker: Worker | null = null;
  #stopping = false;
  readonly #metricsAsked = new Map<number, (snapshot: MetricsSnapshot | null) => void>();
  #metricsCount = 0;
  readonly #committed: (channel: string) => void;
  /** The channel the thread just reported (not sent back to it). */
  #echo: string | null = null;

  /**
   * `committed(channel)`: a transaction of the thread committed a wake-up (e.g. a version it
   * published): the server thread's own listeners hear it (its page cache), as if committed here.
   */
  constructor(logger: Logger, committed: (channel: string) => void = () => {}) {
    this.#logger = logger;
    this.#committed = committed;
  }

  start(): void {
    const worker = spawnThread();
    worker.on('error', (err) => this.#logger.error({ err }, 'the background workers thread failed'));
    worker.on('message', (message: CommittedMessage | MetricsMessage) => {
      if (message.type === 'metrics') {
        this.#metricsAsked.get(message.id)?.(message.snapshot);
        return;
      }
      if (message.type !== 'committed') return;
      this.#echo = message.channel;
      try {
        this.#committed(message.channel);
      } finally {
        this.#echo = null;
      }
    });
    worker.on('exit', (code) => {
      if (this.#worker === worker) this.#worker = null;
      if (this.#stopping) return;
      this.#logger.error({ code }, 'the background workers thread stopped; starting another');
      setTimeout(() => {
        if (!this.#stopping) this.start();
      }, 1000).unref();
    });
    this.#worker = worker;
  }

  /** Work was queued on `channel` (a request committed it): wake the thread's workers. */
  notify = (channel: string): void => {
    if (channel === this.#echo) return;
    this.#worker?.postMessage({ type: 'wake', channel } satisfies ThreadMessage);
  };

  /** The thread's metrics (jobs, deliveries, provider calls), or null when it does not answer in time. */
  metrics(): Promise<MetricsSnapshot | null> {
    const worker = this.#worker;
    if (worker === null) return Promise.resolve(null);
    const id = this.#metricsCount++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => answer(null), METRICS_WAIT_MS);
      const answer = (snapshot: MetricsSnapshot | null) => {
        clearTimeout(timer);
        this.#metricsAsked.delete(id);
        resolve(snapshot);
      };
      this.#metricsAsked.set(id, answer);
      worker.postMessage({ type: 'metrics', id } satisfies ThreadMessage);
    });
  }

  /** Lets the workers finish the unit of work in hand, then ends the thread. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const worker = this.#worker;
    if (worker === null) return;
    await new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.postMessage({ type: 'stop' } satisfies ThreadMessage);
    });
  }
}

/**
 * The thread's entry point sits next to this file: worker-thread.js when built. Under tsx (tests,
 * `npm run dev`) it is worker-thread.ts, and Node 20 does not apply the `--import tsx` loader to
 * worker threads, so the thread registers tsx itself before importing it.
 */
function spawnThread(): Worker {
  const extension = path.extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./worker-thread${extension}`, import.meta.url);
  if (extension !== '.ts') return new Worker(entry);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true });
}
