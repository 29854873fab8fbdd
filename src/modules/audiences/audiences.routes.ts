import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sendIdempotent, withIdempotency } from '../../idempotency/idempotency.js';
import { standardErrorResponses } from '../../http/schemas.js';
import {
  AudienceArchiveBody,
  AudienceBatchBody,
  AudienceCreateBody,
  AudienceList,
  AudienceListParams,
  AudienceListQuery,
  AudienceParams,
  AudiencePatchBody,
  AudienceRestoreBody,
  AudienceVersionList,
  PageRegenerateBody,
  VersionActionBody,
  VersionCreateBody,
  VersionListQuery,
  VersionParams,
  VersionPublishBody,
} from './audiences.schemas.js';
import { regeneratePage } from './audiences.regenerate.js';
import { createAudienceBatch } from './audiences.batch.js';
import * as audiences from './audiences.service.js';
import { previewUrl } from '../site/index.js';
import {
  createVersion,
  getVersion,
  listVersions,
  previewableVersion,
  publishOrRollBack,
} from './audiences.versions.js';

export const audiencesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { pager, clock } = app.ctx;

  app.get(
    '/pages/:page_id/audiences',
    {
      schema: {
        operationId: 'audiences.list',
        tags: ['Audiences'],
        summary: 'List the audiences of a page, newest first, with their latest and published versions',
        params: AudienceListParams,
        querystring: AudienceListQuery,
        response: { 200: AudienceList, ...standardErrorResponses },
      },
    },
    async (request) =>
      pager.list(request.scope.tenantId, request.query, {
        context: `audiences.list:${request.params.page_id}`,
        fetch: (window) => audiences.listAudiences(request.scope, request.params.page_id, window),
        keyOf: (a) => [a.audienceId],
      }),
  );

  app.post(
    '/pages/:page_id/audiences',
    {
      schema: {
        operationId: 'audiences.create',
        tags: ['Audiences (extension)'],
        summary: 'Create an audience: for a person, an account, or a named segment',
        description:
          'Extension of the interface (docs/api.md, Creating and changing audiences). Version 1 is made at once by ' +
          'the built-in writer and published; version 2 is queued for the configured generator. ' +
          '`idempotencyKey` works as on POST /v0/person_logs.',
        params: AudienceListParams,
        body: AudienceCreateBody,
        response: { 201: Type.Ref('Audience'), 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request, reply) => {
      const { idempotencyKey, ...input } = request.body;
      const pageId = request.params.page_id;
      const result = await withIdempotency(
        request.scope,
        clock,
        { operation: 'audiences.create', key: idempotencyKey, body: { pageId, ...input } },
        async (tx) => ({ status: 201, body: await audiences.createAudience(tx, clock, pageId, input) }),
      );
      return sendIdempotent(reply, result);
    },
  );

  app.post(
    '/pages/:page_id/audiences/batch',
    {
      schema: {
        operationId: 'audiences.batch',
        tags: ['Audiences (extension)'],
        summary: 'Create up to 1,000 audiences, each found or created by whom it addresses; a result per item',
        description:
          'Extension of the interface (docs/api.md, Importing audiences). Each item is a create body plus `person` ' +
          'and/or `account` identities (found or created as by POST /v0/person_logs); the identity decides the ' +
          'audience: one the page already has for it is answered as `existing`, unchanged. Each item is atomic: ' +
          '`created`, `existing`, or `error` with its problem, nothing of it written. Re-sending creates nothing twice.',
        params: AudienceListParams,
        body: AudienceBatchBody,
        response: { 200: Type.Ref('AudienceBatchResult'), 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request) => createAudienceBatch(request.scope, clock, request.params.page_id, request.body.items),
  );

  app.get(
    '/pages/:page_id/audiences/:audience_id',
    {
      schema: {
        operationId: 'audiences.get',
        tags: ['Audiences (extension)'],
        summary: 'Get an audience with its latest and published versions',
        description: 'Extension of the interface (docs/api.md, Creating and changing audiences).',
        params: AudienceParams,
        response: { 200: Type.Ref('Audience'), ...standardErrorResponses },
      },
    },
    async (request) => audiences.getAudience(request.scope, request.params.page_id, request.params.audience_id),
  );

  app.patch(
    '/pages/:page_id/audiences/:audience_id',
    {
      schema: {
        operationId: 'audiences.patch',
        tags: ['Audiences (extension)'],
        summary: 'Change an audience (its name at once, its content with its next version)',
        description: 'Extension of the interface (docs/api.md, Creating and changing audiences).',
        params: AudienceParams,
        body: AudiencePatchBody,
        response: { 200: Type.Ref('Audience'), 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request) =>
      audiences.patchAudience(request.scope, request.params.page_id, request.params.audience_id, request.body),
  );

  app.post(
    '/pages/:page_id/audiences/:audience_id/archive',
    {
      schema: {
        operationId: 'audiences.archive',
        tags: ['Audiences (extension)'],
        summary: 'Archive an audience: its links stop serving (a no-op for one already archived)',
        description: 'Extension of the interface (docs/api.md, Creating and changing audiences); the pair of restore.',
        params: AudienceParams,
        body: AudienceArchiveBody,
        response: { 200: Type.Ref('Audience'), 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request) =>
      audiences.archiveAudienceOnPage(request.scope, clock, request.params.page_id, request.params.audience_id),
  );

  app.post(
    '/pages/:page_id/audiences/:audience_id/restore',
    {
      schema: {
        operationId: 'audiences.restore',
        tags: ['Audiences'],
        summary: 'Restore an archived audience (a no-op for one that is not archived)',
        params: AudienceParams,
        body: AudienceRestoreBody,
        response: { 200: Type.Ref('Audience'), 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request) => audiences.restoreAudience(request.scope, request.params.page_id, request.params.audience_id),
  );

  app.post(
    '/pages/:page_id/audiences/:audience_id/versions',
    {
      schema: {
        operationId: 'audiences.versions.create',
        tags: ['Audiences'],
        summary: 'Queue a new version of the audience for generation',
        params: AudienceParams,
        body: VersionCreateBody,
        response: {
          201: Type.Ref('AudienceVersion'),
          200: Type.Ref('AudienceVersion', {
            description: 'The version an earlier request with this operationKey made.',
          }),
          409: Type.Ref('Problem'),
          ...standardErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { version, created } = await createVersion(
        request.scope,
        clock,
        request.params.page_id,
        request.params.audience_id,
        request.body,
      );
      return reply.code(created ? 201 : 200).send(version);
    },
  );

  app.get(
    '/pages/:page_id/audiences/:audience_id/versions',
    {
      schema: {
        operationId: 'audiences.versions.list',
        tags: ['Audiences (extension)'],
        summary: 'List the versions of an audience, newest first',
        description: 'Extension of the interface (docs/api.md, Publishing, previewing and rolling back versions).',
        params: AudienceParams,
        querystring: VersionListQuery,
        response: { 200: AudienceVersionList, ...standardErrorResponses },
      },
    },
    async (request) => {
      const { page_id: pageId, audience_id: audienceId } = request.params;
      return pager.list(request.scope.tenantId, request.query, {
        context: `audiences.versions.list:${pageId}:${audienceId}`,
        fetch: (window) => listVersions(request.scope, pageId, audienceId, window),
        keyOf: (v) => [v.versionNumber],
      });
    },
  );

  app.get(
    '/pages/:page_id/audiences/:audience_id/versions/:version_id',
    {
      schema: {
        operationId: 'audiences.versions.get',
        tags: ['Audiences (extension)'],
        summary: 'Get a version with its generated content and how it was made',
        description: 'Extension of the interface (docs/api.md, Publishing, previewing and rolling back versions).',
        params: VersionParams,
        response: { 200: Type.Ref('AudienceVersionDetail'), ...standardErrorResponses },
      },
    },
    async (request) => {
      const { page_id, audience_id, version_id } = request.params;
      return getVersion(request.scope, page_id, audience_id, version_id);
    },
  );

  app.post(
    '/pages/:page_id/audiences/:audience_id/versions/:version_id/publish',
    {
      schema: {
        operationId: 'audiences.versions.publish',
        tags: ['Audiences (extension)'],
        summary: 'Publish a draft version, or roll back to an archived one (a new version with its content)',
        description:
          'Extension of the interface (docs/api.md, Publishing, previewing and rolling back versions). A draft goes ' +
          'live (200); the live version is answered as it is (200); an archived version that was generated is ' +
          'copied into a new version that goes live at once (201); any other status is 409 version_not_publishable.',
        params: VersionParams,
        body: VersionPublishBody,
        response: {
          200: Type.Ref('AudienceVersion'),
          201: Type.Ref('AudienceVersion', { description: 'Rolled back: the new version, live, with the content.' }),
          409: Type.Ref('Problem'),
          ...standardErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { page_id, audience_id, version_id } = request.params;
      const result = await withIdempotency(
        request.scope,
        clock,
        {
          operation: 'audiences.versions.publish',
          key: request.body.idempotencyKey,
          body: { page_id, audience_id, version_id },
        },
        async (tx) => {
          const { version, created } = await publishOrRollBack(tx, clock, page_id, audience_id, version_id);
          return { status: created ? 201 : 200, body: version };
        },
      );
      return sendIdempotent(reply, result);
    },
  );

  app.post(
    '/pages/:page_id/audiences/:audience_id/versions/:version_id/preview',
    {
      schema: {
        operationId: 'audiences.versions.preview',
        tags: ['Audiences (extension)'],
        summary: 'A signed, expiring URL that shows the version as a visitor would see it',
        description:
          'Extension of the interface (docs/api.md, Publishing, previewing and rolling back versions). Any version ' +
          'with content (draft, published, archived); 409 version_not_previewable for one not generated.',
        params: VersionParams,
        body: VersionActionBody,
        response: { 200: Type.Ref('VersionPreview'), 409: Type.Ref('Problem'), ...standardErrorResponses },
      },
    },
    async (request) => {
      const { page_id, audience_id, version_id } = request.params;
      await previewableVersion(request.scope, page_id, audience_id, version_id);
      return previewUrl(app.ctx, `${request.protocol}://${request.host}`, request.scope.tenantId, version_id);
    },
  );

  app.post(
    '/pages/:page_id/regenerate',
    {
      schema: {
        operationId: 'pages.regenerate',
        tags: ['Audiences (extension)'],
        summary: 'Queue a new version of every live audience of the page (after its brief changed)',
        description: 'Extension of the interface (docs/api.md, Regenerating a page).',
        params: AudienceListParams,
        body: PageRegenerateBody,
        response: {
          201: Type.Ref('PageRegeneration'),
          200: Type.Ref('PageRegeneration', {
            description: 'The versions an earlier request with this operationKey queued (queuedCount 0).',
          }),
          409: Type.Ref('Problem'),
          ...standardErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { regeneration, created } = await regeneratePage(
        request.scope,
        clock,
        request.params.page_id,
        request.body,
      );
      return reply.code(created ? 201 : 200).send(regeneration);
    },
  );
};
