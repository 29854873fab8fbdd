import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import type { AttemptOutcome } from '../../net/http-client.js';

/**
 * Svix's schedule: the first attempt at once, then retries 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
 * and 10 h after the previous one (8 attempts over about 27.5 hours), each delay ±20% jitter.
 */
export const RETRY_DELAYS_MS = [
  5 * SECOND_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** After a throttling answer (429, 502, 503, 504) or a timeout, never retry sooner than this. */
const THROTTLED_MIN_DELAY_MS = MINUTE_MS;
/** The longest `Retry-After` we honour; longer asks are capped. */
const RETRY_AFTER_MAX_MS = 6 * HOUR_MS;
/** A subscription whose every attempt has failed for this long is deactivated. */
export const FAILING_DEACTIVATION_MS = 5 * DAY_MS;

export function succeeded(outcome: AttemptOutcome): boolean {
  return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
}

/** How long to wait after failed attempt number `attemptsMade` (1-based); null = give up. */
export function deliveryRetryDelayMs(
  attemptsMade: number,
  outcome: AttemptOutcome,
  random: () => number,
): number | null {
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  if (base === undefined) return null;
  let delay = Math.round(base * (0.8 + 0.4 * random()));
  const throttled = outcome.timedOut || [429, 502, 503, 504].includes(outcome.statusCode ?? 0);
  if (throttled) delay = Math.max(delay, THROTTLED_MIN_DELAY_MS);
  if (outcome.retryAfterSeconds !== null) {
    delay = Math.max(delay, Math.min(outcome.retryAfterSeconds * SECOND_MS, RETRY_AFTER_MAX_MS));
  }
  return delay;
}
