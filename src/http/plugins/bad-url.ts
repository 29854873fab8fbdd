import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Authenticate } from './auth.js';
import { sendProblem, toAppError } from './problem.js';

const API_PATH = /^\/v0(?:[/?]|$)/;

/**
 * Fastify's `frameworkErrors`: what the router cannot route at all, i.e. a path whose percent
 * encoding does not decode (`/v0/persons/%ZZ`). No hook runs for such a request, so this handler
 * does what they would: it sets `x-request-id`, authenticates /v0 requests first (without a valid
 * key the answer is 401, as for any other /v0 URL), and answers problem+json.
 */
export function answerUnroutable(authenticate: Authenticate) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id);
    const answer = () =>
      sendProblem(
        request,
        reply,
        error.code === 'FST_ERR_BAD_URL'
          ? new AppError('bad_request', 'The URL path is not valid percent-encoding (RFC 3986, e.g. %ZZ).')
          : toAppError(error, request),
      );
    if (!API_PATH.test(request.url)) return answer();
    authenticate(request, reply, (refused) => {
      if (refused) sendProblem(request, reply, toAppError(refused as unknown as FastifyError));
      else answer();
    });
    return reply;
  };
}
