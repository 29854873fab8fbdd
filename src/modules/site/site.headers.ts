import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Where a link from a page goes, we say only which site it came from (keys in paths stay private). */
const REFERRER_POLICY = 'strict-origin-when-cross-origin';

/** What every HTML answer on a page host (page, form errors, error page) carries, with its own CSP. */
export function htmlHeaders(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', REFERRER_POLICY);
}

/** The CSP source that allows exactly this inline script or style: `'sha256-…'`. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** Shared and browser caches may keep a page a minute, and serve it stale for ten while they refetch. */
const PAGE_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=600';
/** A 1:1 page names its person: only the visitor's browser keeps it, and search engines leave it out. */
const PERSONAL_PAGE_CACHE_CONTROL = 'private, max-age=60';

/** The caching and indexing headers of a served page: public, or (a 1:1 page) private and `noindex`. */
export function pageCacheHeaders(reply: FastifyReply, personal: boolean): FastifyReply {
  if (!personal) return reply.header('cache-control', PAGE_CACHE_CONTROL);
  return reply.header('cache-control', PERSONAL_PAGE_CACHE_CONTROL).header('x-robots-tag', 'noindex');
}

/**
 * The path a page host's request log shows (docs/privacy.md): as requested for a page that
 * addresses nobody; otherwise (a 1:1 page, or a path that served nothing, which may be a person's
 * key) with its last segment replaced, `/pricing/sam-lee-globex` → `/pricing/[redacted]`.
 */
export function loggedPagePath(path: string, personal: boolean | null): string {
  if (personal === false) return path;
  const slash = path.lastIndexOf('/', path.endsWith('/') ? path.length - 2 : path.length - 1);
  if (slash < 0 || slash >= path.length - 1) return path;
  return `${path.slice(0, slash + 1)}[redacted]`;
}
