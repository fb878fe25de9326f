/** Time source port and its two implementations. @module */

/** Where the engine reads the time from. `now()` is milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. Each `now()` call returns the set time. */
export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

/** A {@link ManualClock} starting at `startMs` (default 2026-01-01T00:00:00.000Z). */
export function manualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let t = startMs;
  return {
    now: () => t,
    set: (ms) => {
      t = ms;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

/** ISO 8601 UTC with milliseconds, the contract's timestamp format (`toISOString` always has them). */
export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** The contract's timestamp pattern. */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
