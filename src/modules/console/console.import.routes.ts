import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../http/errors.js';
import { getImport, startImport } from '../audiences/index.js';
import { getPage } from '../pages/index.js';
import { sendHtml, userOf } from './console.http.js';
import { boundaryOf, parseMultipart, type MultipartFile } from './console.import.multipart.js';
import { renderImport, renderImportProgress } from './console.import.views.js';
import { PAGE_ID } from './console.pages.routes.js';

/** The largest CSV the screen takes (the CLI has no limit: `audience import`). */
export const IMPORT_MAX_BYTES = 5 * 1024 * 1024;
const IMPORT_ID = /^import_[a-z0-9]{26}$/;
/** Room for the form's other fields and the multipart framing. */
const FRAMING_BYTES = 64 * 1024;

/**
 * Import (docs/console.md#import): a CSV of targets uploaded for a page is queued as an import
 * job (`startImport`: the import worker runs it through the CLI's import service) and the upload
 * answers with a redirect to the import's screen, `/console/imports/{id}`, which shows its progress
 * (a script polls `…/status`; without script the page refreshes itself) and then its summary.
 * A file over IMPORT_MAX_BYTES is a 413 page; an unknown column or an archived page is refused at once.
 */
export const consoleImportRoutes: FastifyPluginAsync = async (app) => {
  const { clock } = app.ctx;

  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: IMPORT_MAX_BYTES + FRAMING_BYTES },
    (request, body, done) => {
      const boundary = boundaryOf(String(request.headers['content-type']));
      const parsed = boundary === null ? null : parseMultipart(body as Buffer, boundary);
      if (parsed === null) return done(new AppError('bad_request', 'The upload could not be read; send it again.'));
      done(null, { ...parsed.fields, file: parsed.files.file });
    },
  );

  async function pageOf(request: FastifyRequest<{ Params: { page_id: string } }>) {
    const pageId = request.params.page_id;
    if (!PAGE_ID.test(pageId)) throw notFound('page', pageId);
    return getPage(userOf(request).scope, pageId);
  }

  app.get<{ Params: { page_id: string } }>(
    '/pages/:page_id/import',
    { schema: { hide: true } },
    async (request, reply) => {
      const page = await pageOf(request);
      return sendHtml(
        reply,
        renderImport({ viewer: userOf(request), pageId: page.pageId, pageName: page.name, maxBytes: IMPORT_MAX_BYTES }),
      );
    },
  );

  app.post<{ Params: { page_id: string } }>(
    '/pages/:page_id/import',
    { schema: { hide: true } },
    async (request, reply) => {
      const user = userOf(request);
      const page = await pageOf(request);
      const view = { viewer: user, pageId: page.pageId, pageName: page.name, maxBytes: IMPORT_MAX_BYTES };
      const file = (request.body as { file?: MultipartFile } | undefined)?.file;
      if (file === undefined || file.data.length === 0) {
        return sendHtml(reply, renderImport({ ...view, error: 'Choose a CSV file to import.' }), 422);
      }
      if (file.data.length > IMPORT_MAX_BYTES) {
        const error = `The file is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MiB: split it, or use the CLI (audience import).`;
        return sendHtml(reply, renderImport({ ...view, error }), 413);
      }
      const name = (file.filename.split(/[\\/]/).pop() ?? '').slice(0, 200) || 'upload.csv';
      try {
        const csv = file.data.toString('utf8');
        const id = await startImport(user.scope, clock, {
          pageId: page.pageId,
          userId: user.userId,
          fileName: name,
          csv,
        });
        return reply.redirect(`/console/imports/${id}`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 409)) throw error;
        return sendHtml(reply, renderImport({ ...view, error: error.detail }), error.status);
      }
    },
  );

  async function importOf(request: FastifyRequest<{ Params: { import_id: string } }>) {
    const id = request.params.import_id;
    if (!IMPORT_ID.test(id)) throw notFound('import', id);
    return getImport(userOf(request).scope, id);
  }

  app.get<{ Params: { import_id: string } }>(
    '/imports/:import_id',
    { schema: { hide: true } },
    async (request, reply) => {
      const status = await importOf(request);
      const page = await getPage(userOf(request).scope, status.pageId);
      return sendHtml(reply, renderImportProgress({ viewer: userOf(request), status, pageName: page.name }));
    },
  );

  /** What the screen's script polls: the counts of an import of the session's tenant. */
  app.get<{ Params: { import_id: string } }>(
    '/imports/:import_id/status',
    { schema: { hide: true } },
    async (request, reply) => {
      const { status, rows, done, created, existing, failed } = await importOf(request);
      return reply.header('cache-control', 'no-store').send({ status, rows, done, created, existing, failed });
    },
  );
};
