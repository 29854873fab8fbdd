import { pruneIdempotencyKeys } from '../idempotency/idempotency.js';
import { MINUTE_MS } from '../lib/clock.js';
import type { BackgroundWorker, WorkerContext } from './worker.js';
import { pollingWorker } from './polling-worker.js';

/** Expired idempotency keys only cost space: a look every ten minutes is plenty. */
const MAINTENANCE_INTERVAL_MS = 10 * MINUTE_MS;

/** Housekeeping: forgets idempotency keys past their retention. */
export function maintenanceWorker(ctx: WorkerContext): BackgroundWorker {
  return pollingWorker({
    name: 'maintenance',
    intervalMs: MAINTENANCE_INTERVAL_MS,
    logger: ctx.logger,
    tick: async () => {
      const pruned = await pruneIdempotencyKeys(ctx.database.kysely, ctx.clock);
      if (pruned > 0) ctx.logger.info({ pruned }, 'pruned expired idempotency keys');
      return false;
    },
  });
}
