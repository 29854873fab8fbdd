import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

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
  const now = options.now ?? (() => performance.now());
  const buckets = new Map<string, Bucket>();
  const window = Math.max(1, Math.ceil(burst / perSecond));
  const policy = `"default";q=${burst};w=${window}`;

  app.addHook('onRequest', async (request, reply) => {
    const id = request.principal.keyId;
    const t = now();
    let bucket = buckets.get(id);
    if (bucket === undefined) {
      if (buckets.size > 100_000) buckets.clear();
      buckets.set(id, (bucket = { tokens: burst, updatedAt: t }));
    } else {
      bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.updatedAt) / 1000) * perSecond);
      bucket.updatedAt = t;
    }
    reply.header('ratelimit-policy', policy);
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
      reply.header('retry-after', String(retryAfter));
      reply.header('ratelimit', `"default";r=0;t=${retryAfter}`);
      throw new AppError('rate_limited', `Too many requests for this API key; retry after ${retryAfter} s.`);
    }
    bucket.tokens -= 1;
    const untilFull = Math.ceil((burst - bucket.tokens) / perSecond);
    reply.header('ratelimit', `"default";r=${Math.floor(bucket.tokens)};t=${untilFull}`);
  });
}
