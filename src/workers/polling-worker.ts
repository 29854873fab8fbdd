import type { Logger } from 'pino';
import { isContention } from '../db/errors.js';
import type { BackgroundWorker } from './worker.js';

/**
 * A worker that runs `tick` whenever woken and at least every `intervalMs`; `tick` returns true
 * when it did work and should run again at once (a batch may leave more behind). Errors are
 * logged and the loop goes on: a failing unit of work must never stop the queue. A tick the
 * database turned away because another writer held it (isContention) is only a warning: the
 * next tick does the same work.
 */
export function pollingWorker(options: {
  name: string;
  channels?: string[];
  intervalMs: number;
  logger: Logger;
  tick: () => Promise<boolean>;
}): BackgroundWorker {
  let running = false;
  let stopped = true;
  let timer: NodeJS.Timeout | null = null;
  let wakeRequested = false;
  let current: Promise<void> = Promise.resolve();

  const schedule = (delay: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(run, delay);
    timer.unref?.();
  };

  const run = () => {
    if (stopped || running) {
      wakeRequested = true;
      return;
    }
    running = true;
    wakeRequested = false;
    current = (async () => {
      let more = false;
      try {
        more = await options.tick();
      } catch (err) {
        if (isContention(err))
          options.logger.warn(
            { err, worker: options.name },
            'worker tick put off: the database is busy with another writer',
          );
        else options.logger.error({ err, worker: options.name }, 'worker tick failed');
      } finally {
        running = false;
      }
      schedule(more || wakeRequested ? 0 : options.intervalMs);
    })();
  };

  return {
    name: options.name,
    channels: options.channels,
    start() {
      stopped = false;
      schedule(0);
    },
    wake() {
      if (!stopped) schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
