import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * Rendered pages by version (and origin): the same bytes for every visitor of a version, so they
 * are rendered, hashed and compressed once. Publishing needs no invalidation message: every
 * request resolves the live link to the *published version id* first, so a new version is a new
 * key at once, in every process; old keys age out (least recently used first).
 */
export interface RenderedEntry {
  body: Buffer;
  /** Strong validator of the identity bytes: `"<base64url sha-256>"`. */
  etag: string;
  csp: string;
  br?: Buffer;
  gzip?: Buffer;
}

export type Encoding = 'br' | 'gzip' | 'identity';

export class RenderCache {
  readonly #entries = new Map<string, RenderedEntry>();
  #bytes = 0;

  constructor(
    readonly maxEntries = 1000,
    readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  get(key: string): RenderedEntry | undefined {
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      // most recently used last
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, html: string, csp: string): RenderedEntry {
    const body = Buffer.from(html, 'utf8');
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
    const entry: RenderedEntry = { body, etag, csp };
    const old = this.#entries.get(key);
    if (old !== undefined) this.#forget(key, old);
    this.#entries.set(key, entry);
    this.#bytes += size(entry);
    while (this.#entries.size > this.maxEntries || this.#bytes > this.maxBytes) {
      const [oldestKey, oldest] = this.#entries.entries().next().value as [string, RenderedEntry];
      this.#forget(oldestKey, oldest);
    }
    return entry;
  }

  get size(): number {
    return this.#entries.size;
  }

  #forget(key: string, entry: RenderedEntry) {
    this.#entries.delete(key);
    this.#bytes -= size(entry);
  }

  /** The bytes in an encoding, compressed on first use and kept. */
  encoded(entry: RenderedEntry, encoding: Encoding): Buffer {
    if (encoding === 'identity') return entry.body;
    let bytes = entry[encoding];
    if (bytes === undefined) {
      bytes =
        encoding === 'br'
          ? brotliCompressSync(entry.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
          : gzipSync(entry.body, { level: 9 });
      entry[encoding] = bytes;
      this.#bytes += bytes.length;
    }
    return bytes;
  }
}

function size(entry: RenderedEntry): number {
  return entry.body.length + (entry.br?.length ?? 0) + (entry.gzip?.length ?? 0);
}

/** The encoding to send: br, else gzip, when the client accepts it (q > 0); else identity. */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding {
  if (acceptEncoding === undefined || acceptEncoding === '') return 'identity';
  let gzip = false;
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    if (name === 'br') return 'br';
    if (name === 'gzip' || name === '*') gzip = true;
  }
  return gzip ? 'gzip' : 'identity';
}

/** The ETag of a representation: the identity tag, suffixed for an encoded one (they differ in bytes). */
export function etagFor(entry: RenderedEntry, encoding: Encoding): string {
  return encoding === 'identity' ? entry.etag : `${entry.etag.slice(0, -1)}-${encoding}"`;
}

/** If-None-Match against any representation of the entry (weak comparison, RFC 9110 §13.1.2). */
export function notModified(ifNoneMatch: string | undefined, entry: RenderedEntry): boolean {
  if (ifNoneMatch === undefined) return false;
  const base = entry.etag.slice(1, -1);
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim().replace(/^W\//, '');
    return t === '*' || t === `"${base}"` || t === `"${base}-br"` || t === `"${base}-gzip"`;
  });
}
