import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound } from '../../http/errors.js';
import { documentRoute } from '../../http/openapi.js';
import { sendProblem } from '../../http/plugins/problem.js';
import { IMAGE_TYPES, MAX_FILE_BYTES, PREVIEW_TYPE } from './files.images.js';
import { FILES_TAG } from './files.routes.js';
import { fileRuntime } from './files.runtime.js';
import { FileParams } from './files.schemas.js';
import { admitUploadAttempt, fileForSignedUrl, receiveUpload, type FileRow } from './files.service.js';
import type { UrlPurpose } from './files.signing.js';

/**
 * The query parameters of signed URLs. A missing or malformed one is an invalid signature (403,
 * checked in `onRequest`, before this schema), not a 422.
 */
const SignedQuery = Type.Object({
  expires: Type.String({ description: 'Expiry, Unix seconds (covered by the signature).' }),
  signature: Type.String({ description: 'HMAC-SHA256, base64url.' }),
});

/** Raw bytes in the document (request and response bodies that are not JSON). */
const binary = (types: readonly string[], description: string) => ({
  description,
  content: Object.fromEntries(types.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
});

const problems = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, Type.Ref('Problem')]));

declare module 'fastify' {
  interface FastifyRequest {
    /** The file a signed URL was verified for (files public routes only). */
    signedFile: FileRow;
  }
}

const BYTES_TYPES = [...IMAGE_TYPES, 'application/octet-stream'];
const BINARY_SCHEMA = { type: 'string', format: 'binary', description: 'The bytes of the file.' };

/**
 * The signed-URL routes of files, outside /v0: the URL is the credential (no API key). Uploads
 * are raw bytes (the only non-JSON bodies of the service); downloads are served with headers that
 * keep a browser from running or sniffing anything (docs/api.md, Files).
 */
export const filesPublicRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { database, clock } = app.ctx;
  const runtime = await fileRuntime(app.ctx);

  app.decorateRequest('signedFile', null as never);
  app.addContentTypeParser(BYTES_TYPES, { parseAs: 'buffer', bodyLimit: MAX_FILE_BYTES }, (_request, body, done) =>
    done(null, body),
  );

  /** Runs before the body is read: an upload without a valid URL is refused without reading it. */
  const verify = (purpose: UrlPurpose) => async (request: FastifyRequest) => {
    const { file_id } = request.params as { file_id: string };
    const query = request.query as { expires?: string; signature?: string };
    request.signedFile = await fileForSignedUrl(database.kysely, runtime.signer, purpose, file_id, query);
  };

  const uploadErrors = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendProblem(request, reply, new AppError('payload_too_large', 'The file is larger than 10 MiB.'));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendProblem(request, reply, wrongMediaType());
    throw error;
  };

  app.put(
    '/files/:file_id',
    {
      schema: {
        operationId: 'files.upload',
        tags: [FILES_TAG],
        summary: 'Send the bytes of a file to the signed uploadUrl from POST /v0/files (once)',
        description: `Raw bytes, Content-Type one of ${BYTES_TYPES.join(', ')}. Authenticated by the URL's signature.`,
        security: [],
        params: FileParams,
        querystring: SignedQuery,
        response: { 200: Type.Ref('FileUploaded'), ...problems(400, 403, 404, 409, 410, 413, 415, 422) },
      },
      // The body is raw bytes, not validated JSON: it is described in the document only.
      config: {
        swaggerTransform: (route) =>
          documentRoute({ ...route, schema: { ...route.schema, body: BINARY_SCHEMA, consumes: BYTES_TYPES } }),
      },
      bodyLimit: MAX_FILE_BYTES,
      onRequest: [
        verify('upload'),
        async (request) => {
          const file = request.signedFile;
          await admitUploadAttempt(TenantScope.of(database, file.tenant_id), clock, file);
        },
      ],
      errorHandler: uploadErrors,
    },
    async (request) => {
      const body = request.body === undefined || request.body === null ? Buffer.alloc(0) : request.body;
      if (!Buffer.isBuffer(body)) throw wrongMediaType();
      const file = request.signedFile;
      const scope = TenantScope.of(database, file.tenant_id);
      return receiveUpload(scope, runtime.store, clock, file, body);
    },
  );

  const serve = async (request: FastifyRequest, reply: FastifyReply, preview: boolean) => {
    const file = request.signedFile;
    const key = preview ? file.preview_key : file.storage_key;
    // Streamed: a download holds a chunk in memory, not the whole file.
    const stored = file.status === 'completed' && key !== null ? await runtime.store.open(key) : null;
    if (stored === null) throw notFound(preview ? 'preview of file' : 'file', file.id);
    const expires = Number((request.query as { expires: string }).expires);
    const maxAge = Math.max(0, Math.floor(expires - clock.now().getTime() / 1000));
    const filename = preview ? `${file.filename.replace(/\.[^.]*$/, '')}.preview.webp` : file.filename;
    return reply
      .header('content-type', preview ? PREVIEW_TYPE : file.content_type!)
      .header('content-length', stored.size)
      .header('content-disposition', contentDisposition(filename))
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('cache-control', `private, max-age=${maxAge}, immutable`)
      .send(stored.stream);
  };

  const downloadSchema = (operationId: string, summary: string, types: readonly string[]) => ({
    operationId,
    tags: [FILES_TAG],
    summary,
    security: [],
    params: FileParams,
    querystring: SignedQuery,
    // Bytes are sent as a Buffer, which the serializer passes through: this is for the document.
    response: { 200: binary(types, 'The bytes, with the content type of the file.'), ...problems(400, 403, 404) },
  });

  app.get(
    '/files/:file_id',
    {
      schema: downloadSchema('files.download', 'The bytes of a file (the signed downloadUrl of an asset)', IMAGE_TYPES),
      onRequest: verify('download'),
    },
    (request, reply) => serve(request, reply, false),
  );
  app.get(
    '/files/:file_id/preview',
    {
      schema: downloadSchema(
        'files.preview',
        'A downscaled WebP of a file (the signed previewDownloadUrl of an asset)',
        [PREVIEW_TYPE],
      ),
      onRequest: verify('preview'),
    },
    (request, reply) => serve(request, reply, true),
  );
};

function wrongMediaType(): AppError {
  return new AppError(
    'unsupported_media_type',
    `Send the file's bytes as the body, with Content-Type one of ${BYTES_TYPES.join(', ')}.`,
  );
}

/** `inline` (images are shown, not downloaded) with an ASCII fallback and the exact name (RFC 6266). */
function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `inline; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
