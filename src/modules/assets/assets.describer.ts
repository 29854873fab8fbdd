import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/schema.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { pollingWorker } from '../../workers/polling-worker.js';
import { createFileStore, type FileStore } from '../files/index.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';

/**
 * Writes a short description of an image (alt text), which becomes the asset's `aiDescription`.
 * None is built in: a deployment that has one passes it to `createAssetsModule` (modules/index.ts).
 */
export interface ImageDescriber {
  describe(image: { bytes: Buffer; contentType: string; name: string; purpose: string }): Promise<string | null>;
}

/** The channel that wakes the describer worker after assets are created. */
export const ASSETS_CHANNEL = 'assets';
const MAX_DESCRIPTION_LENGTH = 2000;

/**
 * Describes one batch of assets not yet handled, across tenants (operator side). Each asset is
 * tried once: a describer that fails or returns nothing leaves `aiDescription` null, logged.
 */
export async function describePendingAssets(
  db: Kysely<DB>,
  store: FileStore,
  describer: ImageDescriber,
  clock: Clock,
  logger?: Logger,
  batchSize = 8,
): Promise<number> {
  const assets = await db
    .selectFrom('assets')
    .innerJoin('files', 'files.id', 'assets.file_id')
    .select(['assets.id', 'assets.name', 'assets.purpose', 'files.storage_key', 'files.content_type'])
    .where('assets.described_at', 'is', null)
    .orderBy('assets.id')
    .limit(batchSize)
    .execute();
  for (const asset of assets) {
    let description: string | null = null;
    try {
      const bytes = asset.storage_key === null ? null : await store.get(asset.storage_key);
      if (bytes !== null) {
        description = await describer.describe({
          bytes,
          contentType: asset.content_type ?? 'application/octet-stream',
          name: asset.name,
          purpose: asset.purpose,
        });
      }
    } catch (err) {
      logger?.warn({ err, assetId: asset.id }, 'image description failed');
    }
    const now = isoNow(clock);
    const text = description?.trim().slice(0, MAX_DESCRIPTION_LENGTH) || null;
    await db
      .updateTable('assets')
      .set(text === null ? { described_at: now } : { described_at: now, ai_description: text, updated_at: now })
      .where('id', '=', asset.id)
      .where('described_at', 'is', null)
      .execute();
  }
  return assets.length;
}

export function describerWorker(ctx: WorkerContext, describer: ImageDescriber): BackgroundWorker {
  const store = createFileStore(ctx.config, ctx.database.kysely, ctx.clock);
  return pollingWorker({
    name: 'asset-descriptions',
    channels: [ASSETS_CHANNEL],
    intervalMs: 10_000,
    logger: ctx.logger,
    tick: async () => (await describePendingAssets(ctx.database.kysely, store, describer, ctx.clock, ctx.logger)) === 8,
  });
}
