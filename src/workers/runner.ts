import type { Logger } from 'pino';
import type { BackgroundWorker, WorkerContext, WorkerFactory } from './worker.js';

/**
 * Runs the background workers it is given (the composition root, main/server.ts, says which);
 * `notify(channel)` wakes the ones listening to it. The composition root connects the database's
 * wake-up sink to `notify`, so every commit that queued work wakes its worker.
 */
export class WorkerRunner {
  readonly #workers: BackgroundWorker[];
  readonly #logger: Logger;

  readonly #publish: (channel: string) => void;

  /** `publish` also tells other processes (see wakeups.ts) when a worker or request queues work. */
  constructor(ctx: WorkerContext, factories: WorkerFactory[], options: { publish?: (channel: string) => void } = {}) {
    this.#publish = options.publish ?? (() => {});
    this.#logger = ctx.logger;
    this.#workers = factories.flatMap((make) => make(ctx));
  }

  start(): void {
    for (const worker of this.#workers) {
      worker.start();
      this.#logger.debug({ worker: worker.name }, 'worker started');
    }
  }

  /** Work was queued on `channel` here: wake this process's workers and tell the others. */
  notify = (channel: string): void => {
    this.wake(channel);
    this.#publish(channel);
  };

  /** Wakes this process's workers listening on `channel`. */
  wake = (channel: string): void => {
    for (const worker of this.#workers) if (worker.channels?.includes(channel)) worker.wake();
  };

  async stop(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.stop()));
  }
}
