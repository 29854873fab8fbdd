import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TokenBuckets } from '../../http/token-buckets.js';
import { requestHostname } from '../../lib/domain-name.js';
import { pageHostsFor } from './tenant-domains.hosts.js';
import { serviceHostnames } from './tenant-domains.service.js';
import { clientKey } from '../../http/client-address.js';

/** Refused asks per second per client (bursts of `TLS_ASK_REFUSALS_BURST`); answers of 200 are not limited. */
export const TLS_ASK_REFUSALS_PER_SECOND = 20;
const TLS_ASK_REFUSALS_BURST = 100;

/**
 * `GET /_ap/tls-ask?domain=HOST`: the `ask` endpoint of Caddy's on-demand TLS (deploy/Caddyfile).
 * Before it gets a certificate for a name a TLS client asked for, the edge asks here: 200 for a
 * verified tenant domain or one of the service's own host names, 404 for anything else, so
 * certificates are only ever issued for names that serve. Answered from the in-memory host map,
 * no query. Refusals are rate-limited per client (429), never the names that serve: those are
 * public anyway (they answer pages), and the edge must not be refused them while someone sends it
 * made-up names. Only on the API's hosts: tenant hosts serve pages alone (docs/pages-runtime.md).
 */
export const tlsAskRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const hosts = pageHostsFor(app.ctx);
  await hosts.start();
  app.addHook('onClose', () => hosts.stop());
  const own = new Set(serviceHostnames(app.ctx.config));
  // The service's clock (not the CPU's): the refill is then what tests can hold still.
  const refusals = new TokenBuckets(TLS_ASK_REFUSALS_PER_SECOND, TLS_ASK_REFUSALS_BURST, () =>
    app.ctx.clock.now().getTime(),
  );

  app.get(
    '/_ap/tls-ask',
    { schema: { hide: true, querystring: Type.Object({ domain: Type.String({ maxLength: 300 }) }) } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const name = requestHostname(request.query.domain);
      if (name !== null && (hosts.has(name) || own.has(name))) return reply.code(200).send();
      const limit = refusals.take(clientKey(request.ip));
      if (!limit.ok) return reply.code(429).header('retry-after', String(limit.retryAfterSeconds)).send();
      return reply.code(404).send();
    },
  );
};
