import type { Logger } from 'pino';
import type { BackgroundWorker, WorkerContext } from '../modules/module.js';
import { modules } from '../modules/index.js';
import { maintenanceWorker } from './maintenance.js';

/** Starts every module's background workers; `notify(channel)` wakes the ones listening to it. */
export class WorkerRunner {
  readonly #workers: BackgroundWorker[];
  readonly #logger: Logger;

  constructor(base: Omit<WorkerContext, 'notify'>) {
    const ctx: WorkerContext = { ...base, notify: (channel) => this.notify(channel) };
    this.#logger = ctx.logger;
    this.#workers = [maintenanceWorker(ctx), ...modules.flatMap((m) => m.workers?.(ctx) ?? [])];
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
