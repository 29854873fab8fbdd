import type { Logger } from 'pino';
import type { BackgroundWorker, WorkerContext, WorkerFactory } from './worker.js';

/**
 * Runs the background workers it is given (the composition root, main/server.ts, says which);
 * `notify(channel)` wakes the ones listening to it.
 */
export class WorkerRunner {
  readonly #workers: BackgroundWorker[];
  readonly #logger: Logger;

  constructor(base: Omit<WorkerContext, 'notify'>, factories: WorkerFactory[]) {
    const ctx: WorkerContext = { ...base, notify: (channel) => this.notify(channel) };
    this.#logger = ctx.logger;
    this.#workers = factories.flatMap((make) => make(ctx));
  }

  start(): void {
    for (const worker of this.#workers) {
      worker.start();
      this.#logger.debug({ worker: worker.name }, 'worker started');
    }
  }

  notify = (channel: string): void => {
    for (const worker of this.#workers) if (worker.channels?.includes(channel)) worker.wake();
  };

  async stop(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.stop()));
  }
}
