import type { Logger } from 'pino';
import { pollingWorker } from './polling-worker.js';
import type { TenantSlots } from './tenant-slots.js';
import type { BackgroundWorker } from './worker.js';

/**
 * A background worker that keeps up to `slots.concurrency` units of work in flight (webhook
 * deliveries, leased jobs): each tick claims as many as there are free slots (within each
 * tenant's share: `claim` passes `slots` to FairClaim) and starts them without waiting for them.
 * It ticks again at once while it finds work and has room; out of room, it waits for
 * `wakeIfSaturated()`, called when work has finished (by default as soon as a slot frees). It
 * also wakes on `channels` and polls every `pollMs` (retries coming due, other processes' work).
 */
export function slottedWorker<T>(options: {
  name: string;
  channels: string[];
  pollMs: number;
  logger: Logger;
  slots: TenantSlots;
  claim: (limit: number) => Promise<T[]>;
  tenantOf: (unit: T) => string;
  /** Does the unit of work; its slot is held until this settles. Handles its own failures. */
  start: (unit: T) => Promise<void>;
  /** false: the caller wakes the worker itself (e.g. once finished work is recorded). */
  wakeWhenFreed?: boolean;
  /** After the last unit in flight has finished, when the worker stops. */
  onStop?: () => Promise<void>;
}): BackgroundWorker & { wakeIfSaturated(): void } {
  const { slots } = options;
  const inFlight = new Set<Promise<void>>();
  let saturated = false;
  const poller = pollingWorker({
    name: options.name,
    channels: options.channels,
    intervalMs: options.pollMs,
    logger: options.logger,
    tick: async () => {
      const units = await options.claim(slots.free);
      for (const unit of units) {
        const tenant = options.tenantOf(unit);
        slots.take(tenant);
        const running = options
          .start(unit)
          .catch((err: unknown) => options.logger.error({ err, worker: options.name }, 'work in flight failed'))
          .finally(() => {
            slots.release(tenant);
            inFlight.delete(running);
            if (options.wakeWhenFreed !== false) wakeIfSaturated();
          });
        inFlight.add(running);
      }
      saturated = slots.saturated;
      return units.length > 0 && !saturated;
    },
  });
  const wakeIfSaturated = () => {
    if (saturated) poller.wake();
  };
  return {
    name: options.name,
    channels: options.channels,
    start: () => poller.start(),
    wake: () => poller.wake(),
    wakeIfSaturated,
    stop: async () => {
      await poller.stop();
      await Promise.all([...inFlight]);
      await options.onStop?.();
    },
  };
}
