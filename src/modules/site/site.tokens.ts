import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

const MAC_BYTES = 16;
/**
 * View tokens a process has verified and remembers: every visitor of a page sends the same one
 * with its visit's start, which would otherwise pay an HMAC each (~8 µs). Only tokens that
 * verified are kept, so forged ones cannot evict them; the secret is fixed for the process, so a
 * kept answer never goes stale.
 */
const VIEW_TOKENS_KEPT = 10_000;

/**
 * The signatures a page carries, made with the `page-runtime` service secret (shared by every
 * node through the database). They are fixed for a version (no time, no visitor in them), so a
 * version's HTML is the same bytes for everyone and can be cached anywhere.
 *
 * - view token `<audienceId>.<mac>`: lets the page's script start a session for that audience of
 *   that tenant, and nothing else (an audience never published on a page cannot be named);
 * - image path `/_ap/img/<fileId|assetId>/<mac>`: serves that image of the tenant on the tenant's
 *   hosts, and no other file (file ids alone are not enough).
 *
 * And signatures that expire, never part of a page's shared bytes:
 * - the preview URL of a version (`/_ap/preview/<tenantId>/<versionId>?expires=<unix s>&signature=<mac>`,
 *   on the API host);
 * - a form stamp `<ms>.<mac>`: when this tenant's page gave a form to this client (address, IPv6
 *   by /64), so the minimum fill time is counted by the service, not by the visitor (docs/forms.md).
 */
export class PageSigner {
  readonly #secret: Buffer;
  /** `tenantId \n token` → the audience it names. */
  readonly #views = new LRUCache<string, string>({ max: VIEW_TOKENS_KEPT });

  constructor(secret: string) {
    this.#secret = Buffer.from(secret, 'utf8');
  }

  #mac(...parts: string[]): string {
    return createHmac('sha256', this.#secret)
      .update(parts.join('\n'))
      .digest()
      .subarray(0, MAC_BYTES)
      .toString('base64url');
  }

  #equal(given: string, expected: string): boolean {
    const a = Buffer.from(given);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  viewToken(tenantId: string, audienceId: string): string {
    return `${audienceId}.${this.#mac('view', tenantId, audienceId)}`;
  }

  /** The audience a view token names, if it was made for this tenant; else null. */
  readViewToken(tenantId: string, token: string): string | null {
    const key = `${tenantId}\n${token}`;
    const known = this.#views.get(key);
    if (known !== undefined) return known;
    const dot = token.indexOf('.');
    if (dot <= 0) return null;
    const audienceId = token.slice(0, dot);
    if (!this.#equal(token.slice(dot + 1), this.#mac('view', tenantId, audienceId))) return null;
    this.#views.set(key, audienceId);
    return audienceId;
  }

  imagePath(tenantId: string, id: string): string {
    return `/_ap/img/${id}/${this.#mac('image', tenantId, id)}`;
  }

  checkImage(tenantId: string, id: string, mac: string): boolean {
    return this.#equal(mac, this.#mac('image', tenantId, id));
  }

  /** A form stamp: the tenant's page gave a form to `client` at `atMs` (Unix ms). */
  formStamp(tenantId: string, client: string, atMs: number): string {
    return `${atMs}.${this.#mac('form-stamp', tenantId, client, String(atMs))}`;
  }

  /** When a form stamp of this tenant and client was made (Unix ms); null for anything else. */
  readFormStamp(tenantId: string, client: string, stamp: string): number | null {
    const match = /^(\d{1,15})\.([A-Za-z0-9_-]{1,64})$/.exec(stamp);
    if (match === null) return null;
    return this.#equal(match[2]!, this.#mac('form-stamp', tenantId, client, match[1]!)) ? Number(match[1]) : null;
  }

  /** The query of a preview URL of the tenant's version, valid until `expires` (Unix seconds). */
  preview(tenantId: string, versionId: string, expires: number): string {
    return `expires=${expires}&signature=${this.#mac('preview', tenantId, versionId, String(expires))}`;
  }

  /** Whether `signature` is the preview signature of exactly this tenant, version and expiry. */
  checkPreview(tenantId: string, versionId: string, expires: string, signature: string): boolean {
    return this.#equal(signature, this.#mac('preview', tenantId, versionId, expires));
  }
}
