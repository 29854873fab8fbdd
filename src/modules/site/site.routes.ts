import compress from '@fastify/compress';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { loadServiceSecret } from '../../db/service-secrets.js';
import { AppError } from '../../http/errors.js';
import { sendProblem } from '../../http/plugins/problem.js';
import { TokenBuckets } from '../../http/token-buckets.js';
import { requestHostname } from '../../lib/domain-name.js';
import { SessionTokens } from '../audience-sessions/index.js';
import { fileRuntime } from '../files/index.js';
import { pageHostsFor, type PageHosts } from '../tenant-domains/index.js';
import { chooseEncoding, etagFor, notModified } from './site.cache.js';
import { COLLECT_BODY_LIMIT, collector } from './site.collect.js';
import { FORM_BODY_LIMIT, formHandler } from './site.forms.js';
import { ERROR_PAGE_CSP, renderErrorPage } from './site.render.js';
import { PageService } from './site.service.js';
import { staticAssets } from './site.static.js';
import { htmlHeaders } from './site.headers.js';
import { PageSigner } from './site.tokens.js';

/** Shared and browser caches may keep a page a minute, and serve it stale for ten while they refetch. */
export const PAGE_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=600';
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const IMAGE_CACHE_CONTROL = 'public, max-age=86400';

/**
 * The router's decision "page host or not" (synchronous, per request): a request whose Host is a
 * live tenant domain only matches the routes constrained to `{ pageHost: 'page' }` (below), so no
 * API route is reachable on a tenant domain; any other host never matches them.
 */
function pageHostConstraint(hosts: PageHosts) {
  return {
    name: 'pageHost',
    mustMatchWhenDerived: true,
    storage() {
      const stores = new Map<string, unknown>();
      return {
        get: (value: string) => (stores.get(value) ?? null) as never,
        set: (value: string, store: unknown) => void stores.set(value, store),
      };
    },
    deriveConstraint(request: { headers: Record<string, string | string[] | undefined> }) {
      const host = requestHostname(request.headers.host as string | undefined);
      return host !== null && hosts.has(host) ? 'page' : undefined;
    },
  };
}

const IMAGE_PATH = /^\/_ap\/img\/((?:file|asset)_[0-9a-z]{26})\/([A-Za-z0-9_-]{22})$/;

export const siteRoutes: FastifyPluginAsync = async (app) => {
  const { database, clock, config } = app.ctx;
  const hosts = pageHostsFor(app.ctx);
  await hosts.start();
  app.addHook('onClose', () => hosts.stop());
  app.addConstraintStrategy(pageHostConstraint(hosts));
  const constraints = { pageHost: 'page' };

  const signer = new PageSigner(await loadServiceSecret(database.kysely, 'page-runtime', clock, config.secretKeys));
  const tokens = await SessionTokens.load(database.kysely, clock, config.secretKeys);
  const files = await fileRuntime(app.ctx);
  const assets = staticAssets();
  const renderAssets = { stylesheet: assets.stylesheet.path, script: assets.script.path };
  const pages = new PageService(database, signer, renderAssets);
  const misses =
    config.pageMissesPerMinute > 0
      ? new TokenBuckets(config.pageMissesPerMinute / 60, config.pageMissesPerMinute)
      : null;
  const collect = collector({
    database,
    clock,
    signer,
    tokens,
    perClientPerSecond: config.pageEventsPerSecond,
    perPagePerSecond: config.pageEventsPerPagePerSecond,
  });
  const errorPages = new Map<number, string>();
  const errorPage = (status: number) => {
    let html = errorPages.get(status);
    if (html === undefined) errorPages.set(status, (html = renderErrorPage(status)));
    return html;
  };

  // Page hosts answer people: errors are small HTML pages (the collection endpoint keeps JSON).
  await app.register(compress, { global: true, encodings: ['br', 'gzip'], threshold: 1024 });
  app.removeAllContentTypeParsers();
  const json = app.getDefaultJsonParser('error', 'error');
  // No parser-wide limit: each route says how large its body may be.
  app.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string' }, json);

  const sendError = (reply: FastifyReply, status: number) =>
    htmlHeaders(reply.code(status).header('cache-control', 'no-store'), ERROR_PAGE_CSP).send(errorPage(status));

  /** Errors on page hosts as the small HTML pages: a bad URL is "no page here", never a stack trace. */
  const htmlErrors = (
    error: { statusCode?: number; status?: number },
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const status = error.status ?? error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'page request failed');
      return sendError(reply, 500);
    }
    return sendError(reply, status === 405 || status === 410 || status === 429 ? status : 404);
  };

  const hidden: RouteShorthandOptions = { schema: { hide: true }, errorHandler: htmlErrors };
  const tenantOf = (request: FastifyRequest) => hosts.tenantOf(requestHostname(request.headers.host) ?? '');

  /** A page that is not there: 404/410, counted against the client's budget of misses. */
  const miss = (request: FastifyRequest, reply: FastifyReply, status: 404 | 410) => {
    misses?.take(request.ip);
    return sendError(reply, status);
  };

  const origin = (request: FastifyRequest) => {
    const scheme =
      config.publicBaseUrl !== null ? new URL(config.publicBaseUrl).protocol.slice(0, -1) : request.protocol;
    return `${scheme}://${request.headers.host ?? ''}`;
  };

  app.route({
    ...hidden,
    method: ['GET', 'HEAD'],
    url: '/*',
    constraints,
    handler: async (request, reply) => {
      if (misses !== null && !misses.allows(request.ip)) return sendError(reply.header('retry-after', '60'), 429);
      const host = requestHostname(request.headers.host) ?? '';
      const outcome = await pages.page(host, request.url.split('?', 1)[0]!, origin(request));
      if (outcome.status !== 200) return miss(request, reply, outcome.status);
      const { entry } = outcome;
      const encoding = chooseEncoding(request.headers['accept-encoding']);
      htmlHeaders(reply, entry.csp)
        .header('cache-control', PAGE_CACHE_CONTROL)
        .header('etag', etagFor(entry, encoding))
        .header('vary', 'Accept-Encoding');
      if (notModified(request.headers['if-none-match'], entry)) return reply.code(304).send();
      if (encoding !== 'identity') reply.header('content-encoding', encoding);
      return reply.send(pages.encoded(entry, encoding));
    },
  });

  app.route({
    ...hidden,
    method: ['GET', 'HEAD'],
    url: '/_ap/*',
    constraints,
    handler: async (request, reply) => {
      const path = request.url.split('?', 1)[0]!;
      const asset = assets.byPath.get(path);
      if (asset !== undefined) {
        return reply
          .header('content-type', asset.contentType)
          .header('cache-control', ASSET_CACHE_CONTROL)
          .header('x-content-type-options', 'nosniff')
          .send(asset.body);
      }
      const image = IMAGE_PATH.exec(path);
      const tenantId = tenantOf(request);
      if (image === null || tenantId === undefined || !signer.checkImage(tenantId, image[1]!, image[2]!)) {
        return miss(request, reply, 404);
      }
      const file = await pages.image(tenantId, image[1]!, files.store);
      if (file === null) return miss(request, reply, 404);
      return reply
        .header('content-type', file.contentType)
        .header('cache-control', IMAGE_CACHE_CONTROL)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cross-origin-resource-policy', 'cross-origin')
        .send(file.bytes);
    },
  });

  app.route({
    method: 'POST',
    url: '/_ap/collect',
    constraints,
    bodyLimit: COLLECT_BODY_LIMIT,
    schema: { hide: true },
    handler: async (request, reply) => {
      const tenantId = tenantOf(request);
      if (tenantId === undefined) return sendError(reply, 404);
      return collect.handle(request, reply, tenantId);
    },
  });

  const submit = formHandler({
    database,
    clock,
    pages,
    tokens,
    perClientPerMinute: config.formSubmissionsPerMinute,
    minFillMs: config.formMinFillMs,
    dedupeWindowSeconds: config.formDedupeWindowSeconds,
    origin,
    sendError,
  });

  /** What is refused before the form handler runs (the body parser): a clear problem, never a 5xx. */
  const formErrors = (
    error: { statusCode?: number; status?: number; code?: string },
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const status = error.status ?? error.statusCode ?? 500;
    if (status >= 500) return htmlErrors(error, request, reply);
    reply.header('cache-control', 'no-store');
    if (status === 415) {
      const detail = 'Send the form as application/x-www-form-urlencoded (a plain HTML form) or application/json.';
      return sendProblem(request, reply, new AppError('unsupported_media_type', detail));
    }
    if (status === 413) {
      const detail = `The form is larger than the limit of ${FORM_BODY_LIMIT / 1024} KiB.`;
      return sendProblem(request, reply, new AppError('payload_too_large', detail));
    }
    return sendProblem(request, reply, new AppError('malformed_json', 'The form body could not be read.'));
  };

  // A page's forms post to the page's own address (docs/forms.md); only they take form bodies.
  await app.register(async (forms) => {
    forms.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    forms.route({
      method: 'POST',
      url: '/*',
      constraints,
      bodyLimit: FORM_BODY_LIMIT,
      schema: { hide: true },
      errorHandler: formErrors,
      handler: async (request, reply) => submit(request, reply, requestHostname(request.headers.host) ?? ''),
    });
  });

  // Everything else on a page host: only pages live here.
  app.route({
    ...hidden,
    method: ['PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/*',
    constraints,
    handler: async (_request, reply) => {
      reply.header('allow', 'GET, HEAD, POST');
      return sendError(reply, 405);
    },
  });
};

/** Browsers that ask the API host for a path it does not have get the same small page (not JSON). */
export function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return (request.method === 'GET' || request.method === 'HEAD') && accept.includes('text/html');
}
