import { describe, expect, it } from 'vitest';
import { parseRetryAfter, type AttemptOutcome } from '../../net/http-client.js';
import { MAX_ATTEMPTS, deliveryRetryDelayMs } from './webhooks.retry.js';

const outcome = (partial: Partial<AttemptOutcome>): AttemptOutcome => ({
  statusCode: 500,
  error: null,
  timedOut: false,
  durationMs: 1,
  body: null,
  retryAfterSeconds: null,
  bodyTruncated: false,
  ...partial,
});
const middle = () => 0.5;

describe('deliveryRetryDelayMs', () => {
  it('follows the Svix schedule, then gives up', () => {
    const delays = Array.from({ length: MAX_ATTEMPTS }, (_, i) => deliveryRetryDelayMs(i + 1, outcome({}), middle));
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, null]);
  });

  it('waits at least a minute after 429, 502, 503, 504 and timeouts, not after 500', () => {
    for (const statusCode of [429, 502, 503, 504])
      expect(deliveryRetryDelayMs(1, outcome({ statusCode }), middle)).toBe(60_000);
    expect(deliveryRetryDelayMs(1, outcome({ statusCode: null, timedOut: true, error: 'timeout' }), middle)).toBe(
      60_000,
    );
    expect(deliveryRetryDelayMs(1, outcome({ statusCode: 500 }), middle)).toBe(5_000);
  });

  it('honours a longer Retry-After up to 6 hours, never a shorter one', () => {
    expect(deliveryRetryDelayMs(1, outcome({ statusCode: 503, retryAfterSeconds: 120 }), middle)).toBe(120_000);
    expect(deliveryRetryDelayMs(1, outcome({ statusCode: 503, retryAfterSeconds: 1 }), middle)).toBe(60_000);
    expect(deliveryRetryDelayMs(2, outcome({ statusCode: 429, retryAfterSeconds: 86_400 }), middle)).toBe(
      6 * 3_600_000,
    );
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, ignores the rest', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:05:00 GMT', now)).toBe(300);
    expect(parseRetryAfter('Sun, 22 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
