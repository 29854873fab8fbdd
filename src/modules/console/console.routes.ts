import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';
import { MINUTE_MS } from '../../lib/clock.js';
import { sessionOf, signIn, signInLinkUsable, signOut } from './console.auth.service.js';
import { renderSignedOut, renderSignIn } from './console.auth.views.js';
import {
  checkCsrf,
  checkSameOrigin,
  clearSessionCookie,
  formText,
  queryText,
  readCookie,
  sendHtml,
  sessionCookie,
  setSessionCookie,
  setUserOf,
} from './console.http.js';
import { consoleAudiencesRoutes } from './console.audiences.routes.js';
import { consoleImportRoutes } from './console.import.routes.js';
import { consoleAnalyticsRoutes } from './console.analytics.routes.js';
import { consolePagesRoutes } from './console.pages.routes.js';
import { consolePeopleRoutes } from './console.people.routes.js';
import { consoleSettingsRoutes } from './console.settings.routes.js';
import { consoleAssets } from './console.static.js';
import { consoleUsersRoutes } from './console.users.routes.js';
import { renderMessage } from './console.views.js';

/** Form bodies of the console are small: names, briefs, contexts. */
const FORM_BODY_LIMIT = 512 * 1024;

/**
 * The console (docs/console.md): server-rendered screens under /console on the API host (never
 * on a tenant's page host: the site's host constraint keeps these routes off them). Sign-in and
 * sign-out are here; every other screen is in the signed-in area below, where a request without
 * a live session is sent to sign in and every POST must carry the session's anti-CSRF token.
 */
export const consoleRoutes: FastifyPluginAsync = async (app) => {
  const { database, clock, config } = app.ctx;
  const cookie = sessionCookie(config);
  const idleMs = config.consoleSessionIdleMinutes * MINUTE_MS;
  const assets = consoleAssets();

  await app.register(
    async (c) => {
      c.removeAllContentTypeParsers();
      c.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
        (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
      );
      c.setErrorHandler((error: FastifyError | AppError, request, reply) => sendError(request, reply, error));
      c.setNotFoundHandler((_request, reply) =>
        sendHtml(
          reply,
          renderMessage({ title: 'Not found', text: 'There is nothing at this address.', viewer: null }),
          404,
        ),
      );

      c.get('/static/:name', { schema: { hide: true } }, async (request, reply) => {
        const asset = assets.byPath.get(request.url.split('?')[0]!);
        if (asset === undefined) return reply.callNotFound();
        return reply
          .header('content-type', asset.contentType)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .header('x-content-type-options', 'nosniff')
          .send(asset.body);
      });

      c.get('/', { schema: { hide: true } }, async (request, reply) => {
        const token = readCookie(request, cookie.name);
        const user = token === null ? null : await sessionOf(database, clock, token, idleMs);
        if (user !== null) return reply.redirect('/console/pages', 303);
        const reason = queryText(request, 'signed');
        return sendHtml(reply, renderSignedOut(reason === 'out' ? 'signed-out' : token !== null ? 'expired' : 'none'));
      });

      // The link opens a page with one button: fetching the link (a mail scanner's preview) uses nothing.
      c.get('/sign-in', { schema: { hide: true } }, async (request, reply) => {
        const token = queryText(request, 'token', 100);
        if (!(await signInLinkUsable(database.kysely, clock, token))) return sendLinkRefused(reply);
        return sendHtml(reply, renderSignIn(token));
      });

      c.post('/sign-in', { schema: { hide: true } }, async (request, reply) => {
        checkSameOrigin(request);
        let session;
        try {
          session = await signIn(database, clock, formText(request, 'token', 100));
        } catch (error) {
          if (error instanceof AppError && error.code === 'url_expired') return sendLinkRefused(reply);
          throw error;
        }
        setSessionCookie(reply, cookie, session.token);
        return reply.redirect('/console/pages', 303);
      });

      c.post('/sign-out', { schema: { hide: true } }, async (request, reply) => {
        const token = readCookie(request, cookie.name);
        const user = token === null ? null : await sessionOf(database, clock, token, idleMs);
        if (token !== null && user !== null) {
          checkCsrf(request, user);
          await signOut(database, clock, token);
        }
        clearSessionCookie(reply, cookie);
        return reply.redirect('/console?signed=out', 303);
      });

      // The signed-in area.
      await c.register(async (area) => {
        area.addHook('preHandler', async (request, reply) => {
          const token = readCookie(request, cookie.name);
          const user = token === null ? null : await sessionOf(database, clock, token, idleMs);
          if (user === null) {
            if (token !== null) clearSessionCookie(reply, cookie);
            if (request.method === 'GET' || request.method === 'HEAD') return reply.redirect('/console', 303);
            const text = 'Your session has ended. Sign in again with a new link.';
            return sendHtml(reply, renderMessage({ title: 'Signed out', text, viewer: null }), 401);
          }
          if (request.method !== 'GET' && request.method !== 'HEAD') checkCsrf(request, user);
          setUserOf(request, user);
        });
        await area.register(consolePagesRoutes);
        await area.register(consoleAudiencesRoutes);
        await area.register(consoleImportRoutes);
        await area.register(consoleUsersRoutes);
        await area.register(consoleAnalyticsRoutes);
        await area.register(consolePeopleRoutes);
        await area.register(consoleSettingsRoutes);
      });
    },
    { prefix: '/console' },
  );
};

function sendLinkRefused(reply: FastifyReply): FastifyReply {
  const text = 'This sign-in link has expired or was already used. Ask for a new one.';
  return sendHtml(reply, renderMessage({ title: 'Link not valid', text, viewer: null }), 403);
}

const ERROR_TEXT: Record<number, { title: string; text: string }> = {
  400: { title: 'Bad request', text: 'The request could not be understood.' },
  403: { title: 'Refused', text: 'This request was refused.' },
  404: { title: 'Not found', text: 'There is nothing at this address.' },
  409: { title: 'Not possible now', text: 'This change is not possible in the current state.' },
  413: { title: 'Too large', text: 'What you sent is too large.' },
  415: { title: 'Not a form', text: 'Send this as a form.' },
  422: { title: 'Check your input', text: 'Some of what you sent is not valid.' },
};

/** Errors as console pages: an AppError's own words (they are written for people), otherwise a status's. */
function sendError(request: FastifyRequest, reply: FastifyReply, error: FastifyError | AppError): FastifyReply {
  const status = error instanceof AppError ? error.status : (error.statusCode ?? 500);
  if (status >= 500) {
    request.log.error({ err: error }, 'console request failed');
    const text = 'Something went wrong on our side. Please try again in a moment.';
    return sendHtml(reply, renderMessage({ title: 'Something went wrong', text, viewer: null }), 500);
  }
  const known = ERROR_TEXT[status] ?? ERROR_TEXT[400]!;
  const text = error instanceof AppError ? error.detail : known.text;
  const back = { href: '/console', label: 'Back to the console' };
  return sendHtml(reply, renderMessage({ title: known.title, text, viewer: null, link: back }), status);
}
