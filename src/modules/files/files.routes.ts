import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { standardErrorResponses } from '../../http/schemas.js';
import { fileRuntime } from './files.runtime.js';
import { FileCreateBody, FileUpload } from './files.schemas.js';
import * as files from './files.service.js';

export const FILES_TAG = 'Files (extension)';

/** `POST /v0/files`: an extension of the interface (docs/api.md, Files), the way to get a fileId. */
export const filesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock } = app.ctx;
  const runtime = await fileRuntime(app.ctx);

  app.post(
    '/files',
    {
      schema: {
        operationId: 'files.create',
        tags: [FILES_TAG],
        summary: 'Start an image upload: returns a fileId and a signed URL to PUT the bytes to',
        description:
          'Extension of the interface. PUT the bytes to `uploadUrl` within 15 minutes; the file is then ' +
          'usable as `fileId` of an asset. Accepted: PNG, JPEG, GIF, WebP, AVIF up to 10 MiB, checked by content.',
        body: FileCreateBody,
        response: { 201: FileUpload, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const { scope } = request;
      const { fileId, expiresAt } = await files.createUpload(scope, clock, request.body);
      const uploadUrl = runtime.uploadUrl(runtime.baseUrl(request), scope.tenantId, fileId, expiresAt);
      return reply.code(201).send({ fileId, uploadUrl, expiresAt: expiresAt.toISOString() });
    },
  );
};
