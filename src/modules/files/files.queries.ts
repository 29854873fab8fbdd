import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DB, FilesTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

const FILE_COLUMNS = [
  'files.id',
  'files.tenant_id',
  'files.filename',
  'files.declared_content_type',
  'files.declared_size',
  'files.status',
  'files.upload_expires_at',
  'files.content_type',
  'files.size',
  'files.width',
  'files.height',
  'files.storage_key',
  'files.preview_status',
  'files.preview_key',
] as const;

export type FileRow = Awaited<ReturnType<typeof findFile>> & {};

export async function insertFile(scope: TenantScope, row: Omit<Insertable<FilesTable>, 'tenant_id'>) {
  await scope.insertInto('files', row).execute();
}

export async function findFile(scope: TenantScope, fileId: string) {
  return scope.selectFrom('files').select(FILE_COLUMNS).where('files.id', '=', fileId).executeTakeFirst();
}

/**
 * A file by id alone, for the signed-URL routes: there the URL's signature (which covers the
 * tenant read here) is the authentication, and no API key names a tenant.
 */
export async function findFileForSignedUrl(db: Kysely<DB>, fileId: string) {
  return db.selectFrom('files').select(FILE_COLUMNS).where('files.id', '=', fileId).executeTakeFirst();
}

/** Marks a pending file completed; returns false when it was no longer pending (a concurrent upload won). */
export async function completeFile(scope: TenantScope, fileId: string, changes: Updateable<FilesTable>) {
  const result = await scope
    .updateTable('files')
    .set({ ...changes, status: 'completed' })
    .where('files.id', '=', fileId)
    .where('files.status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Counts one `PUT` to the upload URL of a pending file, unless it has had `max` already; returns
 * whether it was counted. One conditional statement, so concurrent PUTs cannot pass the limit.
 */
export async function countUploadAttempt(scope: TenantScope, fileId: string, max: number) {
  const result = await scope
    .updateTable('files')
    .set((eb) => ({ upload_attempts: eb('files.upload_attempts', '+', 1) }))
    .where('files.id', '=', fileId)
    .where('files.status', '=', 'pending')
    .where('files.upload_attempts', '<', max)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// Operator side (the preview worker): every tenant's files.

export async function filesAwaitingPreview(db: Kysely<DB>, limit: number) {
  return db
    .selectFrom('files')
    .select(['id', 'storage_key'])
    .where('preview_status', '=', 'pending')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function setPreview(
  db: Kysely<DB>,
  fileId: string,
  changes: { preview_status: 'ready' | 'failed'; preview_key: string | null },
) {
  const result = await db
    .updateTable('files')
    .set(changes)
    .where('id', '=', fileId)
    .where('preview_status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Forgets uploads that were never completed, a day after their URL expired (they hold no bytes). */
export async function deleteAbandonedUploads(db: Kysely<DB>, before: string) {
  const result = await db
    .deleteFrom('files')
    .where('status', '=', 'pending')
    .where('upload_expires_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Which of these storage keys a file row still names (as its bytes or its preview). */
export async function referencedStorageKeys(db: Kysely<DB>, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .selectFrom('files')
    .select(['storage_key', 'preview_key'])
    .where((eb) => eb.or([eb('storage_key', 'in', keys), eb('preview_key', 'in', keys)]))
    .execute();
  return new Set(rows.flatMap((r) => [r.storage_key, r.preview_key]).filter((k): k is string => k !== null));
}

/**
 * Marks a completed file purged and forgets its bytes' keys; returns the keys it forgot (none when
 * the file was not completed). Operator side (the assets' purge): the caller deletes the bytes.
 */
export async function markPurged(db: Kysely<DB>, fileId: string): Promise<string[]> {
  const file = await db
    .selectFrom('files')
    .select(['storage_key', 'preview_key'])
    .where('id', '=', fileId)
    .where('status', '=', 'completed')
    .executeTakeFirst();
  if (file === undefined) return [];
  const result = await db
    .updateTable('files')
    .set({ status: 'purged', storage_key: null, preview_key: null, preview_status: null })
    .where('id', '=', fileId)
    .where('status', '=', 'completed')
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return [];
  return [file.storage_key, file.preview_key].filter((key): key is string => key !== null);
}
