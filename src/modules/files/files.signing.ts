import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { loadServiceSecret } from '../../db/service-secrets.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';

/** What a signed URL allows: sending a file's bytes once, or reading the file or its preview. */
export type UrlPurpose = 'upload' | 'download' | 'preview';

/** Upload URLs live 15 minutes. */
export const UPLOAD_URL_TTL_MS = 15 * 60 * 1000;
/** Download URLs live at least an hour… */
const DOWNLOAD_URL_TTL_MS = 60 * 60 * 1000;
/** …and their expiry is rounded up to 15 minutes, so repeated reads give the same (cacheable) URL. */
const DOWNLOAD_URL_WINDOW_MS = 15 * 60 * 1000;

export interface SignedQuery {
  expires: number;
  signature: string;
}

/**
 * Signs and checks the service's file URLs: HMAC-SHA256 (key: the `file-signing` service secret,
 * shared by every node through the database) over the purpose, tenant, file id and expiry (Unix
 * seconds). The URL is the credential: it carries no API key.
 */
export class FileUrlSigner {
  constructor(
    readonly secret: string,
    readonly clock: Clock,
  ) {}

  static async load(db: Kysely<DB>, clock: Clock, secretKeys: readonly Buffer[]): Promise<FileUrlSigner> {
    return new FileUrlSigner(await loadServiceSecret(db, 'file-signing', clock, secretKeys), clock);
  }

  #mac(purpose: UrlPurpose, tenantId: string, fileId: string, expires: number): Buffer {
    return createHmac('sha256', this.secret).update(`${purpose}\n${tenantId}\n${fileId}\n${expires}`).digest();
  }

  sign(purpose: UrlPurpose, tenantId: string, fileId: string, expiresAt: Date): SignedQuery {
    const expires = Math.ceil(expiresAt.getTime() / 1000);
    return { expires, signature: this.#mac(purpose, tenantId, fileId, expires).toString('base64url') };
  }

  /** The expiry of a download URL made now: at least an hour away, rounded up to 15 minutes. */
  downloadExpiry(): Date {
    const at = this.clock.now().getTime() + DOWNLOAD_URL_TTL_MS;
    return new Date(Math.ceil(at / DOWNLOAD_URL_WINDOW_MS) * DOWNLOAD_URL_WINDOW_MS);
  }

  /**
   * Throws 403 `url_expired` or `invalid_signature` unless the query is a signature of exactly
   * this purpose, tenant and file that has not expired.
   */
  verify(purpose: UrlPurpose, tenantId: string, fileId: string, query: { expires: number; signature: string }): void {
    const given = Buffer.from(query.signature, 'base64url');
    const expected = this.#mac(purpose, tenantId, fileId, query.expires);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError('invalid_signature', 'The URL is not valid: its signature does not match.');
    }
    if (query.expires * 1000 <= this.clock.now().getTime()) {
      throw new AppError('url_expired', 'The URL has expired; ask the API for a new one.');
    }
  }
}

/** `https://host/files/<id>?expires=…&signature=…`, for a base URL without a trailing slash. */
export function signedUrl(baseUrl: string, path: string, query: SignedQuery): string {
  return `${baseUrl}${path}?expires=${query.expires}&signature=${query.signature}`;
}
