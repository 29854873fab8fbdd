import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { etagFor, type Encoding, type RenderedEntry } from './site.cache.js';

/** Where a link from a page goes, we say only which site it came from (keys in paths stay private). */
const REFERRER_POLICY = 'strict-origin-when-cross-origin';

/** What every HTML answer on a page host (page, form errors, error page) carries, with its own CSP. */
export function htmlHeaders(reply: FastifyReply, csp: string): FastifyReply {
  return reply.headers(htmlHeaderFields(csp));
}

/** The headers every HTML answer of a page host carries, with its own CSP. */
function htmlHeaderFields(csp: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': REFERRER_POLICY,
  };
}

/** The CSP source that allows exactly this inline script or style: `'sha256-…'`. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** Shared and browser caches may keep a page a minute, and serve it stale for ten while they refetch. */
const PAGE_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=600';
/** A 1:1 page names its person: only the visitor's browser keeps it, and search engines leave it out. */
const PERSONAL_PAGE_CACHE_CONTROL = 'private, max-age=60';

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

type PageHeaders = Record<string, string>;
/**
 * A cached page's response headers, built once per (entry, encoding) rather than on every hit: an
 * entry never changes, so neither do they. Keyed weakly so they leave with the entry.
 */
const pageHeadersMemo = new WeakMap<RenderedEntry, Partial<Record<Encoding, PageHeaders>>>();

/**
 * The headers of a served page: the HTML ones, caching (public, or for a 1:1 page private and
 * `noindex`) and the validators. Content-encoding is added by the caller for an encoded
 * representation; a 304 sends the same set without it.
 */
export function pageHeaders(entry: RenderedEntry, encoding: Encoding): PageHeaders {
  let byEncoding = pageHeadersMemo.get(entry);
  if (byEncoding === undefined) pageHeadersMemo.set(entry, (byEncoding = {}));
  const cached = byEncoding[encoding];
  if (cached !== undefined) return cached;
  const headers: PageHeaders = {
    ...htmlHeaderFields(entry.csp),
    'cache-control': entry.personal ? PERSONAL_PAGE_CACHE_CONTROL : PAGE_CACHE_CONTROL,
  };
  if (entry.personal) headers['x-robots-tag'] = 'noindex';
  headers.etag = etagFor(entry, encoding);
  headers.vary = 'Accept-Encoding';
  byEncoding[encoding] = headers;
  return headers;
}
