import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { inspectImage, makePreview, MAX_FILE_BYTES, sniffImageType, type ImageInfo } from './files.images.js';
import * as q from './files.queries.js';
import type { FileCreateBody, FileUploaded } from './files.schemas.js';
import { UPLOAD_URL_TTL_MS, type FileUrlSigner, type UrlPurpose } from './files.signing.js';
import { newPreviewKey, newStorageKey, type FileStore } from './files.storage.js';

export type { FileRow } from './files.queries.js';

/** The channel that wakes the preview worker after an upload completes. */
export const FILES_CHANNEL = 'files';

/**
 * The file a signed URL names, once the URL's signature holds for `purpose` (any tenant: the URL is
 * the credential). A missing or malformed parameter is an invalid signature too (403), not a 422.
 */
export async function fileForSignedUrl(
  db: Kysely<DB>,
  signer: FileUrlSigner,
  purpose: UrlPurpose,
  fileId: string,
  { expires, signature }: { expires?: string; signature?: string },
): Promise<q.FileRow> {
  const file = await q.findFileForSignedUrl(db, fileId);
  if (file === undefined || expires === undefined || !/^\d{1,11}$/.test(expires) || !signature) {
    throw new AppError('invalid_signature', 'The URL is not valid: its signature does not match.');
  }
  signer.verify(purpose, file.tenant_id, file.id, { expires: Number(expires), signature });
  return file;
}

function alreadyCompleted(): AppError {
  return new AppError('upload_already_completed', 'This file was already uploaded; an upload URL works once.');
}

/** How many `PUT`s one upload URL takes, whatever their outcome (each may cost a full decode). */
export const MAX_UPLOAD_ATTEMPTS = 5;

function expired(): AppError {
  return new AppError('url_expired', 'The upload URL has expired; create a new upload with POST /v0/files.');
}

/**
 * Admits one `PUT` to an upload URL, before its body is read: refused when the file is already
 * uploaded (409), the URL expired (403), or it has had MAX_UPLOAD_ATTEMPTS already (410). The
 * count is the one write a refused upload makes: without it a client could have the service
 * decode images on one URL for 15 minutes, outside the API's rate limit.
 */
export async function admitUploadAttempt(scope: TenantScope, clock: Clock, file: q.FileRow): Promise<void> {
  if (file.status === 'completed') throw alreadyCompleted();
  if (file.upload_expires_at <= isoNow(clock)) throw expired();
  if (await q.countUploadAttempt(scope, file.id, MAX_UPLOAD_ATTEMPTS)) return;
  const now = await q.findFile(scope, file.id);
  if (now?.status === 'completed') throw alreadyCompleted();
  throw new AppError(
    'upload_attempts_exhausted',
    `This upload URL has had ${MAX_UPLOAD_ATTEMPTS} attempts, its limit; create a new upload with POST /v0/files.`,
  );
}

/** Step 1 of an upload: records the file as pending; its bytes come to the signed upload URL. */
export async function createUpload(
  scope: TenantScope,
  clock: Clock,
  input: FileCreateBody,
): Promise<{ fileId: string; expiresAt: Date }> {
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + UPLOAD_URL_TTL_MS);
  const fileId = newId('file');
  await q.insertFile(scope, {
    id: fileId,
    filename: input.filename,
    declared_content_type: input.contentType,
    declared_size: input.size,
    status: 'pending',
    upload_expires_at: expiresAt.toISOString(),
    created_at: now.toISOString(),
  });
  return { fileId, expiresAt };
}

/**
 * Step 2: the bytes of a pending file. They are checked completely (size as declared, a whole
 * image of the declared type) before anything is stored; a refused upload leaves no bytes and no
 * completed row, and may be retried on the same URL until it expires. An upload URL works once.
 * A completed upload wakes the preview worker.
 */
export async function receiveUpload(
  scope: TenantScope,
  store: FileStore,
  clock: Clock,
  file: q.FileRow,
  bytes: Buffer,
  inspected?: ImageInfo,
): Promise<FileUploaded> {
  if (file.status === 'completed') throw alreadyCompleted();
  if (file.upload_expires_at <= isoNow(clock)) throw expired();
  if (bytes.length > 0 && bytes.length !== file.declared_size) {
    throw new AppError(
      'file_size_mismatch',
      `The upload has ${bytes.length} bytes but was declared with size ${file.declared_size}.`,
      [{ path: '/body', message: `must be exactly ${file.declared_size} bytes` }],
    );
  }
  const image = inspected ?? (await inspectImage(bytes, file.declared_content_type));

  const key = newStorageKey(scope.tenantId, file.id);
  await store.put(key, bytes);
  let completed = false;
  try {
    completed = await q.completeFile(scope, file.id, {
      content_type: image.contentType,
      size: bytes.length,
      width: image.width,
      height: image.height,
      storage_key: key,
      preview_status: 'pending',
      completed_at: isoNow(clock),
    });
  } finally {
    if (!completed) await store.delete(key);
  }
  // A concurrent upload to the same URL completed the file first: its bytes stay, ours are gone.
  if (!completed) throw alreadyCompleted();
  scope.afterCommit(FILES_CHANNEL);
  return {
    fileId: file.id,
    contentType: image.contentType,
    size: bytes.length,
    width: image.width,
    height: image.height,
  };
}

/** Both steps at once, for the operator CLI and the demo: the same checks as an API upload. */
export async function uploadFile(
  scope: TenantScope,
  store: FileStore,
  clock: Clock,
  input: { filename: string; bytes: Buffer },
): Promise<FileUploaded> {
  if (input.bytes.length > MAX_FILE_BYTES) {
    throw new AppError('payload_too_large', `The file is larger than the limit of ${MAX_FILE_BYTES} bytes (10 MiB).`);
  }
  const image = await inspectImage(input.bytes, sniffImageType(input.bytes) ?? '');
  const { fileId } = await createUpload(scope, clock, {
    filename: input.filename,
    contentType: image.contentType,
    size: input.bytes.length,
  });
  const file = await q.findFile(scope, fileId);
  return receiveUpload(scope, store, clock, file!, input.bytes, image);
}

/**
 * Makes the preview of one completed file. Several nodes may race on the same file: each writes
 * its own key, the first to record it wins and the others delete theirs.
 */
async function generatePreview(
  db: Kysely<DB>,
  store: FileStore,
  file: { id: string; storage_key: string | null },
  logger?: Logger,
): Promise<boolean> {
  const original = file.storage_key === null ? null : await store.get(file.storage_key);
  let preview: Buffer | null = null;
  try {
    if (original !== null) preview = await makePreview(original);
  } catch (err) {
    logger?.warn({ err, fileId: file.id }, 'preview generation failed');
  }
  if (preview === null) return q.setPreview(db, file.id, { preview_status: 'failed', preview_key: null });
  const key = newPreviewKey(file.storage_key!);
  await store.put(key, preview);
  const recorded = await q.setPreview(db, file.id, { preview_status: 'ready', preview_key: key });
  if (!recorded) await store.delete(key);
  return recorded;
}

/** One batch of the preview worker; returns how many files it handled. */
export async function processPendingPreviews(
  db: Kysely<DB>,
  store: FileStore,
  logger?: Logger,
  batchSize = 8,
): Promise<number> {
  const files = await q.filesAwaitingPreview(db, batchSize);
  for (const file of files) await generatePreview(db, store, file, logger);
  return files.length;
}

/** Pending uploads are forgotten a day after their URL expired. */
const ABANDONED_UPLOAD_RETENTION_MS = 24 * 60 * 60 * 1000;

export async function pruneAbandonedUploads(db: Kysely<DB>, clock: Clock): Promise<number> {
  return q.deleteAbandonedUploads(db, new Date(clock.now().getTime() - ABANDONED_UPLOAD_RETENTION_MS).toISOString());
}

/** A completed file of the tenant (the only kind an asset may refer to), or undefined. */
export async function findCompletedFile(scope: TenantScope, fileId: string) {
  const file = await q.findFile(scope, fileId);
  return file?.status === 'completed' ? file : undefined;
}

/** Makes the preview of one file of the tenant now (the demo; tests), instead of waiting for the worker. */
export async function generatePreviewNow(scope: TenantScope, store: FileStore, fileId: string): Promise<boolean> {
  const file = await q.findFile(scope, fileId);
  if (file?.preview_status !== 'pending') return false;
  return generatePreview(scope.unscopedDb(), store, file);
}

/** The bytes and type of a completed file of the tenant (pages show images with it); else null. */
export async function readCompletedFile(
  scope: TenantScope,
  store: FileStore,
  fileId: string,
): Promise<{ bytes: Buffer; contentType: string } | null> {
  const file = await findCompletedFile(scope, fileId);
  if (file === undefined || file.storage_key === null || file.content_type === null) return null;
  const bytes = await store.get(file.storage_key);
  return bytes === null ? null : { bytes, contentType: file.content_type };
}

/**
 * Removes a completed file's bytes and preview for good (the file becomes `purged`: it backs no new
 * asset and serves nothing). The row changes first; bytes a crash leaves behind are the orphan
 * sweep's (files.sweep.ts). Operator side, for the purge of deleted assets.
 */
export async function purgeFileBytes(db: Kysely<DB>, store: FileStore, fileId: string): Promise<boolean> {
  const keys = await q.markPurged(db, fileId);
  for (const key of keys) await store.delete(key);
  return keys.length > 0;
}
