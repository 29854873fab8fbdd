import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { DailyCap } from '../../db/daily-caps.js';
import { declaredCrawler } from '../../http/declared-crawler.js';
import { AppError } from '../../http/errors.js';
import { TokenBuckets } from '../../http/token-buckets.js';
import { SessionIngest } from '../audience-sessions/index.js';
import { CollectService } from './site.collect.service.js';
import { CollectTurns } from './site.collect.turns.js';
import { sendErrorPage } from './site.error-pages.js';
import { ON_PAGE_HOSTS, type VisitorSide } from './site.page-host.js';
import { clientKey } from '../../http/client-address.js';

/** The page script's reports are small (sent as text/plain by `navigator.sendBeacon`). */
const COLLECT_BODY_LIMIT = 8 * 1024;

/**
 * Collect requests that go on per event-loop turn (site.collect.turns.ts): 8 × ~80 µs keeps a page
 * request's wait behind them under a millisecond.
 */
const REQUESTS_PER_TURN = 8;

/** Token buckets of `perSecond` with bursts of five seconds' worth; null when the limit is off (0). */
const buckets = (perSecond: number) => (perSecond > 0 ? new TokenBuckets(perSecond, perSecond * 5) : null);

/**
 * `POST /_ap/collect` on a page host (docs/pages-runtime.md, Collection protocol): public (no key),
 * JSON of at most 8 KiB, from the page's own origin, within the limits per client address and per
 * page. Refusals are problem+json (the page script reads them), not the HTML error pages.
 */
export const collectRoutes: FastifyPluginAsync<VisitorSide> = async (app, { tenantOf, signer, tokens, revisions }) => {
  const { database, clock, config, logger } = app.ctx;
  // Events are answered at once and written in batches; closing writes what was acknowledged.
  const ingest = new SessionIngest(database, logger);
  app.addHook('onClose', () => ingest.stop());
  const visits = new CollectService(database, clock, signer, tokens, ingest, revisions);
  const turns = new CollectTurns(REQUESTS_PER_TURN);
  const clients = buckets(config.pageEventsPerSecond);
  const pages = buckets(config.pageEventsPerPagePerSecond);
  const newSessions = new DailyCap(database, clock, logger, 'sessions', config.sessionsPerTenantPerDay);

  const limit = (limits: TokenBuckets | null, key: () => string, reply: FastifyReply, what: string) => {
    if (limits === null) return;
    const taken = limits.take(key());
    if (!taken.ok) {
      reply.header('retry-after', String(taken.retryAfterSeconds));
      throw new AppError('rate_limited', `Too many events ${what}; retry after ${taken.retryAfterSeconds} s.`);
    }
  };

  app.route({
    method: 'POST',
    url: '/_ap/collect',
    constraints: ON_PAGE_HOSTS,
    bodyLimit: COLLECT_BODY_LIMIT,
    schema: { hide: true },
    // Everything after routing (the body read and parsed, the checks, the handler) waits its turn,
    // so a poll phase that reads many beacons does little more than route them.
    onRequest: (_request, _reply, done) => turns.wait(done),
    handler: async (request, reply) => {
      const tenantId = tenantOf(request);
      if (tenantId === undefined) return sendErrorPage(reply, 404);
      reply.header('cache-control', 'no-store');
      // Only the page itself reports: a browser says where a request comes from.
      const site = request.headers['sec-fetch-site'];
      if (site === 'cross-site' || site === 'same-site') {
        throw new AppError('cross_origin_request', 'Events are accepted from the page’s own origin only.');
      }
      // The address (IPv6 by /64) first: a refused flood then takes nothing from the page's shared
      // bucket, so a few addresses cannot starve a page's analytics.
      limit(clients, () => clientKey(request.ip), reply, 'from this address');
      // Global Privacy Control, and declared crawlers: nothing is recorded (docs/pages-runtime.md).
      if (request.headers['sec-gpc'] === '1' || declaredCrawler(request.headers['user-agent'])) {
        return reply.code(204).send();
      }
      const event = visits.read(tenantId, request.body, request.headers.host);
      limit(pages, () => event.audienceId, reply, 'for this page');
      if (event.t === 'start') {
        const room = await newSessions.take(tenantId);
        if (!room.ok) {
          reply.header('retry-after', String(room.retryAfterSeconds));
          throw new AppError('daily_cap_reached', 'This site records no more visits today; the page works as before.');
        }
        return reply.code(201).send({ s: await visits.start(tenantId, event) });
      }
      visits.update(tenantId, event);
      return reply.code(204).send();
    },
  });
};
