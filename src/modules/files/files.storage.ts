import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { DB } from '../../db/schema.js';
import { fsyncDirectoryAsync } from '../../lib/fsync.js';
import { isoNow, type Clock } from '../../lib/clock.js';

/**
 * Where file bytes live. Keys are opaque (`<tenantId>/<fileId>/<random>`), written once and never
 * overwritten by another upload; access control is the `files` row's business, not the store's.
 */
export interface FileStore {
  readonly kind: 'disk' | 'database';
  put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes, or null when nothing is stored under the key. */
  get(key: string): Promise<Buffer | null>;
  /**
   * The bytes as a stream and their length, or null when nothing is stored under the key:
   * downloads are served without holding whole files in memory.
   */
  open(key: string): Promise<StoredStream | null>;
  /** Removes the bytes; a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Every key written before `cutoff`, including leftovers of writes a crash cut short: the input
   * of the orphan sweep (`files.sweep.ts`).
   */
  keysWrittenBefore(cutoff: Date): AsyncIterable<string>;
}

export interface StoredStream {
  stream: Readable;
  size: number;
}

/** How much of a blob the database store reads per statement when streaming it. */
export const BLOB_CHUNK_BYTES = 256 * 1024;

const KEY = /^[a-z0-9_]+(\/[a-z0-9_.-]+)*$/;

function checkKey(key: string): void {
  if (!KEY.test(key) || key.includes('..')) throw new Error(`invalid storage key: ${key}`);
}

/**
 * One file per key under a folder of the data directory. Writes are atomic and durable: a temp
 * file, fsynced, renamed onto the key, then the directory fsynced, so that once `put` returns (and
 * the row naming the key commits) the bytes survive a power loss under their name. A temp file a
 * crash left behind is a key no row names; the orphan sweep removes it.
 */
export class DiskFileStore implements FileStore {
  readonly kind = 'disk';
  constructor(readonly root: string) {}

  #path(key: string): string {
    checkKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const target = this.#path(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
    const handle = await fs.open(temp, 'wx');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(temp, target);
    } catch (err) {
      await fs.rm(temp, { force: true });
      throw err;
    }
    await fsyncDirectoryAsync(path.dirname(target));
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.#path(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async open(key: string): Promise<StoredStream | null> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.#path(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      return { stream: handle.createReadStream({ autoClose: true }), size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.#path(key), { force: true });
  }

  async *keysWrittenBefore(cutoff: Date): AsyncIterable<string> {
    let entries;
    try {
      entries = await fs.readdir(this.root, { recursive: true, withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const stat = await fs.stat(file).catch(() => null);
      if (stat === null || stat.mtime >= cutoff) continue;
      const key = path.relative(this.root, file).split(path.sep).join('/');
      if (KEY.test(key) && !key.includes('..')) yield key;
    }
  }
}

/** Blobs in the `file_blobs` table: shared by every node of a PostgreSQL deployment. */
export class DatabaseFileStore implements FileStore {
  readonly kind = 'database';
  constructor(
    readonly db: Kysely<DB>,
    readonly clock: Clock,
  ) {}

  async put(key: string, bytes: Buffer): Promise<void> {
    checkKey(key);
    await this.db
      .insertInto('file_blobs')
      .values({ key, bytes, created_at: isoNow(this.clock) })
      .onConflict((oc) => oc.column('key').doUpdateSet({ bytes }))
      .execute();
  }

  async get(key: string): Promise<Buffer | null> {
    const row = await this.db.selectFrom('file_blobs').select('bytes').where('key', '=', key).executeTakeFirst();
    return row ? Buffer.from(row.bytes) : null;
  }

  /**
   * Reads the blob BLOB_CHUNK_BYTES at a time (`substr` works on SQLite blobs and PostgreSQL
   * bytea alike), one statement per chunk as the client consumes them. Keys are written once, so
   * the chunks belong to one version of the bytes; a blob deleted meanwhile ends the stream with
   * an error.
   */
  async open(key: string): Promise<StoredStream | null> {
    const row = await this.db
      .selectFrom('file_blobs')
      .select(sql<number>`length(bytes)`.as('size'))
      .where('key', '=', key)
      .executeTakeFirst();
    if (row === undefined) return null;
    const size = Number(row.size);
    let offset = 0;
    const stream = new Readable({
      read: () => {
        if (offset >= size) {
          stream.push(null);
          return;
        }
        this.db
          .selectFrom('file_blobs')
          .select(sql<Buffer>`substr(bytes, ${offset + 1}, ${BLOB_CHUNK_BYTES})`.as('chunk'))
          .where('key', '=', key)
          .executeTakeFirst()
          .then((chunk) => {
            if (chunk === undefined) throw new Error(`file blob ${key} disappeared while it was read`);
            const bytes = Buffer.from(chunk.chunk);
            offset += bytes.length;
            stream.push(bytes);
          })
          .catch((err: unknown) => stream.destroy(err as Error));
      },
    });
    return { stream, size };
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('file_blobs').where('key', '=', key).execute();
  }

  async *keysWrittenBefore(cutoff: Date): AsyncIterable<string> {
    let after = '';
    for (;;) {
      const rows = await this.db
        .selectFrom('file_blobs')
        .select('key')
        .where('created_at', '<', cutoff.toISOString())
        .where('key', '>', after)
        .orderBy('key')
        .limit(500)
        .execute();
      for (const row of rows) yield row.key;
      if (rows.length < 500) return;
      after = rows.at(-1)!.key;
    }
  }
}

/** The store selected by FILE_STORAGE (docs/api.md, Files): a folder under DATA_DIR, or the database. */
export function createFileStore(config: Config, db: Kysely<DB>, clock: Clock): FileStore {
  return config.fileStorage === 'database'
    ? new DatabaseFileStore(db, clock)
    : new DiskFileStore(path.join(config.dataDir, 'files'));
}

/** A fresh key for the bytes of one upload attempt of a file. */
export function newStorageKey(tenantId: string, fileId: string): string {
  return `${tenantId}/${fileId}/${randomBytes(8).toString('hex')}`;
}

/** A fresh key for a preview of the bytes stored under `originalKey`. */
export function newPreviewKey(originalKey: string): string {
  return `${originalKey}.preview-${randomBytes(4).toString('hex')}.webp`;
}
