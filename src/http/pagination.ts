import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError } from './errors.js';

/**
 * The keyset window of one list request: how many rows, and the sort key of the last row the
 * client has seen. (Named apart from the Page resource on purpose.)
 */
export interface KeysetWindow {
  limit: number;
  /** Sort-key values of the last item of the previous page; null on the first page. */
  after: unknown[] | null;
}

/**
 * How many rows to fetch for a page: one more than asked, to learn whether there is more; on the
 * first page of a list that also counts exactly, the count tells, so the extra row is not needed.
 */
export function rowsToFetch(window: KeysetWindow, countsExactly: boolean): number {
  return countsExactly && window.after === null ? window.limit : window.limit + 1;
}

/** The pagination part of a list's query string. */
export interface ListQuery {
  cursor?: string;
  limit: number;
}

export interface Envelope<T> {
  hasMore: boolean;
  items: T[];
  nextCursor: string | null;
  totalCount: number | null;
}

/**
 * Opaque cursors: the sort key of the last item, signed with a service secret and bound to the
 * tenant, the endpoint and its filters. A cursor that was tampered with, comes from another
 * tenant or endpoint, or is used with different filters is refused with 400 invalid_cursor
 * instead of silently returning the wrong page.
 */
export class Pager {
  readonly #secret: Buffer;
  /**
   * Cursors issued recently, by what they sign: signing is deterministic, and the same first page
   * (hence the same cursor) is asked for again and again, so an HMAC per response is wasted work.
   * Also lets a cursor we issued be checked without recomputing its HMAC.
   */
  readonly #issued = new LRUCache<string, { signature: Buffer; cursor: string }>({ max: 10_000 });

  constructor(secret: string) {
    this.#secret = Buffer.from(secret, 'utf8');
  }

  /** `context` names the endpoint and its filters, e.g. `pages.search:q=acme`. */
  #read(tenantId: string, context: string, query: ListQuery): KeysetWindow {
    if (query.cursor === undefined) return { limit: query.limit, after: null };
    return { limit: query.limit, after: this.#decode(tenantId, context, query.cursor) };
  }

  /**
   * Builds the envelope from up to `limit + 1` fetched items: the extra one only says that
   * there is more. On the first page, an exact `totalCount` says it as well, so a service that
   * counts may fetch just `limit` rows there (see `rowsToFetch`).
   */
  #envelope<T>(
    tenantId: string,
    context: string,
    window: KeysetWindow,
    fetched: T[],
    keyOf: (item: T) => unknown[],
    totalCount: number | null,
  ): Envelope<T> {
    const hasMore =
      fetched.length > window.limit || (window.after === null && totalCount !== null && totalCount > fetched.length);
    const items = fetched.length > window.limit ? fetched.slice(0, window.limit) : fetched;
    const last = items[items.length - 1];
    return {
      hasMore,
      items,
      nextCursor: hasMore && last !== undefined ? this.#encode(tenantId, context, keyOf(last)) : null,
      totalCount,
    };
  }

  /**
   * A list endpoint's whole sequence: read the window from `query` (cursor and limit), `fetch` it
   * (up to `limit + 1` items, see `envelope`), and answer the envelope. `context` names the
   * endpoint and its filters, so a cursor only works for the request that issued it.
   */
  async list<T>(
    tenantId: string,
    query: ListQuery,
    spec: {
      context: string;
      fetch: (window: KeysetWindow) => Promise<{ items: T[]; totalCount: number | null }>;
      keyOf: (item: T) => unknown[];
    },
  ): Promise<Envelope<T>> {
    const window = this.#read(tenantId, spec.context, query);
    const { items, totalCount } = await spec.fetch(window);
    return this.#envelope(tenantId, spec.context, window, items, spec.keyOf, totalCount);
  }

  #sign(tenantId: string, context: string, payload: string): Buffer {
    return createHmac('sha256', this.#secret).update(`${tenantId}\n${context}\n${payload}`).digest().subarray(0, 16);
  }

  #encode(tenantId: string, context: string, values: unknown[]): string {
    const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
    const signed = `${tenantId}\n${context}\n${payload}`;
    let issued = this.#issued.get(signed);
    if (issued === undefined) {
      const signature = this.#sign(tenantId, context, payload);
      issued = { signature, cursor: `${payload}.${signature.toString('base64url')}` };
      this.#issued.set(signed, issued);
    }
    return issued.cursor;
  }

  #decode(tenantId: string, context: string, cursor: string): unknown[] {
    const invalid = () =>
      new AppError(
        'invalid_cursor',
        'The cursor is not valid for this request. Pass nextCursor back unchanged, with the same filters.',
        [{ path: '/query/cursor', message: 'is not a cursor issued for this request' }],
      );
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined) throw invalid();
    const expected =
      this.#issued.get(`${tenantId}\n${context}\n${payload}`)?.signature ?? this.#sign(tenantId, context, payload);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    try {
      const values: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (!Array.isArray(values)) throw invalid();
      return values;
    } catch {
      throw invalid();
    }
  }
}
