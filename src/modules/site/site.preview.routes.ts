import type { FastifyPluginAsync } from 'fastify';
import { htmlErrors, sendErrorPage } from './site.error-pages.js';
import { htmlHeaders } from './site.headers.js';
import type { VisitorSide } from './site.page-host.js';
import { PREVIEW_STATIC } from './site.preview.js';
import { staticAssets } from './site.static.js';

const ID = /^[a-z]+_[0-9a-z]{26}$/;
const IMAGE_ID = /^(?:file|asset)_[0-9a-z]{26}$/;
const MAC = /^[A-Za-z0-9_-]{22}$/;
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** What every route here is: a read on the API host (never a page host), hidden from the API's document. */
const API_HOST_READ = {
  method: ['GET', 'HEAD'] as ('GET' | 'HEAD')[],
  schema: { hide: true },
  errorHandler: htmlErrors,
};

/**
 * Previews of versions (docs/api.md, Publishing, previewing and rolling back versions), on the API
 * host: `/_ap/preview/<tenantId>/<versionId>?expires=…&signature=…` (made by
 * `POST …/versions/{version_id}/preview`) renders that version as a visitor would see it, with a
 * "Preview" marker, `X-Robots-Tag: noindex`, `Cache-Control: private, no-store`, and no view
 * token, so no visit or session is recorded (and the collection endpoint lives on page hosts
 * only). Never kept in the page cache. The runtime's stylesheet and script, and the version's
 * images, are served beside it, under their own prefixes. A changed or expired URL is an HTML error page (403).
 */
export const previewRoutes: FastifyPluginAsync<VisitorSide> = async (app, { pages, signer, origin }) => {
  const { clock } = app.ctx;
  const assets = staticAssets();

  app.route({
    ...API_HOST_READ,
    url: '/_ap/preview/:tenant_id/:version_id',
    handler: async (request, reply) => {
      const { tenant_id: tenantId, version_id: versionId } = request.params as Record<string, string>;
      const { expires, signature } = request.query as { expires?: unknown; signature?: unknown };
      if (
        !ID.test(tenantId!) ||
        !ID.test(versionId!) ||
        typeof expires !== 'string' ||
        !/^\d{1,12}$/.test(expires) ||
        typeof signature !== 'string' ||
        !signer.checkPreview(tenantId!, versionId!, expires, signature)
      ) {
        return sendErrorPage(reply, 403, 'preview-invalid');
      }
      if (Number(expires) * 1000 <= clock.now().getTime()) return sendErrorPage(reply, 403, 'preview-expired');
      const page = await pages.preview(tenantId!, versionId!, origin(request));
      if (page === null) return sendErrorPage(reply, 404);
      return htmlHeaders(reply, page.csp)
        .header('cache-control', 'private, no-store')
        .header('x-robots-tag', 'noindex')
        .send(page.html);
    },
  });

  app.route({
    ...API_HOST_READ,
    url: '/_ap/preview-img/:tenant_id/:id/:mac',
    handler: async (request, reply) => {
      const { tenant_id: tenantId, id, mac } = request.params as Record<string, string>;
      if (!ID.test(tenantId!) || !IMAGE_ID.test(id!) || !MAC.test(mac!)) return sendErrorPage(reply, 404);
      const file = await pages.image(tenantId!, id!, mac!);
      if (file === null) return sendErrorPage(reply, 404);
      return reply
        .header('content-type', file.contentType)
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(file.bytes);
    },
  });

  // The runtime's stylesheet and script, for previews (only under this prefix on the API host).
  for (const asset of assets.byPath.values()) {
    app.route({
      ...API_HOST_READ,
      url: asset.path.replace('/_ap/', PREVIEW_STATIC),
      handler: async (_request, reply) =>
        reply
          .header('content-type', asset.contentType)
          .header('cache-control', ASSET_CACHE_CONTROL)
          .header('x-content-type-options', 'nosniff')
          .send(asset.body),
    });
  }
};
