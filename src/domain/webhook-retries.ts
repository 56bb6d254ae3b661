// When a partner webhook is tried again: the Standard Webhooks schedule, its jitter, and a receiver's Retry-After.

/**
 * Seconds to wait before each attempt, the Standard Webhooks schedule: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 14 h, 20 h and 24 h. Its length is the number of attempts.
 */
export const standardRetryScheduleSeconds: readonly number[] = [
  0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
];

/** A receiver's Retry-After is honoured up to this: longer would let one answer park a delivery for days. */
export const maxRetryAfterSeconds = 86400;

/** Scheduled waits move by up to this share either way, so endpoints that failed together are not retried together. */
const jitterShare = 0.1;

/**
 * Milliseconds to wait before the next attempt, or undefined when every attempt of the schedule has been made.
 * `random` gives a number in [0, 1] (the caller's source: the workflow's deterministic one). A Retry-After (seconds,
 * from a 429 or 503) lengthens the wait, never shortens it.
 */
export function nextAttemptDelayMs(input: {
  attemptsMade: number;
  scheduleSeconds: readonly number[];
  retryAfterSeconds?: number;
  random: () => number;
}): number | undefined {
  const { attemptsMade, scheduleSeconds, retryAfterSeconds } = input;
  if (!Number.isInteger(attemptsMade) || attemptsMade < 0) {
    throw new Error(`attemptsMade must be a whole number of attempts, not ${attemptsMade}`);
  }
  if (attemptsMade >= scheduleSeconds.length) return undefined;
  const scheduledMs = scheduleSeconds[attemptsMade] * 1000;
  const jitteredMs =
    scheduledMs > 0 ? Math.round(scheduledMs * (1 + (2 * clamp(input.random(), 0, 1) - 1) * jitterShare)) : 0;
  if (retryAfterSeconds === undefined || !Number.isFinite(retryAfterSeconds) || retryAfterSeconds <= 0) {
    return jitteredMs;
  }
  return Math.max(jitteredMs, Math.min(retryAfterSeconds, maxRetryAfterSeconds) * 1000);
}

function clamp(value: number, low: number, high: number): number {
  return Number.isNaN(value) ? low : Math.min(high, Math.max(low, value));
}

const weekdays = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const longWeekdays = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const time = '(\\d{2}):(\\d{2}):(\\d{2})';
const month = `(${months.join('|')})`;
// RFC 9110's three forms of HTTP-date: IMF-fixdate, then the obsolete RFC 850 and asctime forms it still accepts.
const imfFixdate = new RegExp(`^(?:${weekdays.join('|')}), (\\d{2}) ${month} (\\d{4}) ${time} GMT$`);
const rfc850Date = new RegExp(`^(?:${longWeekdays.join('|')}), (\\d{2})-${month}-(\\d{2}) ${time} GMT$`);
const asctimeDate = new RegExp(`^(?:${weekdays.join('|')}) ${month} ( \\d|\\d{2}) ${time} (\\d{4})$`);

/**
 * Seconds a Retry-After header asks to wait: delta-seconds, or an HTTP-date measured from `now` (a date already past
 * is 0). Undefined when the header is absent or is neither.
 */
export function parseRetryAfter(headerValue: string | undefined, now: Date): number | undefined {
  if (headerValue === undefined) return undefined;
  const value = headerValue.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const at = httpDateMs(value, now);
  if (at === undefined) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

function httpDateMs(value: string, now: Date): number | undefined {
  let parts: { day: string; month: string; year: number; hour: string; minute: string; second: string };
  const imf = imfFixdate.exec(value);
  const rfc850 = rfc850Date.exec(value);
  const asctime = asctimeDate.exec(value);
  if (imf) {
    parts = {
      day: imf[1],
      month: imf[2],
      year: Number(imf[3]),
      hour: imf[4],
      minute: imf[5],
      second: imf[6],
    };
  } else if (rfc850) {
    // A two-digit year more than 50 years ahead is in the past century (RFC 9110, section 5.6.7).
    const twoDigits = Number(rfc850[3]);
    const century = 2000 + twoDigits > now.getUTCFullYear() + 50 ? 1900 : 2000;
    parts = {
      day: rfc850[1],
      month: rfc850[2],
      year: century + twoDigits,
      hour: rfc850[4],
      minute: rfc850[5],
      second: rfc850[6],
    };
  } else if (asctime) {
    parts = {
      day: asctime[2].trim(),
      month: asctime[1],
      year: Number(asctime[6]),
      hour: asctime[3],
      minute: asctime[4],
      second: asctime[5],
    };
  } else {
    return undefined;
  }
  const fields = [Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second)];
  const [day, hour, minute, second] = fields;
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const monthIndex = months.indexOf(parts.month);
  // Date.UTC rolls 31 February over into March: such a date is no date.
  if (new Date(Date.UTC(parts.year, monthIndex, day)).getUTCDate() !== day) return undefined;
  return Date.UTC(parts.year, monthIndex, day, hour, minute, second);
}

/**
 * A configured schedule, whole seconds separated by commas (`0,5,300`): at least one, the first 0 so the first
 * attempt goes at once. The error's message says what the value must be, for the configuration's own error.
 */
export function parseRetrySchedule(text: string): number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  const shape = 'must be whole seconds separated by commas, the first 0 (at once), e.g. 0,5,300';
  if (text.trim() === '') throw new Error(`${shape}; it is empty`);
  const bad = entries.find((entry) => !/^\d+$/.test(entry) || !Number.isSafeInteger(Number(entry)));
  if (bad !== undefined) throw new Error(`${shape}; "${bad}" is not a whole number of seconds`);
  const schedule = entries.map(Number);
  if (schedule[0] !== 0) throw new Error(`${shape}; it starts with ${schedule[0]}`);
  return schedule;
}
