import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { hashApiKey, isWellFormedApiKey } from './api-keys.js';

/** Who is calling: the tenant an API key belongs to, and the key itself (for rate limits and logs). */
export interface Principal {
  tenantId: string;
  keyId: string;
}

/** Turns a presented API key into its principal, or null when it is not a valid, active key. */
export type VerifyApiKey = (apiKey: string) => Promise<Principal | null>;

/**
 * Resolves an API key to its tenant. Lookups are cached for at most `ttlMs` (1 s by default), so a
 * key revoked from the CLI (another process) stops working within a second, while a busy key costs
 * one SHA-256 and a map lookup per request.
 */
export class ApiKeyVerifier {
  readonly #cache = new Map<string, { principal: Principal | null; expiresAt: number }>();
  static readonly maxEntries = 10_000;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly ttlMs = 1000,
  ) {}

  verify: VerifyApiKey = async (apiKey) => {
    if (!isWellFormedApiKey(apiKey)) return null;
    const hash = hashApiKey(apiKey);
    const now = this.clock.now().getTime();
    const cached = this.#cache.get(hash);
    if (cached !== undefined && cached.expiresAt > now) return cached.principal;
    const row = await findActiveKeyByHash(this.db, hash);
    const principal = row ? { tenantId: row.tenant_id, keyId: row.id } : null;
    if (this.#cache.size >= ApiKeyVerifier.maxEntries) this.#cache.clear();
    this.#cache.set(hash, { principal, expiresAt: now + this.ttlMs });
    return principal;
  };
}

async function findActiveKeyByHash(db: Kysely<DB>, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'tenant_id'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}
