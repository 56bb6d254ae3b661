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

// ---- Calendar dates (birth dates, days of travel) ----

export interface CalendarDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const calendarDatePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** A `YYYY-MM-DD` date that exists in the Gregorian calendar (2024-02-29 does, 2026-02-29 does not). */
export function parseCalendarDate(text: unknown): CalendarDate | undefined {
  if (typeof text !== 'string') return undefined;
  const match = calendarDatePattern.exec(text);
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return { year, month, day };
}
