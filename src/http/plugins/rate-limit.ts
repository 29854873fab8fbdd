import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { TokenBuckets } from '../token-buckets.js';

/**
 * A token bucket per API key: `burst` requests at once, refilled at `perSecond`. Limits are per
 * process (documented): N processes on PostgreSQL allow N times the rate in total. Responses carry
 * the IETF RateLimit headers; a refused request gets 429 with Retry-After.
 */
export function registerRateLimit(
  app: FastifyInstance,
  options: { perSecond: number; burst: number; now?: () => number },
) {
  const { perSecond, burst } = options;
  if (perSecond <= 0) return;
  const buckets = new TokenBuckets(perSecond, burst, options.now);
  const window = Math.max(1, Math.ceil(burst / perSecond));
  const policy = `"default";q=${burst};w=${window}`;

  // A callback hook: an async one costs every request a promise and a turn of the hook runner.
  app.addHook('onRequest', (request, reply, done) => {
    const id = request.principal.keyId;
    const taken = buckets.take(id);
    reply.header('ratelimit-policy', policy);
    if (!taken.ok) {
      reply.header('retry-after', String(taken.retryAfterSeconds));
      reply.header('ratelimit', `"default";r=0;t=${taken.retryAfterSeconds}`);
      done(
        new AppError('rate_limited', `Too many requests for this API key; retry after ${taken.retryAfterSeconds} s.`),
      );
      return;
    }
    reply.header('ratelimit', `"default";r=${taken.remaining};t=${buckets.untilFull(id)}`);
    done();
  });
}
