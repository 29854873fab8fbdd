import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import { FILES_CHANNEL, processPendingPreviews, pruneAbandonedUploads } from './files.service.js';
import { createFileStore } from './files.storage.js';
import { sweepOrphanedBytes } from './files.sweep.js';

const BATCH = 8;
const PRUNE_EVERY_MS = 10 * 60 * 1000;

/**
 * Makes the previews of completed uploads (woken by each upload, and polling every 5 s for
 * uploads taken by other nodes), and at start and every 10 minutes forgets abandoned pending
 * uploads and deletes stored bytes that no file names (`files.sweep.ts`).
 */
export function filesWorkers(ctx: WorkerContext): BackgroundWorker[] {
  const store = createFileStore(ctx.config, ctx.database.kysely, ctx.clock);
  let lastPrune = Number.NEGATIVE_INFINITY;
  return [
    pollingWorker({
      name: 'file-previews',
      channels: [FILES_CHANNEL],
      intervalMs: 5000,
      logger: ctx.logger,
      tick: async () => {
        const now = ctx.clock.now().getTime();
        if (now - lastPrune >= PRUNE_EVERY_MS) {
          lastPrune = now;
          const pruned = await pruneAbandonedUploads(ctx.database.kysely, ctx.clock);
          if (pruned > 0) ctx.logger.info({ pruned }, 'forgot abandoned uploads');
          const swept = await sweepOrphanedBytes(ctx.database.kysely, store, ctx.clock);
          if (swept > 0) ctx.logger.info({ swept }, 'deleted stored bytes no file names');
        }
        return (await processPendingPreviews(ctx.database.kysely, store, ctx.logger, BATCH)) === BATCH;
      },
    }),
  ];
}
