import { sendIdempotent } from '../../idempotency/idempotency.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { standardErrorResponses } from '../../http/schemas.js';
import { fileRuntime } from '../files/index.js';
import { Asset, AssetCreateBody, AssetParams } from './assets.schemas.js';
import * as assets from './assets.service.js';

export const assetsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock } = app.ctx;
  const runtime = await fileRuntime(app.ctx);

  const links = (request: FastifyRequest): assets.FileLinks => {
    const base = runtime.baseUrl(request);
    return {
      download: (tenantId, fileId) => runtime.downloadUrl(base, tenantId, fileId),
      preview: (tenantId, fileId) => runtime.previewUrl(base, tenantId, fileId),
    };
  };

  app.post(
    '/assets',
    {
      schema: {
        operationId: 'assets.create',
        tags: ['Assets'],
        summary: 'Create an image asset from an uploaded file',
        body: AssetCreateBody,
        response: { 201: Asset, ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      return sendIdempotent(reply, await assets.createAsset(request.scope, clock, request.body, links(request)));
    },
  );

  app.get(
    '/assets/:asset_id',
    {
      schema: {
        operationId: 'assets.get',
        tags: ['Assets'],
        summary: 'Get an asset, with fresh signed download URLs',
        params: AssetParams,
        response: { 200: Asset, ...standardErrorResponses },
      },
    },
    async (request) => assets.getAsset(request.scope, request.params.asset_id, links(request)),
  );
};
