import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { sendProblem } from './problem.js';

/** How long a path segment (an id) may be; a longer one is an unknown id (docs/api.md). */
export const MAX_PATH_ID_LENGTH = 200;

/** Set it as the not-found handler of a scope with its own hooks (/v0: authentication first). */
type NotFoundHandler = (request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * Answers every request that matched no route: 405 with `Allow` when the path exists with other
 * methods (Fastify would say 404), 404 `not_found` when it exists with this method but a segment
 * is longer than any id (the router refuses to match it), 404 `route_not_found` otherwise.
 *
 * The answer is made in `preParsing`, before the body is read, so that it never depends on the
 * body (a `QUERY` without Content-Type, a body too large or not JSON): the path decides. The
 * `onRequest` hooks of the scope run first: /v0 sets the returned handler as its own not-found
 * handler, so a request there without a valid key gets 401 and learns nothing of the route map.
 */
export function registerMethodNotAllowed(
  app: FastifyInstance,
  options: {
    /** Answers a not-found request otherwise (e.g. an HTML page for a browser), or returns undefined. */
    notFoundPage?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;
  } = {},
): NotFoundHandler {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    // Routes for other hosts (pages on tenant domains) say nothing about this host's paths.
    if (route.constraints !== undefined && Object.keys(route.constraints).length > 0) return;
    const pattern = new RegExp(
      `^${route.url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')}/?$`,
    );
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let entry = routes.find((r) => r.pattern.source === pattern.source);
    if (entry === undefined) routes.push((entry = { pattern, methods: new Set() }));
    for (const m of methods) entry.methods.add(m);
  });

  const notFound: NotFoundHandler = (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m);
    if (allowed.size === 0) {
      const page = options.notFoundPage?.(request, reply);
      if (page !== undefined) return page;
      return sendProblem(
        request,
        reply,
        new AppError('route_not_found', `No endpoint ${request.method} ${path}. See /openapi.json.`),
      );
    }
    if (allowed.has(request.method)) {
      // The route exists, so the router refused a segment for its length: no id is that long.
      return sendProblem(
        request,
        reply,
        new AppError('not_found', `No resource has this id: ids are at most ${MAX_PATH_ID_LENGTH} characters.`),
      );
    }
    const allow = [...allowed].sort().join(', ');
    reply.header('allow', allow);
    return sendProblem(
      request,
      reply,
      new AppError('method_not_allowed', `${request.method} is not allowed here; use ${allow}.`),
    );
  };

  app.addHook('preParsing', (request, reply, payload, done) => {
    if (request.is404) notFound(request, reply);
    else done(null, payload);
  });
  app.setNotFoundHandler(notFound);
  return notFound;
}
