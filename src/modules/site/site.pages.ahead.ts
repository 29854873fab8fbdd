import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AheadResponder } from '../../http/ahead.js';
import { requestHostname } from '../../lib/domain-name.js';
import type { PageHosts } from '../tenant-domains/index.js';
import { notModified, representation, type RenderedEntry } from './site.cache.js';
import { pageHeaders } from './site.headers.js';
import type { PageService } from './site.pages.service.js';

type Encoding = ReturnType<typeof representation>['encoding'];

/** A 200's headers per (entry, encoding): the page's own, the length, the encoding. Built once. */
const okHeadersMemo = new WeakMap<RenderedEntry, Partial<Record<Encoding, Record<string, string>>>>();

function okHeaders(entry: RenderedEntry, encoding: Encoding, bytes: Buffer): Record<string, string> {
  let byEncoding = okHeadersMemo.get(entry);
  if (byEncoding === undefined) okHeadersMemo.set(entry, (byEncoding = {}));
  let headers = byEncoding[encoding];
  if (headers === undefined) {
    headers = { ...pageHeaders(entry, encoding), 'content-length': String(bytes.length) };
    if (encoding !== 'identity') headers['content-encoding'] = encoding;
    byEncoding[encoding] = headers;
  }
  return headers;
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
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'GET') return false;
    const host = requestHostname(request.headers.host);
    if (host === null || !hosts.has(host)) return false;
    const origin = originOf(request, host);
    if (origin === null) return false;
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const entry = pages.hit(origin, query === -1 ? url : url.slice(0, query));
    if (entry === undefined) return false;
    const { encoding, bytes } = representation(entry, request.headers['accept-encoding']);
    if (notModified(request.headers['if-none-match'], entry)) {
      response.writeHead(304, pageHeaders(entry, encoding)).end();
    } else {
      response.writeHead(200, okHeaders(entry, encoding, bytes)).end(bytes);
    }
    return true;
  };
}
