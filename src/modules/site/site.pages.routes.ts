import type { FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { TokenBuckets } from '../../http/token-buckets.js';
import { requestHostname } from '../../lib/domain-name.js';
import { notModified, representation } from './site.cache.js';
import { htmlErrors, sendErrorPage } from './site.error-pages.js';
import { loggedPagePath, pageHeaders } from './site.headers.js';
import { ON_PAGE_HOSTS, type VisitorSide } from './site.page-host.js';
import { staticAssets } from './site.static.js';
import { clientKey } from '../../http/client-address.js';

const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const IMAGE_CACHE_CONTROL = 'public, max-age=86400';

/** What every route here is: a read on a page host, hidden from the API's document, failing as an HTML page. */
const PAGE_HOST_READ = {
  method: ['GET', 'HEAD'] as HTTPMethods[],
  constraints: ON_PAGE_HOSTS,
  schema: { hide: true },
  errorHandler: htmlErrors,
};

const IMAGE_PATH = /^\/_ap\/img\/((?:file|asset)_[0-9a-z]{26})\/([A-Za-z0-9_-]{22})$/;

/**
 * `GET`/`HEAD` on a page host (docs/pages-runtime.md): the page of a link (PageService: resolved,
 * rendered once per version, then served from the cache with its validators and encodings), the
 * runtime's own stylesheet and script, and the images the pages show at their signed paths.
 */
export const pageRoutes: FastifyPluginAsync<VisitorSide> = async (app, { pages, tenantOf, origin }) => {
  const { config } = app.ctx;
  const assets = staticAssets();
  const misses =
    config.pageMissesPerMinute > 0
      ? new TokenBuckets(config.pageMissesPerMinute / 60, config.pageMissesPerMinute)
      : null;

  /** A page that is not there: 404/410, counted against the client's budget of misses. */
  const miss = (request: FastifyRequest, reply: FastifyReply, status: 404 | 410) => {
    misses?.take(clientKey(request.ip));
    return sendErrorPage(reply, status);
  };

  app.route({
    ...PAGE_HOST_READ,
    url: '/*',
    // The bytes are compressed once per version (site.cache.ts), never per response.
    compress: false,
    handler: async (request, reply) => {
      const path = request.url.split('?', 1)[0]!;
      request.logPath = loggedPagePath(path, null);
      if (misses !== null && !misses.allows(clientKey(request.ip)))
        return sendErrorPage(reply.header('retry-after', '60'), 429);
      const host = requestHostname(request.headers.host) ?? '';
      const outcome = await pages.page(host, path, origin(request));
      if (outcome.status !== 200) return miss(request, reply, outcome.status);
      const { entry } = outcome;
      request.logPath = loggedPagePath(path, entry.personal);
      const { encoding, bytes } = representation(entry, request.headers['accept-encoding']);
      // One precomputed object per (entry, encoding): a hit assembles no header one by one.
      reply.headers(pageHeaders(entry, encoding));
      if (notModified(request.headers['if-none-match'], entry)) return reply.code(304).send();
      if (encoding !== 'identity') reply.header('content-encoding', encoding);
      return reply.send(bytes);
    },
  });

  app.route({
    ...PAGE_HOST_READ,
    url: '/_ap/*',
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
      if (image === null || tenantId === undefined) return miss(request, reply, 404);
      const file = await pages.image(tenantId, image[1]!, image[2]!);
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
};
