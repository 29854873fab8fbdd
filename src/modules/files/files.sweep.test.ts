import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../../test/harness.js';
import { makeImage } from '../../../test/factories/files.js';
import { uploadFile } from './files.service.js';
import { DatabaseFileStore, DiskFileStore, type FileStore } from './files.storage.js';
import { ORPHAN_GRACE_MS, sweepOrphanedBytes } from './files.sweep.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;
const diskRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-sweep-'));
afterAll(() => fs.rmSync(diskRoot, { recursive: true, force: true }));

/** Makes every file under the disk store look written at `when` (the sweep reads mtimes). */
function touchAll(root: string, when: Date) {
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) fs.utimesSync(path.join(entry.parentPath, entry.name), when, when);
  }
}

describe.each(['disk', 'database'] as const)('the orphan sweep (%s store)', (kind) => {
  it('deletes old bytes no file names (and temp files a crash left), keeps named and recent ones', async () => {
    const store: FileStore =
      kind === 'disk' ? new DiskFileStore(diskRoot) : new DatabaseFileStore(t.database.kysely, t.clock);
    const { fileId } = await uploadFile(alice.scope, store, t.clock, { filename: 'a.png', bytes: await makeImage() });
    const named = (await t.database.kysely
      .selectFrom('files')
      .select('storage_key')
      .where('id', '=', fileId)
      .executeTakeFirstOrThrow())!.storage_key!;
    // Bytes whose row never committed (the process died in between), and a half-written temp file.
    const orphan = `${alice.tenantId}/file_orphan/0123456789abcdef`;
    await store.put(orphan, Buffer.from('lost'));
    if (kind === 'disk') {
      fs.writeFileSync(path.join(diskRoot, alice.tenantId, 'file_orphan', '0123456789abcdef.tmp-aabbcc'), 'half');
      touchAll(diskRoot, new Date(t.clock.now().getTime() - ORPHAN_GRACE_MS - 60_000));
    }
    t.clock.advance(ORPHAN_GRACE_MS + 60_000);
    // Written just now: maybe an upload whose row is about to commit. Left alone.
    const recent = `${alice.tenantId}/file_recent/fedcba9876543210`;
    await store.put(recent, Buffer.from('in flight'));
    if (kind === 'disk') fs.utimesSync(path.join(diskRoot, ...recent.split('/')), t.clock.now(), t.clock.now());

    expect(await sweepOrphanedBytes(t.database.kysely, store, t.clock)).toBe(kind === 'disk' ? 2 : 1);
    expect(await store.get(named)).not.toBeNull();
    expect(await store.get(orphan)).toBeNull();
    expect(await store.get(recent)).not.toBeNull();
    if (kind === 'disk') {
      expect(fs.readdirSync(path.join(diskRoot, alice.tenantId, 'file_orphan'))).toEqual([]);
    }
    // Nothing left to sweep.
    expect(await sweepOrphanedBytes(t.database.kysely, store, t.clock)).toBe(0);
  });
});
