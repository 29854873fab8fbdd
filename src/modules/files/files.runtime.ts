import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../http/context.js';
import { limitImageDecodes } from './files.images.js';
import { FileUrlSigner, signedUrl } from './files.signing.js';
import { createFileStore, type FileStore } from './files.storage.js';

/** What every route that touches files shares: the store and the URL signer, made once per app. */
export interface FileRuntime {
  store: FileStore;
  signer: FileUrlSigner;
  /** The origin for URLs in a response: PUBLIC_BASE_URL, or the request's own. */
  baseUrl(request: FastifyRequest): string;
  uploadUrl(baseUrl: string, tenantId: string, fileId: string, expiresAt: Date): string;
  downloadUrl(baseUrl: string, tenantId: string, fileId: string): string;
  previewUrl(baseUrl: string, tenantId: string, fileId: string): string;
}

const runtimes = new WeakMap<AppContext, Promise<FileRuntime>>();

export function fileRuntime(ctx: AppContext): Promise<FileRuntime> {
  let runtime = runtimes.get(ctx);
  if (runtime === undefined) {
    runtime = makeRuntime(ctx);
    runtimes.set(ctx, runtime);
  }
  return runtime;
}

async function makeRuntime(ctx: AppContext): Promise<FileRuntime> {
  const signer = await FileUrlSigner.load(ctx.database.kysely, ctx.clock, ctx.config.secretKeys);
  limitImageDecodes(ctx.config.fileDecodeConcurrency);
  const fixedBase = ctx.config.publicBaseUrl;
  return {
    store: createFileStore(ctx.config, ctx.database.kysely, ctx.clock),
    signer,
    baseUrl: (request) => fixedBase ?? `${request.protocol}://${request.host}`,
    uploadUrl: (base, tenantId, fileId, expiresAt) =>
      signedUrl(base, `/files/${fileId}`, signer.sign('upload', tenantId, fileId, expiresAt)),
    downloadUrl: (base, tenantId, fileId) =>
      signedUrl(base, `/files/${fileId}`, signer.sign('download', tenantId, fileId, signer.downloadExpiry())),
    previewUrl: (base, tenantId, fileId) =>
      signedUrl(base, `/files/${fileId}/preview`, signer.sign('preview', tenantId, fileId, signer.downloadExpiry())),
  };
}
