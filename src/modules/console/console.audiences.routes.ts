import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../http/errors.js';
import {
  archiveAudienceOnPage,
  AudiencePatchBody,
  createVersion,
  getAudience,
  listVersions,
  patchAudience,
  previewableVersion,
  publishOrRollBack,
  restoreAudience,
  versionWithGeneration,
} from '../audiences/index.js';
import { getPage } from '../pages/index.js';
import { previewUrl } from '../site/index.js';
import type { ConsoleUser } from './console.auth.service.js';
import { audienceUrls } from './console.audiences.service.js';
import {
  editValuesOf,
  renderAudienceView,
  type AudienceEditValues,
  type TimelineVersion,
} from './console.audiences.views.js';
import { consoleOrigin, formText, queryText, sendHtml, userOf } from './console.http.js';
import { bodyChecker, formErrorsOf } from './console.pages.forms.js';
import { MAX_FIELD, PAGE_ID } from './console.pages.routes.js';

/** Versions the timeline shows (newest first). */
const VERSIONS_SHOWN = 20;
const AUDIENCE_ID = /^audience_[a-z0-9]{26}$/;
const VERSION_ID = /^version_[a-z0-9]{26}$/;

type AudienceRequest = FastifyRequest<{ Params: { page_id: string; audience_id: string } }>;

const checkPatch = bodyChecker(AudiencePatchBody);

/** The edit form as the API's PATCH body: a blank field clears it (null). */
function patchOf(values: AudienceEditValues) {
  const orNull = (s: string) => (s.trim() === '' ? null : s);
  return {
    customName: orNull(values.customName.trim()),
    supplementaryContext: orNull(values.supplementaryContext),
    actionUrlOverride: orNull(values.actionUrlOverride.trim()),
    actionFormIdOverride: orNull(values.actionFormIdOverride.trim()),
    actionFormInstructionsOverride: orNull(values.actionFormInstructionsOverride),
    isNewPageAgent: values.isNewPageAgent,
  };
}

/**
 * An audience's screen (docs/console.md): the audiences module's get, versions, PATCH, publish or
 * roll back, new version, archive and restore; previews signed by the site module as the API's
 * preview endpoint signs them.
 */
export const consoleAudiencesRoutes: FastifyPluginAsync = async (app) => {
  const { clock, config } = app.ctx;

  function ids(request: AudienceRequest): { pageId: string; audienceId: string } {
    const { page_id: pageId, audience_id: audienceId } = request.params;
    if (!PAGE_ID.test(pageId)) throw notFound('page', pageId);
    if (!AUDIENCE_ID.test(audienceId)) throw notFound('audience', audienceId);
    return { pageId, audienceId };
  }

  async function screen(
    request: FastifyRequest,
    user: ConsoleUser,
    pageId: string,
    audienceId: string,
    extra: { notice?: string; error?: string; form?: Parameters<typeof renderAudienceView>[0]['form'] } = {},
  ): Promise<string> {
    const page = await getPage(user.scope, pageId);
    const audience = await getAudience(user.scope, pageId, audienceId);
    const list = await listVersions(user.scope, pageId, audienceId, { limit: VERSIONS_SHOWN, after: null });
    const versions: TimelineVersion[] = await Promise.all(
      list.items.slice(0, VERSIONS_SHOWN).map(async (v) => {
        const detail = await versionWithGeneration(user.scope, v.versionId);
        return { ...detail, generation: detail.generation, hasContent: detail.content !== null };
      }),
    );
    // The version shown in the frame: the one asked for, else the newest with content.
    const asked = queryText(request, 'preview', 100);
    let shown = versions.find((v) => v.versionId === asked && v.hasContent);
    if (shown === undefined && asked !== '' && VERSION_ID.test(asked)) {
      // An older version than the timeline shows: the API's own check says whether it can be previewed.
      await previewableVersion(user.scope, pageId, audienceId, asked);
      const detail = await versionWithGeneration(user.scope, asked);
      shown = { ...detail, hasContent: true };
    }
    shown ??= versions.find((v) => v.hasContent);
    const preview =
      shown === undefined
        ? null
        : {
            versionNumber: shown.versionNumber,
            url: (await previewUrl(app.ctx, consoleOrigin(config, request), user.tenantId, shown.versionId)).previewUrl,
          };
    return renderAudienceView({
      viewer: user,
      pageName: page.name,
      pageStatus: page.status,
      audience,
      versions,
      versionsTotal: list.totalCount,
      preview,
      urls: await audienceUrls(user.scope, config.port, pageId, audienceId, audience.personRouteKey),
      ...extra,
    });
  }

  /** A move: its notice on the screen, or its 409 refusal (the audience or page archived, …). */
  async function move(
    request: AudienceRequest,
    reply: FastifyReply,
    work: (user: ConsoleUser, pageId: string, audienceId: string) => Promise<string>,
  ) {
    const user = userOf(request);
    const { pageId, audienceId } = ids(request);
    try {
      const notice = await work(user, pageId, audienceId);
      return sendHtml(reply, await screen(request, user, pageId, audienceId, { notice }));
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 409) throw error;
      return sendHtml(reply, await screen(request, user, pageId, audienceId, { error: error.detail }), 409);
    }
  }

  const path = '/pages/:page_id/audiences/:audience_id';

  app.get<{ Params: { page_id: string; audience_id: string } }>(
    path,
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const { pageId, audienceId } = ids(request);
      const made = queryText(request, 'made');
      const notice =
        made === 'created'
          ? 'Created. Version 1 is live; version 2 is being written.'
          : made === 'existing'
            ? 'This person or account already had this audience on the page: here it is, unchanged.'
            : undefined;
      return sendHtml(reply, await screen(request, user, pageId, audienceId, notice ? { notice } : {}));
    },
  );

  app.post<{ Params: { page_id: string; audience_id: string } }>(
    `${path}/edit`,
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const { pageId, audienceId } = ids(request);
      const values: AudienceEditValues = {
        customName: formText(request, 'customName', MAX_FIELD),
        supplementaryContext: formText(request, 'supplementaryContext', MAX_FIELD),
        actionUrlOverride: formText(request, 'actionUrlOverride', MAX_FIELD),
        actionFormIdOverride: formText(request, 'actionFormIdOverride', MAX_FIELD),
        actionFormInstructionsOverride: formText(request, 'actionFormInstructionsOverride', MAX_FIELD),
        isNewPageAgent: formText(request, 'isNewPageAgent') === 'true',
      };
      const body = patchOf(values);
      try {
        const invalid = checkPatch(body);
        if (invalid) throw invalid;
        const saved = await patchAudience(user.scope, pageId, audienceId, body);
        const notice = 'Saved. Regenerate to write a version with it.';
        return sendHtml(
          reply,
          await screen(request, user, pageId, audienceId, {
            notice,
            form: { values: editValuesOf(saved), errors: {} },
          }),
        );
      } catch (error) {
        if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 409)) throw error;
        const form = { values, errors: formErrorsOf(error) };
        return sendHtml(reply, await screen(request, user, pageId, audienceId, { form }), error.status);
      }
    },
  );

  app.post<{ Params: { page_id: string; audience_id: string; version_id: string } }>(
    `${path}/versions/:version_id/publish`,
    { schema: { hide: true } },
    async (request, reply) =>
      move(request, reply, async (user, pageId, audienceId) => {
        const versionId = request.params.version_id;
        if (!VERSION_ID.test(versionId)) throw notFound('audience version', versionId);
        const { version, created } = await publishOrRollBack(user.scope, clock, pageId, audienceId, versionId);
        return created
          ? `Rolled back: v${version.versionNumber}, a copy of that version, is live.`
          : `v${version.versionNumber} is live.`;
      }),
  );

  app.post<{ Params: { page_id: string; audience_id: string } }>(
    `${path}/regenerate`,
    { schema: { hide: true } },
    async (request, reply) =>
      move(request, reply, async (user, pageId, audienceId) => {
        const { version } = await createVersion(user.scope, clock, pageId, audienceId, {});
        return `v${version.versionNumber} is queued; reload to follow it.`;
      }),
  );

  app.post<{ Params: { page_id: string; audience_id: string } }>(
    `${path}/archive`,
    { schema: { hide: true } },
    async (request, reply) =>
      move(request, reply, async (user, pageId, audienceId) => {
        await archiveAudienceOnPage(user.scope, clock, pageId, audienceId);
        return 'Archived: its links stop serving until it is restored.';
      }),
  );

  app.post<{ Params: { page_id: string; audience_id: string } }>(
    `${path}/restore`,
    { schema: { hide: true } },
    async (request, reply) =>
      move(request, reply, async (user, pageId, audienceId) => {
        await restoreAudience(user.scope, pageId, audienceId);
        return 'Restored: its links serve it again.';
      }),
  );
};
