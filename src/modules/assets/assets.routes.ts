import { sendIdempotent } from '../../idempotency/idempotency.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { standardErrorResponses, strict } from '../../http/schemas.js';
import { fileRuntime } from '../files/index.js';
import { Asset, AssetCreateBody, AssetList, AssetListQuery, AssetParams, AssetPatchBody } from './assets.schemas.js';
import * as assets from './assets.service.js';

const EXTENSION_TAG = 'Assets (extension)';
const EXTENSION = 'Extension of the interface (docs/api.md, Assets: list, change, trash, delete). ';

export const assetsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { clock, pager } = app.ctx;
  const runtime = await fileRuntime(app.ctx);

  const links = (request: FastifyRequest): assets.FileLinks => {
    const base = runtime.baseUrl(request);
    return {
      download: (tenantId, fileId) => runtime.downloadUrl(base, tenantId, fileId),
      preview: (tenantId, fileId) => runtime.previewUrl(base, tenantId, fileId),
    };
  };

  // Registered before the routes that use `Asset` inline: fastify 5 failed to resolve the envelope's
  // `$ref: Asset` (FST_ERR_SCH_SERIALIZATION_BUILD) once a route of this plugin had compiled it.
  app.get(
    '/assets',
    {
      schema: {
        operationId: 'assets.list',
        tags: [EXTENSION_TAG],
        summary: 'List assets, newest first, by lifecycle state (default active), purpose and tag',
        description: EXTENSION + 'Exact `totalCount` for the filters.',
        querystring: AssetListQuery,
        response: { 200: AssetList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const filter = {
        lifecycleState: request.query.lifecycleState ?? 'active',
        purpose: request.query.purpose ?? null,
        tag: request.query.tag ?? null,
      };
      return pager.list(request.scope.tenantId, request.query, {
        context: `assets.list:${JSON.stringify(filter)}`,
        fetch: (window) => assets.listAssets(request.scope, filter, window, links(request)),
        keyOf: (asset) => [asset.assetId],
      });
    },
  );

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

  app.patch(
    '/assets/:asset_id',
    {
      schema: {
        operationId: 'assets.patch',
        tags: [EXTENSION_TAG],
        summary: "Change an asset's name, purpose, tags or hidden flag",
        description: EXTENSION + 'A deleted asset is a 409 `asset_deleted`.',
        params: AssetParams,
        body: AssetPatchBody,
        response: { 200: Asset, 409: { $ref: 'Problem' }, ...standardErrorResponses },
      },
    },
    async (request) => assets.patchAsset(request.scope, clock, request.params.asset_id, request.body, links(request)),
  );

  for (const [action, to, summary] of [
    ['trash', 'trashed', 'Move an asset to the trash: pages stop showing it; restore brings it back'],
    ['restore', 'active', 'Bring a trashed asset back'],
  ] as const) {
    app.post(
      `/assets/:asset_id/${action}`,
      {
        schema: {
          operationId: `assets.${action}`,
          tags: [EXTENSION_TAG],
          summary,
          description: EXTENSION + 'Idempotent: an asset already there is answered as it is. Deleted → 409.',
          params: AssetParams,
          body: Type.Object({}, { ...strict, description: 'An empty JSON object.' }),
          response: { 200: Asset, 409: { $ref: 'Problem' }, ...standardErrorResponses },
        },
      },
      async (request) => assets.moveAsset(request.scope, clock, request.params.asset_id, to, links(request)),
    );
  }

  app.delete(
    '/assets/:asset_id',
    {
      schema: {
        operationId: 'assets.delete',
        tags: [EXTENSION_TAG],
        summary: 'Delete an asset for good; its bytes go after the grace period',
        description:
          EXTENSION +
          'Answers the asset, `lifecycleState: deleted`, without URLs. Pages stop showing its image at once. ' +
          'A second DELETE answers the same.',
        params: AssetParams,
        response: { 200: Asset, ...standardErrorResponses },
      },
    },
    async (request) => assets.deleteAsset(request.scope, clock, request.params.asset_id, links(request)),
  );
};
