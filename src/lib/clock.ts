/** Time as the service sees it; tests pass a controllable clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Durations in milliseconds, named once. */
export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** ISO 8601 UTC with milliseconds: the format of every timestamp the service stores and returns. */
export function isoNow(clock: Clock): string {
  return clock.now().toISOString();
}

/** The instants both engines store and compare as ISO strings: years 0001 to 9999, in UTC. */
const FIRST_INSTANT_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * A date-time text as ISO 8601 UTC with milliseconds, or null when it names no instant or one
 * outside years 0001–9999 in UTC. Outside them `toISOString()` writes `0000-…` or `+010000-…`,
 * which PostgreSQL refuses and which no longer sort as text; zone offsets move a date near the
 * ends over the edge (`0001-01-01T00:00:00+23:59` is in year 0000 UTC).
 */
export function parseInstant(text: string): string | null {
  const ms = Date.parse(text);
  if (Number.isNaN(ms) || ms < FIRST_INSTANT_MS || ms > LAST_INSTANT_MS) return null;
  return new Date(ms).toISOString();
}
