import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { HOUR_MS, MINUTE_MS, type Clock } from '../../lib/clock.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import { createFileStore, purgeFileBytes, type FileStore } from '../files/index.js';
import * as q from './assets.queries.js';

const BATCH = 50;

/**
 * Removes the bytes of files whose assets are all deleted, the last one more than `graceMs` ago
 * (docs/api.md, Assets: deleting one), across tenants; returns how many files it purged. A file
 * still used by an asset that is not deleted (or was deleted within the grace period) is kept.
 */
export async function purgeDeletedAssetFiles(
  db: Kysely<DB>,
  store: FileStore,
  clock: Clock,
  graceMs: number,
): Promise<number> {
  const before = new Date(clock.now().getTime() - graceMs).toISOString();
  let purged = 0;
  for (;;) {
    const fileIds = await q.filesOfDeletedAssets(db, before, BATCH);
    for (const fileId of fileIds) if (await purgeFileBytes(db, store, fileId)) purged++;
    if (fileIds.length < BATCH) return purged;
  }
}

/** Looks for bytes to purge at start and every 10 minutes: the grace period is counted in hours. */
export function assetPurgeWorker(ctx: WorkerContext): BackgroundWorker {
  const store = createFileStore(ctx.config, ctx.database.kysely, ctx.clock);
  const graceMs = ctx.config.assetBytesGraceHours * HOUR_MS;
  return pollingWorker({
    name: 'asset-purge',
    intervalMs: 10 * MINUTE_MS,
    logger: ctx.logger,
    tick: async () => {
      const purged = await purgeDeletedAssetFiles(ctx.database.kysely, store, ctx.clock, graceMs);
      if (purged > 0) ctx.logger.info({ purged }, 'removed the bytes of deleted assets');
      return false;
    },
  });
}
