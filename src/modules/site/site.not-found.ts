import type { FastifyReply, FastifyRequest } from 'fastify';
import { htmlHeaders } from './site.headers.js';
import { renderErrorPage, ERROR_PAGE_CSP } from './site.render.js';
import { wantsHtml } from './site.routes.js';

const API_PATHS = /^\/(v0|docs|openapi\.json|files|healthz|readyz)(\/|$|\?)/;

/**
 * For the API host's not-found handler: a browser asking for a path the API does not have (an
 * unknown or removed host, a typo) gets the small HTML 404 page instead of problem+json. Returns
 * undefined when the request is not such a request.
 */
export function browserNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (!wantsHtml(request) || API_PATHS.test(request.url)) return undefined;
  return htmlHeaders(reply.code(404).header('cache-control', 'no-store'), ERROR_PAGE_CSP).send(renderErrorPage(404));
}
