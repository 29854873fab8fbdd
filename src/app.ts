import { randomBytes } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
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
import { modules } from './modules/index.js';
import { browserNotFound } from './modules/site/index.js';

export interface AppDeps {
  config: Config;
  database: Database;
  logger: Logger;
  clock?: Clock;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
// Generated request ids: a random prefix per process and a counter (unique without a UUID per request).
const requestIdPrefix = randomBytes(8).toString('hex');
let requestCount = 0;

/** Builds the HTTP application. It never reads the environment: everything comes in `deps`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const authenticate = apiKeyAuthenticator(database, {
    verifier: new ApiKeyVerifier(database.kysely, clock),
    failures: new FailedAuthLimiter(clock, config.authFailuresPerMinute),
  });

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    childLoggerFactory: (parent, bindings) =>
      new LazyChildLogger(parent as unknown as Logger, bindings) as unknown as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs,
    keepAliveTimeout: 72_000,
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

  const ctx: AppContext = {
    config,
    database,
    clock,
    logger,
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
