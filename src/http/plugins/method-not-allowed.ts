import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { sendProblem } from './problem.js';

/**
 * Fastify answers an unknown method on a known path with 404; HTTP says 405 with `Allow`.
 * Every route is recorded as it is added, and the not-found handler consults that record.
 */
export function registerMethodNotAllowed(
  app: FastifyInstance,
  options: {
    /** Answers a not-found request otherwise (e.g. an HTML page for a browser), or returns undefined. */
    notFoundPage?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;
  } = {},
) {
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
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m);
    if (allowed.size === 0) {
      const page = options.notFoundPage?.(request, reply);
      if (page !== undefined) return page;
    }
    if (allowed.size > 0) {
      const allow = [...allowed].sort().join(', ');
      reply.header('allow', allow);
      return sendProblem(
        request,
        reply,
        new AppError('method_not_allowed', `${request.method} is not allowed here; use ${allow}.`),
      );
    }
    return sendProblem(
      request,
      reply,
      new AppError('route_not_found', `No endpoint ${request.method} ${path}. See /openapi.json.`),
    );
  });
}
