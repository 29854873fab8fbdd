import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../http/errors.js';
import {
  AudienceCreateBody,
  checkItem,
  createAudience,
  createAudienceBatch,
  listAudiences,
  publishPageDrafts,
  regeneratePage,
} from '../audiences/index.js';
import {
  archivePage,
  createPageFromApi,
  findPage,
  getPage,
  listPages,
  PageCreateBody,
  PagePatchBody,
  patchPage,
  publishPage,
  restorePage,
  searchPages,
} from '../pages/index.js';
import type { ConsoleUser } from './console.auth.service.js';
import { formText, queryText, sendHtml, userOf } from './console.http.js';
import { blankToNull, bodyChecker, formErrorsOf, type FieldErrors } from './console.pages.forms.js';
import {
  renderNewPage,
  renderPageList,
  renderPageView,
  type AudienceFormValues,
  type PageFormValues,
  type PageListRow,
} from './console.pages.views.js';

/** Audiences shown on a page's screen. */
const AUDIENCES_SHOWN = 100;
/** What a page id in a console path may look like (anything else is simply not found). */
export const PAGE_ID = /^page_[a-z0-9]{26}$/;
/** Action rows a page form may send (the API's limit is lower: it says so at the field). */
const ACTION_ROWS = 50;

/** Longer than any field the API takes: its own limits refuse, at the field, what is too long. */
export const MAX_FIELD = 200_000;

/** Pages listed on one screen. */
const PAGE_SIZE = 50;

const checkCreate = bodyChecker(PageCreateBody);
const checkPatch = bodyChecker(PagePatchBody);
const checkAudience = bodyChecker(AudienceCreateBody);

/** The page form's values as sent: empty action rows dropped. */
function pageFormOf(request: FastifyRequest): PageFormValues {
  const actions: PageFormValues['actions'] = [];
  for (let i = 0; i < ACTION_ROWS; i++) {
    const field = (name: string) => formText(request, `actions.${i}.${name}`, MAX_FIELD).trim();
    const row = { purpose: field('purpose'), buttonTitle: field('buttonTitle'), url: field('url') };
    if (row.purpose === '' && row.buttonTitle === '' && row.url === '') continue;
    const actionId = field('actionId');
    actions.push({ ...(actionId ? { actionId } : {}), ...row, actionType: field('actionType') || 'link' });
  }
  return {
    name: formText(request, 'name').trim(),
    title: formText(request, 'title').trim(),
    reviewBeforePublish: formText(request, 'reviewBeforePublish') === 'true',
    pageType: formText(request, 'pageType'),
    pageContext: formText(request, 'pageContext', MAX_FIELD),
    actions,
  };
}

/** Errors of the actions after empty rows were dropped: renumbered to the rows the form shows again. */
function pageBody(values: PageFormValues) {
  return {
    name: values.name,
    reviewBeforePublish: values.reviewBeforePublish ?? false,
    pageType: values.pageType,
    pageContext: values.pageContext,
    actions: values.actions,
  };
}

function audienceFormOf(request: FastifyRequest): AudienceFormValues {
  return {
    email: formText(request, 'person.email').trim(),
    personName: formText(request, 'person.name').trim(),
    domain: formText(request, 'account.domain').trim(),
    company: formText(request, 'account.name').trim(),
    customName: formText(request, 'customName').trim(),
    supplementaryContext: formText(request, 'supplementaryContext', MAX_FIELD),
  };
}

/** The batch endpoint's item for the form: whom it addresses by identity, as `POST …/audiences/batch` takes it. */
function audienceItemOf(v: AudienceFormValues): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  if (v.email !== '' || v.personName !== '') {
    item.person = { ...(v.email ? { email: v.email } : {}), ...(v.personName ? { name: v.personName } : {}) };
  }
  if (v.domain !== '' || v.company !== '') {
    item.account = { ...(v.domain ? { domain: v.domain } : {}), ...(v.company ? { name: v.company } : {}) };
  }
  const customName = blankToNull(v.customName);
  if (customName !== null) item.customName = customName;
  const context = blankToNull(v.supplementaryContext);
  if (context !== null) item.supplementaryContext = context;
  return item;
}

/** Pages: list and search, "New page", a page's screen with its edits, moves and new audiences. */
export const consolePagesRoutes: FastifyPluginAsync = async (app) => {
  const { pager, clock } = app.ctx;

  /** The page screen: the page (the pages module's getPage) and its first audiences (the audiences module's list). */
  async function pageScreen(
    user: ConsoleUser,
    pageId: string,
    extra: Omit<Parameters<typeof renderPageView>[0], 'viewer' | 'page' | 'audiences' | 'audiencesTotal'> = {},
  ) {
    if (!PAGE_ID.test(pageId)) throw notFound('page', pageId);
    const page = await getPage(user.scope, pageId);
    const audiences = await listAudiences(user.scope, pageId, { limit: AUDIENCES_SHOWN, after: null });
    return renderPageView({
      viewer: user,
      page,
      audiences: audiences.items.slice(0, AUDIENCES_SHOWN),
      audiencesTotal: audiences.totalCount,
      ...extra,
    });
  }

  function checkedPageId(request: FastifyRequest<{ Params: { page_id: string } }>): string {
    if (!PAGE_ID.test(request.params.page_id)) throw notFound('page', request.params.page_id);
    return request.params.page_id;
  }

  /** A refusal of the status table (409) is shown on the page's screen; anything else is thrown on. */
  async function orConflict(
    reply: FastifyReply,
    user: ConsoleUser,
    pageId: string,
    work: () => Promise<string>,
  ): Promise<FastifyReply> {
    try {
      return sendHtml(reply, await pageScreen(user, pageId, { notice: await work() }));
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 409) throw error;
      return sendHtml(reply, await pageScreen(user, pageId, { error: error.detail }), 409);
    }
  }

  app.get('/pages/new', { schema: { hide: true } }, async (request, reply) =>
    sendHtml(
      reply,
      renderNewPage({
        viewer: userOf(request),
        values: { name: '', title: '', pageType: 'outbound', pageContext: '', actions: [] },
        errors: {},
      }),
    ),
  );

  // The API's create (createPageFromApi), after the API's body schema: one code path, the same refusals.
  app.post('/pages/new', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const values = pageFormOf(request);
    const body = { ...pageBody(values), ...(values.title ? { title: values.title } : {}) };
    let errors: FieldErrors;
    try {
      const invalid = checkCreate(body);
      if (invalid) throw invalid;
      const page = await user.scope.transaction((tx) => createPageFromApi(tx, clock, body as never));
      return reply.redirect(`/console/pages/${page.pageId}`, 303);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 422) throw error;
      errors = formErrorsOf(error);
    }
    return sendHtml(reply, renderNewPage({ viewer: user, values, errors }), 422);
  });

  app.get<{ Params: { page_id: string } }>('/pages/:page_id', { schema: { hide: true } }, async (request, reply) =>
    sendHtml(reply, await pageScreen(userOf(request), request.params.page_id)),
  );

  // The API's PATCH (patchPage): name, review rule, type, brief and the actions (replaced as a whole).
  app.post<{ Params: { page_id: string } }>(
    '/pages/:page_id/edit',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const pageId = checkedPageId(request);
      const values = pageFormOf(request);
      const body = pageBody(values);
      try {
        const invalid = checkPatch(body);
        if (invalid) throw invalid;
        await patchPage(user.scope, clock, pageId, body as never);
        return sendHtml(reply, await pageScreen(user, pageId, { notice: 'Saved. New versions are written from it.' }));
      } catch (error) {
        if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 409)) throw error;
        const form = { values, errors: formErrorsOf(error) };
        return sendHtml(reply, await pageScreen(user, pageId, { form }), error.status);
      }
    },
  );

  const moves = [
    { name: 'publish', run: publishPage, done: 'Published: its audiences’ drafts are live.' },
    { name: 'archive', run: archivePage, done: 'Archived: its links answer 410 until it is restored.' },
    { name: 'restore', run: restorePage, done: 'Restored.' },
  ] as const;
  for (const move of moves) {
    app.post<{ Params: { page_id: string } }>(
      `/pages/:page_id/${move.name}`,
      { schema: { hide: true } },
      async (request, reply) => {
        const user = userOf(request);
        const pageId = checkedPageId(request);
        return orConflict(reply, user, pageId, async () => {
          await move.run(user.scope, clock, pageId);
          return move.done;
        });
      },
    );
  }

  // "New audience": the batch endpoint's service for one item (whom it addresses found or created by identity).
  app.post<{ Params: { page_id: string } }>(
    '/pages/:page_id/audiences',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const pageId = checkedPageId(request);
      const values = audienceFormOf(request);
      const item = audienceItemOf(values);
      let errors: FieldErrors;
      try {
        if (item.person === undefined && item.account === undefined) {
          // A named segment: the API's POST …/audiences (the batch addresses people and accounts only).
          const invalid = checkAudience(item);
          if (invalid) throw invalid;
          const audience = await createAudience(user.scope, clock, pageId, item as never);
          return reply.redirect(`/console/pages/${pageId}/audiences/${audience.audienceId}?made=created`, 303);
        }
        const invalid = checkItem(item);
        if (invalid) throw new AppError(invalid.code, invalid.detail, invalid.errors);
        const result = await createAudienceBatch(user.scope, clock, pageId, [item as never]);
        const first = result.items[0]!;
        if (first.outcome !== 'error') {
          return reply.redirect(`/console/pages/${pageId}/audiences/${first.audienceId}?made=${first.outcome}`, 303);
        }
        const problem = first.problem!;
        const paths = problem.errors.map((e) => ({ ...e, path: e.path.replace(/^\/body\/items\/0/, '') }));
        throw new AppError(problem.code, problem.detail, paths);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        if (error.status === 409) return sendHtml(reply, await pageScreen(user, pageId, { error: error.detail }), 409);
        if (error.status !== 422) throw error;
        errors = formErrorsOf(error);
      }
      const audienceForm = { values, errors };
      return sendHtml(reply, await pageScreen(user, pageId, { audienceForm }), 422);
    },
  );

  app.post<{ Params: { page_id: string } }>(
    '/pages/:page_id/publish-drafts',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const pageId = checkedPageId(request);
      return orConflict(reply, user, pageId, async () => {
        const published = await publishPageDrafts(user.scope, clock, pageId);
        return published.length === 0 ? 'There was no draft to publish.' : `Published ${published.length} drafts.`;
      });
    },
  );

  app.post<{ Params: { page_id: string } }>(
    '/pages/:page_id/regenerate',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const pageId = checkedPageId(request);
      return orConflict(reply, user, pageId, async () => {
        const { regeneration } = await regeneratePage(user.scope, clock, pageId, {});
        return `Queued ${regeneration.queuedCount} new versions; they appear here as they are written.`;
      });
    },
  );

  app.get('/pages', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const query = queryText(request, 'q').trim();
    const cursor = queryText(request, 'cursor', 1000) || undefined;
    let rows: PageListRow[];
    let envelope;
    if (query === '') {
      envelope = await pager.list(
        user.tenantId,
        { cursor, limit: PAGE_SIZE },
        {
          context: 'pages.list',
          fetch: (window) => listPages(user.scope, window),
          keyOf: (p) => [p.pageId],
        },
      );
      rows = envelope.items.map((p) => ({ ...p, pageType: p.pageType as string }));
    } else {
      envelope = await pager.list(
        user.tenantId,
        { cursor, limit: PAGE_SIZE },
        {
          context: `pages.search:${query}`,
          fetch: (window) => searchPages(user.scope, query, window),
          keyOf: (p) => [p.pageId],
        },
      );
      // Search answers name and counts; the status comes from each page's row (one indexed read each).
      rows = await Promise.all(
        envelope.items.map(async (p) => {
          const row = await findPage(user.scope, p.pageId);
          return {
            ...p,
            status: row?.status ?? null,
            pageType: row?.page_type ?? null,
            updatedAt: row?.updated_at ?? null,
          };
        }),
      );
    }
    const next = new URLSearchParams();
    if (query !== '') next.set('q', query);
    if (envelope.nextCursor !== null) next.set('cursor', envelope.nextCursor);
    return sendHtml(
      reply,
      renderPageList({
        viewer: user,
        query,
        rows,
        totalCount: envelope.totalCount,
        nextHref: envelope.nextCursor === null ? null : `/console/pages?${next.toString()}`,
      }),
    );
  });
};
