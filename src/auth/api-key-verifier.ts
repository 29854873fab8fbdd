import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
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

export interface VerifierOptions {
  /** How long a look-up is trusted: a key revoked elsewhere stops working within this. Default 1 s. */
  ttlMs?: number;
  /** Valid keys remembered (least recently used evicted). Default 10,000. */
  maxKeys?: number;
  /** Unknown or revoked keys remembered, apart from the valid ones. Default 1,000. */
  maxUnknownKeys?: number;
}

interface Known {
  principal: Principal;
  checkedAt: number;
}

/**
 * Resolves an API key to its tenant (docs/api.md, Authentication).
 *
 * - Valid keys are cached by the key as presented, so a busy key costs one map look-up per
 *   request: no hash, no query. An entry is trusted for `ttlMs` (1 s), then looked up again, so a
 *   key revoked from the CLI (another process) stops working within a second.
 * - Unknown and revoked keys are cached apart, in a smaller cache, so that a flood of made-up
 *   (well-formed: the checksum is public) keys costs one look-up each at most and can never push a
 *   valid key out. Both caches evict the least recently used entry instead of being cleared.
 * - Concurrent look-ups of one key share one query.
 */
export class ApiKeyVerifier {
  readonly #db: Kysely<DB>;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #known: LRUCache<string, Known>;
  readonly #unknown: LRUCache<string, number>;
  readonly #inFlight = new Map<string, Promise<Principal | null>>();
  /** Database look-ups made so far (for tests and diagnostics). */
  lookups = 0;

  constructor(db: Kysely<DB>, clock: Clock, options: VerifierOptions = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#ttlMs = options.ttlMs ?? 1000;
    this.#known = new LRUCache({ max: options.maxKeys ?? 10_000 });
    this.#unknown = new LRUCache({ max: options.maxUnknownKeys ?? 1_000 });
  }

  /** The principal of a key looked up less than `ttlMs` ago, without waiting; undefined otherwise. */
  cached(apiKey: string): Principal | null | undefined {
    const known = this.#known.get(apiKey);
    if (known !== undefined) {
      return this.#clock.now().getTime() - known.checkedAt < this.#ttlMs ? known.principal : undefined;
    }
    const unknownAt = this.#unknown.get(apiKey);
    if (unknownAt !== undefined && this.#clock.now().getTime() - unknownAt < this.#ttlMs) return null;
    return undefined;
  }

  /** Whether the key was valid when last looked up (however long ago it was). */
  wasValid(apiKey: string): boolean {
    return this.#known.has(apiKey);
  }

  verify: VerifyApiKey = (apiKey) => {
    const cached = this.cached(apiKey);
    if (cached !== undefined) return Promise.resolve(cached);
    if (!isWellFormedApiKey(apiKey)) return Promise.resolve(null);
    let pending = this.#inFlight.get(apiKey);
    if (pending === undefined) {
      pending = this.#lookUp(apiKey).finally(() => this.#inFlight.delete(apiKey));
      this.#inFlight.set(apiKey, pending);
    }
    return pending;
  };

  async #lookUp(apiKey: string): Promise<Principal | null> {
    const checkedAt = this.#clock.now().getTime();
    this.lookups++;
    const row = await findActiveKeyByHash(this.#db, hashApiKey(apiKey));
    if (row === undefined) {
      this.#known.delete(apiKey);
      this.#unknown.set(apiKey, checkedAt);
      return null;
    }
    const principal = { tenantId: row.tenant_id, keyId: row.id };
    this.#unknown.delete(apiKey);
    this.#known.set(apiKey, { principal, checkedAt });
    return principal;
  }
}

async function findActiveKeyByHash(db: Kysely<DB>, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'tenant_id'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Failed authentication per client address: a token bucket of `burst` failures refilled at
 * `perMinute`. An address over it gets 429 for keys that were not valid before, without a
 * look-up, so guessing keys costs the guesser time rather than us queries.
 */
export class FailedAuthLimiter {
  readonly #buckets: LRUCache<string, { tokens: number; at: number }>;

  constructor(
    private readonly clock: Clock,
    private readonly perMinute: number,
    private readonly burst = perMinute,
    maxAddresses = 10_000,
  ) {
    this.#buckets = new LRUCache({ max: maxAddresses });
  }

  get enabled(): boolean {
    return this.perMinute > 0;
  }

  /** Seconds until the address may fail again, or 0 when it may try now. */
  retryAfter(address: string): number {
    const bucket = this.#refilled(address);
    if (bucket === undefined || bucket.tokens >= 1) return 0;
    return Math.max(1, Math.ceil(((1 - bucket.tokens) * 60) / this.perMinute));
  }

  fail(address: string): void {
    if (!this.enabled) return;
    const bucket = this.#refilled(address) ?? { tokens: this.burst, at: this.clock.now().getTime() };
    bucket.tokens = Math.max(0, bucket.tokens - 1);
    this.#buckets.set(address, bucket);
  }

  #refilled(address: string) {
    const bucket = this.#buckets.get(address);
    if (bucket === undefined) return undefined;
    const now = this.clock.now().getTime();
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 60_000) * this.perMinute);
    bucket.at = now;
    return bucket;
  }
}
