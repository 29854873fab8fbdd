import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import * as q from './files.queries.js';
import type { FileStore } from './files.storage.js';

/**
 * How old stored bytes must be before the sweep may call them orphans. Bytes are written just
 * before the row that names them commits (an upload, a preview), a matter of milliseconds; an hour
 * leaves any write in progress alone, however slow the machine.
 */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

const BATCH = 200;

/**
 * Deletes stored bytes that no file row names: a crash between writing the bytes and committing
 * their row, a temp file of a write the crash cut short, a row deleted without its bytes. Runs in
 * the files worker at start and every 10 minutes; returns how many keys it deleted.
 */
export async function sweepOrphanedBytes(db: Kysely<DB>, store: FileStore, clock: Clock): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - ORPHAN_GRACE_MS);
  let deleted = 0;
  let batch: string[] = [];
  const flush = async () => {
    const referenced = await q.referencedStorageKeys(db, batch);
    for (const key of batch) {
      if (referenced.has(key)) continue;
      await store.delete(key);
      deleted++;
    }
    batch = [];
  };
  for await (const key of store.keysWrittenBefore(cutoff)) {
    batch.push(key);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  return deleted;
}
