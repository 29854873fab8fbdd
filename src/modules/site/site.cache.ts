import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * The final bytes of a page: the same for every visitor of a version on a host (nothing of a
 * visitor is in them), so they are rendered and hashed once, and compressed once, on zlib's
 * thread pool after the first answer (never on a request: until then identity, or gzip, is sent).
 */
export interface RenderedEntry {
  body: Buffer;
  /** Strong validator of the identity bytes: `"<base64url sha-256>"`. */
  etag: string;
  csp: string;
  /** A 1:1 page (its audience addresses a person): served `private`, `noindex` (site.headers.ts). */
  personal: boolean;
  br?: Buffer;
  gzip?: Buffer;
}

export type Encoding = 'br' | 'gzip' | 'identity';

/** A (host, path) that answered a page: which page, for which tenant, as of which generation. */
interface Route {
  pageKey: string;
  entry: RenderedEntry;
  tenantId: string;
  /** ServingRevisions' generation read before the link was resolved. */
  generation: number;
}

interface CachedPage {
  entry: RenderedEntry;
  /** The routes that point at this page (dropped with it). */
  routes: Set<string>;
}

/** The bytes an entry keeps (its encodings included) plus what a key and its bookkeeping cost. */
const OVERHEAD_BYTES = 512;

/**
 * Pages in memory (docs/performance.md#page-cache), on two levels:
 *
 * - pages by `(version, origin)`: their bytes, least recently used evicted first once their sum
 *   passes `maxBytes`. A version's bytes never change, so this level needs no invalidation.
 * - routes by `(origin, normalized path)`: the page a path answered, valid while its tenant's
 *   serving revision has not moved since (the caller checks with ServingRevisions). A hit is one
 *   map look-up: no database, no rendering, no compression. Only paths that answered a page get a
 *   route (so unknown paths cannot fill or evict anything), and a route goes with its page.
 */
export class PageCache {
  readonly #pages: LRUCache<string, CachedPage>;
  readonly #routes = new Map<string, Route>();
  #evictions = 0;

  constructor(readonly maxBytes: number) {
    this.#pages = new LRUCache<string, CachedPage>({
      maxSize: maxBytes,
      sizeCalculation: (page) => Math.max(1, size(page.entry)),
      dispose: (page, key, reason) => {
        if (reason === 'evict') this.#evictions += 1;
        for (const route of page.routes) {
          if (this.#routes.get(route)?.pageKey === key) this.#routes.delete(route);
        }
      },
    });
  }

  /** The route's page, if the route is there (the caller checks it is current). */
  route(key: string): Route | undefined {
    const route = this.#routes.get(key);
    // Touches the page (most recently used); a page evicted meanwhile took its route with it.
    if (route !== undefined && this.#pages.get(route.pageKey) === undefined) return undefined;
    return route;
  }

  forgetRoute(key: string): void {
    this.#routes.delete(key);
  }

  page(pageKey: string): RenderedEntry | undefined {
    return this.#pages.get(pageKey)?.entry;
  }

  /** Keeps a page's bytes under `pageKey`, and compresses them in the background. */
  addPage(pageKey: string, html: string, csp: string, personal = false): RenderedEntry {
    const body = Buffer.from(html, 'utf8');
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
    const entry: RenderedEntry = { body, etag, csp, personal };
    this.#pages.set(pageKey, { entry, routes: new Set() });
    void this.#compress(pageKey, entry);
    return entry;
  }

  /** Remembers that `key` answers the page at `pageKey` (if that page is still kept). */
  addRoute(key: string, pageKey: string, tenantId: string, generation: number): void {
    const page = this.#pages.peek(pageKey);
    if (page === undefined) return;
    page.routes.add(key);
    this.#routes.set(key, { pageKey, entry: page.entry, tenantId, generation });
  }

  async #compress(pageKey: string, entry: RenderedEntry) {
    try {
      entry.gzip = await gzipped(entry.body, { level: 9 });
      entry.br = await brotli(entry.body, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: entry.body.length,
        },
      });
    } catch {
      return; // identity still serves
    }
    // Counted at its new size (if still kept): setting the same value keeps its routes.
    const page = this.#pages.peek(pageKey);
    if (page?.entry === entry) this.#pages.set(pageKey, page, { noUpdateTTL: true });
  }

  stats() {
    return {
      pages: this.#pages.size,
      routes: this.#routes.size,
      bytes: this.#pages.calculatedSize,
      evictions: this.#evictions,
    };
  }
}

function size(entry: RenderedEntry): number {
  return entry.body.length + (entry.br?.length ?? 0) + (entry.gzip?.length ?? 0) + OVERHEAD_BYTES;
}

/** What a client accepts of the encodings we keep. */
interface Accepted {
  br: boolean;
  gzip: boolean;
}

const NOTHING: Accepted = { br: false, gzip: false };
const accepted = new Map<string, Accepted>();
/** Distinct Accept-Encoding values remembered (browsers send a handful); then the memo starts over. */
const ACCEPTED_MEMO = 256;

/** br and gzip, when the client accepts them (q > 0; `*` counts for both). */
function acceptedEncodings(acceptEncoding: string | undefined): Accepted {
  if (acceptEncoding === undefined || acceptEncoding === '') return NOTHING;
  let result = accepted.get(acceptEncoding);
  if (result !== undefined) return result;
  result = { br: false, gzip: false };
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    if (name === 'br' || name === '*') result.br = true;
    if (name === 'gzip' || name === '*') result.gzip = true;
  }
  if (accepted.size >= ACCEPTED_MEMO) accepted.clear();
  accepted.set(acceptEncoding, result);
  return result;
}

/** The representation to send: br, else gzip, when accepted and ready; else identity. */
export function representation(
  entry: RenderedEntry,
  acceptEncoding: string | undefined,
): { encoding: Encoding; bytes: Buffer } {
  const accepts = acceptedEncodings(acceptEncoding);
  if (accepts.br && entry.br !== undefined) return { encoding: 'br', bytes: entry.br };
  if (accepts.gzip && entry.gzip !== undefined) return { encoding: 'gzip', bytes: entry.gzip };
  return { encoding: 'identity', bytes: entry.body };
}

/** The ETag of a representation: the identity tag, suffixed for an encoded one (they differ in bytes). */
export function etagFor(entry: RenderedEntry, encoding: Encoding): string {
  return encoding === 'identity' ? entry.etag : `${entry.etag.slice(0, -1)}-${encoding}"`;
}

/** If-None-Match against any representation of the entry (weak comparison, RFC 9110 §13.1.2). */
export function notModified(ifNoneMatch: string | undefined, entry: RenderedEntry): boolean {
  if (ifNoneMatch === undefined) return false;
  // The usual revalidation sends back exactly the tag it was given: one string compare.
  if (ifNoneMatch === entry.etag) return true;
  const base = entry.etag.slice(1, -1);
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim().replace(/^W\//, '');
    return t === '*' || t === `"${base}"` || t === `"${base}-br"` || t === `"${base}-gzip"`;
  });
}
