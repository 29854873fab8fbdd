import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from './errors.js';

/** What a service needs to read one page: how many rows, and the sort key of the last one seen. */
export interface PageRequest {
  limit: number;
  /** Sort-key values of the last item of the previous page; null on the first page. */
  after: unknown[] | null;
}

/**
 * How many rows to fetch for a page: one more than asked, to learn whether there is more; on the
 * first page of a list that also counts exactly, the count tells, so the extra row is not needed.
 */
export function rowsToFetch(page: PageRequest, countsExactly: boolean): number {
  return countsExactly && page.after === null ? page.limit : page.limit + 1;
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

  constructor(secret: string) {
    this.#secret = Buffer.from(secret, 'utf8');
  }

  /** `context` names the endpoint and its filters, e.g. `pages.search:q=acme`. */
  read(tenantId: string, context: string, query: { cursor?: string; limit: number }): PageRequest {
    if (query.cursor === undefined) return { limit: query.limit, after: null };
    return { limit: query.limit, after: this.#decode(tenantId, context, query.cursor) };
  }

  /**
   * Builds the envelope from up to `limit + 1` fetched items: the extra one only says that
   * there is more. On the first page, an exact `totalCount` says it as well, so a service that
   * counts may fetch just `limit` rows there (see `rowsToFetch`).
   */
  envelope<T>(
    tenantId: string,
    context: string,
    page: PageRequest,
    fetched: T[],
    keyOf: (item: T) => unknown[],
    totalCount: number | null,
  ): Envelope<T> {
    const hasMore =
      fetched.length > page.limit || (page.after === null && totalCount !== null && totalCount > fetched.length);
    const items = fetched.length > page.limit ? fetched.slice(0, page.limit) : fetched;
    const last = items[items.length - 1];
    return {
      hasMore,
      items,
      nextCursor: hasMore && last !== undefined ? this.#encode(tenantId, context, keyOf(last)) : null,
      totalCount,
    };
  }

  #sign(tenantId: string, context: string, payload: string): Buffer {
    return createHmac('sha256', this.#secret).update(`${tenantId}\n${context}\n${payload}`).digest().subarray(0, 16);
  }

  #encode(tenantId: string, context: string, values: unknown[]): string {
    const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
    return `${payload}.${this.#sign(tenantId, context, payload).toString('base64url')}`;
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
    const expected = this.#sign(tenantId, context, payload);
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
