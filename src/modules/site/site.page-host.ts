import type { FastifyRequest } from 'fastify';
import { requestHostname } from '../../lib/domain-name.js';
import type { SessionTokens } from '../audience-sessions/index.js';
import type { ServingRevisions } from '../serving/index.js';
import type { PageHosts } from '../tenant-domains/index.js';
import type { PageService } from './site.pages.service.js';
import type { PageSigner } from './site.tokens.js';

/**
 * The router's decision "page host or not" (synchronous, per request): a request whose Host is a
 * live tenant domain only matches the routes constrained to `ON_PAGE_HOSTS`, so no API route is
 * reachable on a tenant domain; any other host never matches them.
 */
export function pageHostConstraint(hosts: PageHosts) {
  return {
    name: 'pageHost',
    mustMatchWhenDerived: true,
    storage() {
      const stores = new Map<string, unknown>();
      return {
        get: (value: string) => (stores.get(value) ?? null) as never,
        set: (value: string, store: unknown) => void stores.set(value, store),
      };
    },
    deriveConstraint(request: { headers: Record<string, string | string[] | undefined> }) {
      const host = requestHostname(request.headers.host as string | undefined);
      return host !== null && hosts.has(host) ? 'page' : undefined;
    },
  };
}

/** The constraint of every route of the visitor side. */
export const ON_PAGE_HOSTS = { pageHost: 'page' };

/**
 * What the areas of the visitor side (pages, collect, forms) share, built once by site.routes.ts
 * and handed to each area's routes.
 */
export type VisitorSide = {
  /** The tenant whose live domain the request was sent to, if any. */
  tenantOf(request: FastifyRequest): string | undefined;
  /** `scheme://host[:port]` of the request: the page's origin. */
  origin(request: FastifyRequest): string;
  pages: PageService;
  /** The tenants' serving revisions as this process knows them (what may be kept in memory). */
  revisions: ServingRevisions;
  signer: PageSigner;
  tokens: SessionTokens;
};
