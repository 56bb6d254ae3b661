// Instants and durations for domain rules; the current time always arrives as a parameter.
import type { Timestamp } from './booking';
import { DomainError } from './errors';

export const minuteMs = 60_000;
export const hourMs = 60 * minuteMs;

export function toTimestamp(instant: Date): Timestamp {
  return instant.toISOString();
}

/** Milliseconds since the epoch; an unreadable stored timestamp is a data bug, hence INTERNAL. */
export function timestampMs(timestamp: Timestamp): number {
  const milliseconds = Date.parse(timestamp);
  if (Number.isNaN(milliseconds)) {
    throw new DomainError('INTERNAL', 'A stored timestamp is not a valid instant');
  }
  return milliseconds;
}

export function addDuration(instant: Date, durationMs: number): Timestamp {
  return new Date(instant.getTime() + durationMs).toISOString();
}
