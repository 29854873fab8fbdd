import { pruneIdempotencyKeys } from '../idempotency/idempotency.js';
import type { BackgroundWorker, WorkerContext } from './worker.js';
import { pollingWorker } from './polling-worker.js';

/** Housekeeping: forgets idempotency keys past their retention. */
export function maintenanceWorker(ctx: WorkerContext): BackgroundWorker {
  return pollingWorker({
    name: 'maintenance',
    intervalMs: 10 * 60 * 1000,
    logger: ctx.logger,
    tick: async () => {
      const pruned = await pruneIdempotencyKeys(ctx.database.kysely, ctx.clock);
      if (pruned > 0) ctx.logger.info({ pruned }, 'pruned expired idempotency keys');
      return false;
    },
  });
}
