import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import compress from '@fastify/compress';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { loadServiceSecret } from '../../db/service-secrets.js';
import { requestHostname } from '../../lib/domain-name.js';
import { SessionTokens } from '../audience-sessions/index.js';
import { fileRuntime } from '../files/index.js';
import { ServingRevisions } from '../serving/index.js';
import { pageHostsFor } from '../tenant-domains/index.js';
import { agentRoutes } from './site.agent.routes.js';
import { collectRoutes } from './site.collect.routes.js';
import { htmlErrors, sendErrorPage } from './site.error-pages.js';
import { formRoutes } from './site.forms.routes.js';
import { ON_PAGE_HOSTS, pageHostConstraint, type VisitorSide } from './site.page-host.js';
import { pageHitsAhead } from './site.pages.ahead.js';
import { pageRoutes } from './site.pages.routes.js';
import { observePageCache } from './site.metrics.js';
import { previewRoutes } from './site.preview.routes.js';
import { PageService } from './site.pages.service.js';
import { staticAssets } from './site.static.js';
import { PageSigner } from './site.tokens.js';

/**
 * The visitor side (docs/pages-runtime.md): tenant hosts serve people, not API clients. Its areas
 * are peers, each a routes file over its own service: pages (site.pages.*), collect
 * (site.collect.*), forms (site.forms.*). This file only builds what they share, and answers 405
 * for everything else.
 */
export const siteRoutes: FastifyPluginAsync = async (app) => {
  const { database, clock, config } = app.ctx;
  const hosts = pageHostsFor(app.ctx);
  await hosts.start();
  app.addHook('onClose', () => hosts.stop());
  app.addConstraintStrategy(pageHostConstraint(hosts));

  const signer = new PageSigner(await loadServiceSecret(database.kysely, 'page-runtime', clock, config.secretKeys));
  const tokens = await SessionTokens.load(database.kysely, clock, config.secretKeys);
  const assets = staticAssets();
  const renderAssets = { stylesheet: assets.stylesheet.path, script: assets.script.path };
  const { store } = await fileRuntime(app.ctx);
  // A page's own origin, from the verified host name and the configured scheme and port, never
  // the raw header: behind a proxy PUBLIC_BASE_URL says what visitors use; without it, the
  // request's scheme (http or https only) and the port this server listens on, if the Host named it.
  const base = config.publicBaseUrl === null ? null : new URL(config.publicBaseUrl);
  const basePort = base === null || base.port === '' ? '' : `:${base.port}`;
  const listeningPort = `:${config.port}`;
  const originFrom = (header: string, host: string, secure: boolean) => {
    if (base !== null) return `${base.protocol}//${host}${basePort}`;
    const port = header.endsWith(listeningPort) ? listeningPort : '';
    return `${secure ? 'https' : 'http'}://${host}${port}`;
  };
  const origin = (request: FastifyRequest) => {
    const header = request.headers.host ?? '';
    return originFrom(header, requestHostname(header) ?? '', request.protocol === 'https');
  };
  // Ahead of the router there is no request.protocol: without PUBLIC_BASE_URL, a request's scheme
  // comes from its socket, or (TRUST_PROXY) from a header only Fastify's proxy rules may read.
  const proxied = config.trustProxy !== false && config.trustProxy !== 0;
  const rawOrigin = (request: IncomingMessage, host: string) =>
    base === null && proxied
      ? null
      : originFrom(request.headers.host ?? '', host, (request.socket as TLSSocket).encrypted === true);
  const revisions = new ServingRevisions(database, app.ctx.logger);
  await revisions.start();
  app.addHook('onClose', () => revisions.stop());
  const pages = new PageService(
    database,
    signer,
    renderAssets,
    store,
    revisions,
    config.pageCacheMegabytes * 1024 * 1024,
  );
  observePageCache(app.ctx.metrics, pages);
  app.ctx.ahead.add(pageHitsAhead(pages, hosts, rawOrigin));
  const visitor: VisitorSide = {
    tenantOf: (request: FastifyRequest) => hosts.tenantOf(requestHostname(request.headers.host) ?? ''),
    origin,
    pages,
    revisions,
    signer,
    tokens,
  };

  // Page hosts answer people: errors are small HTML pages (the collection endpoint keeps JSON).
  await app.register(compress, { global: true, encodings: ['br', 'gzip'], threshold: 1024 });
  app.removeAllContentTypeParsers();
  const json = app.getDefaultJsonParser('error', 'error');
  // No parser-wide limit: each route says how large its body may be.
  app.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string' }, json);

  await app.register(pageRoutes, visitor);
  await app.register(collectRoutes, visitor);
  await app.register(formRoutes, visitor);
  await app.register(agentRoutes, visitor);
  await app.register(previewRoutes, visitor);

  // Everything else on a page host: only pages live here.
  app.route({
    method: ['PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/*',
    constraints: ON_PAGE_HOSTS,
    schema: { hide: true },
    errorHandler: htmlErrors,
    handler: async (_request, reply) => sendErrorPage(reply.header('allow', 'GET, HEAD, POST'), 405),
  });
};
