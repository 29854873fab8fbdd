import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { DailyCap } from '../../db/daily-caps.js';
import { declaredCrawler } from '../../http/declared-crawler.js';
import { AppError } from '../../http/errors.js';
import { sendProblem } from '../../http/plugins/problem.js';
import { TokenBuckets } from '../../http/token-buckets.js';
import { requestHostname } from '../../lib/domain-name.js';
import { FORM_LIMITS } from '../form-submissions/index.js';
import { htmlErrors, sendErrorPage } from './site.error-pages.js';
import { FormService } from './site.forms.service.js';
import { htmlHeaders, loggedPagePath } from './site.headers.js';
import { ON_PAGE_HOSTS, type VisitorSide } from './site.page-host.js';
import { clientKey } from '../../http/client-address.js';

/** The largest form body accepted (docs/forms.md, Limits). */
const FORM_BODY_LIMIT = FORM_LIMITS.bodyBytes;
const FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'application/json']);
const UNSUPPORTED_FORM = 'Send the form as application/x-www-form-urlencoded (a plain HTML form) or application/json.';

const mediaType = (request: FastifyRequest) =>
  (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();

/** The page script (and any API-like client) asks for JSON; a browser without script gets HTML. */
const wantsJson = (request: FastifyRequest) =>
  mediaType(request) === 'application/json' || (request.headers.accept ?? '').includes('application/json');

/**
 * Only the page itself posts its form: browsers say where a request comes from. The Origin's host
 * is compared (not its scheme: behind a TLS proxy this process may see plain http).
 */
function fromOtherSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  return (
    (site !== undefined && site !== 'same-origin' && site !== 'none') ||
    (origin !== undefined && originHost(origin) !== (request.headers.host ?? '').toLowerCase())
  );
}

/** `host[:port]` of an Origin header, lowercase; null for `null` or anything unparseable. */
function originHost(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}

/** Post/redirect/get to the thank-you state: a fragment, so the page's cached bytes show it (CSS :target). */
function thankYou(reply: FastifyReply, path: string, actionId: string): FastifyReply {
  const safePath = path.startsWith('/') && !path.startsWith('//') && !path.includes('\\') ? path : '/';
  return reply
    .code(303)
    .header('location', `${safePath}#ap-sent-${encodeURIComponent(actionId)}`)
    .send();
}

/** What is refused before the handler runs (the body parser): a clear problem, never a 5xx. */
function bodyErrors(
  error: { statusCode?: number; status?: number; code?: string },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const status = error.status ?? error.statusCode ?? 500;
  if (status >= 500) return htmlErrors(error, request, reply);
  reply.header('cache-control', 'no-store');
  if (status === 415) return sendProblem(request, reply, new AppError('unsupported_media_type', UNSUPPORTED_FORM));
  if (status === 413) {
    const detail = `The form is larger than the limit of ${FORM_BODY_LIMIT / 1024} KiB.`;
    return sendProblem(request, reply, new AppError('payload_too_large', detail));
  }
  return sendProblem(request, reply, new AppError('malformed_json', 'The form body could not be read.'));
}

/** No page (404) or one taken down (410) at the address the form was posted to. */
function noPage(request: FastifyRequest, reply: FastifyReply, json: boolean, status: 404 | 410) {
  if (!json) return sendErrorPage(reply, status);
  const error =
    status === 410
      ? new AppError('page_gone', 'This page has been taken down; the form can no longer be sent.', [], 410)
      : new AppError('not_found', 'There is no page with a form at this address.');
  return sendProblem(request, reply, error);
}

/**
 * `POST {page path}` on a page host: a page's form, posted to the page's own address (docs/forms.md,
 * Protocol). Form-urlencoded from a browser without script (303 to the thank-you state, or the
 * page again with the errors), JSON from the page script (201/200 JSON, or problem+json).
 */
export const formRoutes: FastifyPluginAsync<VisitorSide> = async (app, { pages, tokens, signer, origin, tenantOf }) => {
  const { database, clock, config, logger } = app.ctx;
  const submissions = new DailyCap(database, clock, logger, 'form_submissions', config.formSubmissionsPerTenantPerDay);
  const forms = new FormService(database, clock, pages, tokens, signer, submissions, {
    minFillMs: config.formMinFillMs,
    dedupeWindowMs: config.formDedupeWindowSeconds * 1000,
  });
  const perMinute = config.formSubmissionsPerMinute;
  const clients = perMinute > 0 ? new TokenBuckets(perMinute / 60, perMinute) : null;

  /**
   * What is refused before any database work (so that a flood costs as little as possible): another
   * site's post, a body that is no form, too many forms from one address. Null: go on.
   */
  const refuseEarly = (request: FastifyRequest, reply: FastifyReply, json: boolean) => {
    if (fromOtherSite(request)) {
      const error = new AppError('cross_origin_request', 'Forms are accepted from the page’s own origin only.');
      return sendProblem(request, reply, error);
    }
    if (!FORM_TYPES.has(mediaType(request))) {
      return sendProblem(request, reply, new AppError('unsupported_media_type', UNSUPPORTED_FORM));
    }
    // A client that says it is a bot (crawler, monitor, script library) sends no forms.
    if (declaredCrawler(request.headers['user-agent'])) {
      return sendProblem(request, reply, new AppError('bot_refused', 'Forms are not accepted from automated clients.'));
    }
    const taken = clients?.take(clientKey(request.ip));
    if (taken === undefined || taken.ok) return null;
    reply.header('retry-after', String(taken.retryAfterSeconds));
    if (!json) return sendErrorPage(reply, 429);
    const message = `Too many forms sent from your address; please try again in ${taken.retryAfterSeconds} s.`;
    return sendProblem(request, reply, new AppError('rate_limited', message));
  };

  // Only these routes take form bodies.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  /**
   * `GET /_ap/form-stamp`: the page script asks when a form comes into view, and sends the stamp
   * with the form (docs/forms.md, Fill time). Per visitor, so never in the page's shared bytes.
   */
  app.route({
    method: 'GET',
    url: '/_ap/form-stamp',
    constraints: ON_PAGE_HOSTS,
    schema: { hide: true },
    handler: async (request, reply) => {
      const tenantId = tenantOf(request);
      if (tenantId === undefined) return sendErrorPage(reply, 404);
      reply.header('cache-control', 'no-store');
      return { stamp: forms.stamp(tenantId, clientKey(request.ip)), minFillMs: config.formMinFillMs };
    },
  });

  app.route({
    method: 'POST',
    url: '/*',
    constraints: ON_PAGE_HOSTS,
    bodyLimit: FORM_BODY_LIMIT,
    schema: { hide: true },
    errorHandler: bodyErrors,
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      // A form's address may be a person's page: its last segment never reaches the log.
      request.logPath = loggedPagePath(request.url.split('?', 1)[0]!, null);
      const json = wantsJson(request);
      const refused = refuseEarly(request, reply, json);
      if (refused !== null) return refused;

      const path = request.url.split('?', 1)[0]!;
      const pageOrigin = origin(request);
      const host = requestHostname(request.headers.host) ?? '';
      const client = clientKey(request.ip);
      const outcome = await forms.accept({ host, path, origin: pageOrigin, client, body: request.body });
      if (outcome.kind === 'no-page') return noPage(request, reply, json, outcome.status);
      if (outcome.kind === 'refused') {
        if (json || outcome.form === null) return sendProblem(request, reply, outcome.error);
        const { html, csp } = forms.pageAgain(outcome.page, outcome.form, pageOrigin);
        return htmlHeaders(reply.code(outcome.error.status), csp).send(html);
      }
      if (!json) return thankYou(reply, path, outcome.actionId);
      const { formSubmissionId, created } = outcome;
      return reply.code(created ? 201 : 200).send({ formSubmissionId, status: 'sent', replayed: !created });
    },
  });
};
