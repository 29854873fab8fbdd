import http from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import { sql } from 'kysely';
import { ApiKeyVerifier, FailedAuthLimiter } from './auth/api-key-verifier.js';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import { loadServiceSecret } from './db/service-secrets.js';
import type { AppContext } from './http/context.js';
import { Pager } from './http/pagination.js';
import { apiKeyAuthenticator, registerApiKeyAuth } from './http/plugins/auth.js';
import { answerUnroutable } from './http/plugins/bad-url.js';
import { MAX_PATH_ID_LENGTH, registerMethodNotAllowed } from './http/plugins/method-not-allowed.js';
import { documentRoute, finishDocument, refuseUnknownQueryParameters } from './http/openapi.js';
import { registerNulGuard } from './http/plugins/nul-guard.js';
import { registerProblemHandler } from './http/plugins/problem.js';
import { registerRateLimit } from './http/plugins/rate-limit.js';
import { Problem } from './http/schemas.js';
import { validatorCompiler } from './http/validation.js';
import { systemClock, type Clock } from './lib/clock.js';
import { LazyChildLogger } from './lib/logger.js';
import { AheadOfRouter } from './http/ahead.js';
import {
  collectProcessDefaults,
  exposition,
  Histogram,
  METRICS_CONTENT_TYPE,
  processMetrics,
  Registry,
  snapshotOf,
  type MetricsSnapshot,
} from './metrics/metrics.js';
import { modules } from './modules/index.js';
import { browserNotFound } from './modules/site/index.js';

export interface AppDeps {
  config: Config;
  database: Database;
  logger: Logger;
  clock?: Clock;
  /**
   * Where a scrape finds the metrics of the rest of the service (src/main wires it): the background
   * workers' thread, and under WEB_CONCURRENCY the other server processes. Given this process's
   * own snapshot, it returns every source to add up. Unset: this process alone.
   */
  metricsFrom?: (own: MetricsSnapshot) => Promise<MetricsSnapshot[]>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
// Generated request ids: a random prefix per process and a counter (unique without a UUID per request).
const requestIdPrefix = randomBytes(8).toString('hex');
let requestCount = 0;

/** Longer than the usual load balancer's idle timeout (60 s), so the balancer closes first. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Builds the HTTP application. It never reads the environment: everything comes in `deps`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const authenticate = apiKeyAuthenticator(database, {
    verifier: new ApiKeyVerifier(database.kysely, clock),
    failures: new FailedAuthLimiter(clock, config.authFailuresPerMinute),
  });

  const ahead = new AheadOfRouter();
  const app = Fastify({
    // The server asks `ahead` first (page-cache hits), then hands the request to Fastify. Fastify
    // sets no timeouts on a server it did not make: they are set here, as it would set them.
    serverFactory: (handler) => {
      const server = http.createServer((request, response) => {
        if (!ahead.answered(request, response)) handler(request, response);
      });
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.requestTimeout = config.requestTimeoutMs;
      server.setTimeout(config.requestTimeoutMs);
      return server;
    },
    loggerInstance: logger as FastifyBaseLogger,
    childLoggerFactory: (parent, bindings) =>
      new LazyChildLogger(parent as unknown as Logger, bindings) as unknown as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: {
      maxParamLength: MAX_PATH_ID_LENGTH,
      // Without a handler the router treats an over-long segment as no match: the not-found
      // handler answers it (after authentication under /v0) instead of Fastify's own 414 JSON.
      onMaxParamLength: null as never,
      ignoreTrailingSlash: true,
    },
    frameworkErrors: answerUnroutable(authenticate),
    // a hop count or a list of proxy addresses/networks (proxy-addr); the types only name some forms
    trustProxy: config.trustProxy as boolean,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given)
        ? given
        : `req_${requestIdPrefix}${(requestCount++).toString(16).padStart(16, '0')}`;
    },
  });

  const metrics = new Registry();
  collectProcessDefaults();
  const ctx: AppContext = {
    config,
    database,
    clock,
    logger,
    metrics,
    ahead,
    pager: new Pager(await loadServiceSecret(database.kysely, 'cursor-signing', clock, config.secretKeys)),
  };
  app.decorate('ctx', ctx);
  app.setValidatorCompiler(validatorCompiler());
  // Bodies are JSON and only JSON: anything else is 415 rather than a guess.
  app.removeContentTypeParser(['text/plain']);
  app.addSchema(Problem);
  for (const module of modules) for (const schema of module.schemas ?? []) app.addSchema(schema);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', observeLatency(metrics));
  // The request line is built only when it will be written: above LOG_LEVEL=info there is no hook.
  if (logger.isLevelEnabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        {
          operationId: request.routeOptions.schema?.operationId,
          method: request.method,
          // The path only: query strings carry search terms (emails, phone numbers) that logs must not keep.
          path: request.logPath ?? request.url.split('?')[0],
          statusCode: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          tenantId: request.principal?.tenantId,
        },
        'request',
      );
      done();
    });
  }

  app.addHook('onRoute', refuseUnknownQueryParameters);
  registerProblemHandler(app);
  const notFound = registerMethodNotAllowed(app, { notFoundPage: browserNotFound });
  registerNulGuard(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Audience Page Service',
        version: '0',
        description:
          'Tenant-scoped JSON API for personalised pages, their audiences, and the people and companies they address. ' +
          'Errors are RFC 9457 problem+json; decisions where the interface spec is silent are in docs/api.md.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: documentRoute,
    transformObject: (document) =>
      finishDocument('openapiObject' in document ? document.openapiObject : document.swaggerObject, {
        publicBaseUrl: config.publicBaseUrl,
      }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    // Off unless a token is set; not a page route, so never reachable on a tenant domain.
    if (config.metricsToken === null) return notFound(request, reply);
    if (!bearerMatches(request.headers.authorization, config.metricsToken)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="metrics"')
        .type('text/plain; charset=utf-8')
        .send('METRICS_TOKEN required: Authorization: Bearer <token>\n');
    }
    const own = await snapshotOf(metrics, processMetrics);
    const sources = deps.metricsFrom ? await deps.metricsFrom(own) : [own];
    return reply
      .type(METRICS_CONTENT_TYPE)
      .header('cache-control', 'no-store')
      .send(await exposition(sources));
  });
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await sql`select 1`.execute(database.kysely);
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database' });
    }
  });

  await app.register(
    async (v0) => {
      registerApiKeyAuth(v0, authenticate);
      registerRateLimit(v0, { perSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst });
      // Unknown paths and methods under /v0 pass the hooks above first: no key, no route map.
      v0.setNotFoundHandler(notFound);
      for (const module of modules) if (module.routes) await v0.register(module.routes);
    },
    { prefix: '/v0' },
  );
  for (const module of modules) if (module.publicRoutes) await app.register(module.publicRoutes);

  return app;
}

/**
 * Request latency by route (its operationId) and status class. The label children are kept, so
 * that the hook on every request costs a map look-up and a bucket increment.
 */
function observeLatency(registry: Registry) {
  const latency = new Histogram({
    name: 'ap_http_request_duration_seconds',
    help: 'Time to answer a request, by route (operationId, or the route pattern) and status class',
    labelNames: ['route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const children = new Map<string, { observe(seconds: number): void }>();
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const options = request.routeOptions;
    const route = (options.schema?.operationId as string | undefined) ?? options.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    const key = `${route} ${status}`;
    let child = children.get(key);
    if (child === undefined) children.set(key, (child = latency.labels(route, status)));
    child.observe(reply.elapsedTime / 1000);
    done();
  };
}

/** `Authorization: Bearer <token>`, compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  if (header === undefined || !header.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice('Bearer '.length));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
