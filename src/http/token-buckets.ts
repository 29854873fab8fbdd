/** How many keys a TokenBuckets keeps by default before it forgets the least recently used. */
const MAX_KEYS = 100_000;

/**
 * Token buckets by key: `burst` at once, refilled at `perSecond`. In memory, per process (limits
 * are per process: N processes allow N times the rate). Bounded: past `maxKeys` keys the least
 * recently used bucket is forgotten, one at a time, so a client rotating through addresses evicts
 * the idle, never the busy (a forgotten bucket is a full one: nobody's limit resets but its own).
 */
export class TokenBuckets {
  readonly #buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
    private readonly maxKeys = MAX_KEYS,
  ) {}

  /** Takes `cost` tokens if there are that many; says how long until there would be. */
  take(key: string, cost = 1): { ok: boolean; remaining: number; retryAfterSeconds: number } {
    const t = this.now();
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= this.maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!);
      bucket = { tokens: this.burst, updatedAt: t };
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((t - bucket.updatedAt) / 1000) * this.perSecond);
      bucket.updatedAt = t;
      // A Map iterates in insertion order: re-inserting makes it the most recently used.
      this.#buckets.delete(key);
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens < cost) {
      return {
        ok: false,
        remaining: 0,
        retryAfterSeconds: Math.max(1, Math.ceil((cost - bucket.tokens) / this.perSecond)),
      };
    }
    bucket.tokens -= cost;
    return { ok: true, remaining: Math.floor(bucket.tokens), retryAfterSeconds: 0 };
  }

  /** Whether `cost` tokens could be taken now (takes nothing). */
  allows(key: string, cost = 1): boolean {
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return true;
    return Math.min(this.burst, bucket.tokens + ((this.now() - bucket.updatedAt) / 1000) * this.perSecond) >= cost;
  }

  /** Seconds until the bucket is full again. */
  untilFull(key: string): number {
    const bucket = this.#buckets.get(key);
    return bucket === undefined ? 0 : Math.ceil((this.burst - bucket.tokens) / this.perSecond);
  }
}
