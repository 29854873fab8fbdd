import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { AheadResponder } from '../../http/ahead.js';
import { requestHostname } from '../../lib/domain-name.js';
import type { PageHosts } from '../tenant-domains/index.js';
import { notModified, representation, type RenderedEntry } from './site.cache.js';
import { pageHeaders } from './site.headers.js';
import type { PageService } from './site.pages.service.js';

type Encoding = ReturnType<typeof representation>['encoding'];

/**
 * A response's headers as node:http's flat `[name, value, name, value, …]`: writeHead walks it
 * pair by pair, where an object costs a `for…in`, an own-property check and a keyed load per
 * header on every hit. Same names, values and order as the object the router sends.
 */
type FlatHeaders = string[];

const flat = (headers: Record<string, string>): FlatHeaders => Object.entries(headers).flat();

/** Per (entry, encoding): the 200's headers (the page's own, the length, the encoding) and the 304's. Built once. */
interface AheadHeaders {
  ok: FlatHeaders;
  notModified: FlatHeaders;
}
const aheadHeadersMemo = new WeakMap<RenderedEntry, Partial<Record<Encoding, AheadHeaders>>>();

function aheadHeaders(entry: RenderedEntry, encoding: Encoding, bytes: Buffer): AheadHeaders {
  let byEncoding = aheadHeadersMemo.get(entry);
  if (byEncoding === undefined) aheadHeadersMemo.set(entry, (byEncoding = {}));
  let headers = byEncoding[encoding];
  if (headers === undefined) {
    const page = pageHeaders(entry, encoding);
    const ok: Record<string, string> = { ...page, 'content-length': String(bytes.length) };
    if (encoding !== 'identity') ok['content-encoding'] = encoding;
    headers = { ok: flat(ok), notModified: flat(page) };
    byEncoding[encoding] = headers;
  }
  return headers;
}

/** Distinct `Host` header strings whose parse is remembered. */
const HOSTS_KEPT = 1_000;

/**
 * `requestHostname` of a `Host` header string, remembered: a page host's visitors send the same
 * few strings, and each parse is a regular expression and a lower-casing. Only valid ones are
 * kept, in a bounded LRU, so odd headers cost a parse each and never memory.
 */
function hostnameMemo(): (header: string | undefined) => string | null {
  const hosts = new LRUCache<string, string>({ max: HOSTS_KEPT });
  return (header) => {
    if (header === undefined) return null;
    let host: string | null | undefined = hosts.get(header);
    if (host === undefined) {
      host = requestHostname(header);
      if (host !== null) hosts.set(header, host);
    }
    return host;
  };
}

/**
 * Page-cache hits answered ahead of the router (docs/performance.md#page-hits-ahead-of-the-router):
 * a `GET` on a page host for a path whose page this process holds, while the tenant's serving
 * revision is current (PageService.hit: the same test the page route makes, so a change is seen
 * by the next request exactly as there), is written from the cached bytes and their precomputed
 * headers, without Fastify's request lifecycle. Everything else (a miss, `HEAD`, a scheme only a
 * trusted proxy can tell) is left to the router, which answers it as before.
 *
 * `originOf`: the page's origin for the request, or null when only the router can tell it.
 */
export function pageHitsAhead(
  pages: PageService,
  hosts: PageHosts,
  originOf: (request: IncomingMessage, host: string) => string | null,
): AheadResponder {
  const hostname = hostnameMemo();
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'GET') return false;
    const headers = request.headers;
    const host = hostname(headers.host);
    if (host === null || !hosts.has(host)) return false;
    const origin = originOf(request, host);
    if (origin === null) return false;
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const entry = pages.hit(origin, query === -1 ? url : url.slice(0, query));
    if (entry === undefined) return false;
    const { encoding, bytes } = representation(entry, headers['accept-encoding']);
    const answer = aheadHeaders(entry, encoding, bytes);
    if (notModified(headers['if-none-match'], entry)) {
      response.writeHead(304, answer.notModified).end();
    } else {
      response.writeHead(200, answer.ok).end(bytes);
    }
    return true;
  };
}
