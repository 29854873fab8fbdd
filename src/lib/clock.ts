/** Time as the service sees it; tests pass a controllable clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds: the format of every timestamp the service stores and returns. */
export function isoNow(clock: Clock): string {
  return clock.now().toISOString();
}
