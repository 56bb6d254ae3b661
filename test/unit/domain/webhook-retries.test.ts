// The webhook retry schedule: its waits and jitter, Retry-After as a floor, and the configured schedule's reading.
import { expect } from '@jest/globals';
import {
  maxRetryAfterSeconds,
  nextAttemptDelayMs,
  parseRetryAfter,
  parseRetrySchedule,
  standardRetryScheduleSeconds,
} from '../../../src/domain/webhook-retries';

const middle = () => 0.5;
const lowest = () => 0;
const highest = () => 1;

describe('the Standard Webhooks schedule', () => {
  it('is at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h', () => {
    expect(standardRetryScheduleSeconds).toEqual([
      0,
      5,
      5 * 60,
      30 * 60,
      2 * 3600,
      5 * 3600,
      10 * 3600,
      14 * 3600,
      20 * 3600,
      24 * 3600,
    ]);
  });

  it('waits each scheduled delay in turn, without jitter at the middle of random', () => {
    const waits = standardRetryScheduleSeconds.map((_, attemptsMade) =>
      nextAttemptDelayMs({ attemptsMade, scheduleSeconds: standardRetryScheduleSeconds, random: middle }),
    );
    expect(waits).toEqual(standardRetryScheduleSeconds.map((seconds) => seconds * 1000));
  });

  it('is exhausted once every attempt has been made', () => {
    const scheduleSeconds = standardRetryScheduleSeconds;
    expect(nextAttemptDelayMs({ attemptsMade: 10, scheduleSeconds, random: middle })).toBeUndefined();
    expect(nextAttemptDelayMs({ attemptsMade: 11, scheduleSeconds, random: middle })).toBeUndefined();
    expect(
      nextAttemptDelayMs({ attemptsMade: 10, scheduleSeconds, retryAfterSeconds: 60, random: middle }),
    ).toBeUndefined();
  });

  it('moves a scheduled delay by at most 10% either way', () => {
    const scheduleSeconds = standardRetryScheduleSeconds;
    expect(nextAttemptDelayMs({ attemptsMade: 2, scheduleSeconds, random: lowest })).toBe(270_000);
    expect(nextAttemptDelayMs({ attemptsMade: 2, scheduleSeconds, random: highest })).toBe(330_000);
    expect(nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, random: () => 0.75 })).toBe(5250);
  });

  it('never delays the first attempt, whatever random says', () => {
    const scheduleSeconds = standardRetryScheduleSeconds;
    expect(nextAttemptDelayMs({ attemptsMade: 0, scheduleSeconds, random: highest })).toBe(0);
    expect(nextAttemptDelayMs({ attemptsMade: 0, scheduleSeconds, random: lowest })).toBe(0);
  });

  it('keeps jitter within bounds when random strays outside [0, 1]', () => {
    const scheduleSeconds = [0, 100];
    expect(nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, random: () => 7 })).toBe(110_000);
    expect(nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, random: () => -3 })).toBe(90_000);
    expect(nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, random: () => Number.NaN })).toBe(90_000);
  });

  it('refuses a count of attempts that is no count', () => {
    const scheduleSeconds = standardRetryScheduleSeconds;
    expect(() => nextAttemptDelayMs({ attemptsMade: -1, scheduleSeconds, random: middle })).toThrow(
      'attemptsMade must be a whole number of attempts, not -1',
    );
    expect(() => nextAttemptDelayMs({ attemptsMade: 1.5, scheduleSeconds, random: middle })).toThrow(
      /attemptsMade/,
    );
  });
});

describe('Retry-After', () => {
  const scheduleSeconds = standardRetryScheduleSeconds;

  it('lengthens a shorter scheduled wait', () => {
    expect(
      nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, retryAfterSeconds: 120, random: highest }),
    ).toBe(120_000);
  });

  it('never shortens a longer scheduled wait', () => {
    expect(
      nextAttemptDelayMs({ attemptsMade: 3, scheduleSeconds, retryAfterSeconds: 10, random: lowest }),
    ).toBe(1_620_000);
  });

  it('is honoured up to 24 hours', () => {
    expect(maxRetryAfterSeconds).toBe(86400);
    expect(
      nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, retryAfterSeconds: 7 * 86400, random: middle }),
    ).toBe(86_400_000);
  });

  it('of zero or less leaves the schedule as it is', () => {
    expect(
      nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, retryAfterSeconds: 0, random: middle }),
    ).toBe(5000);
    expect(
      nextAttemptDelayMs({ attemptsMade: 1, scheduleSeconds, retryAfterSeconds: -5, random: middle }),
    ).toBe(5000);
  });
});

describe('parseRetryAfter', () => {
  const now = new Date(Date.UTC(2026, 10, 29, 8, 0, 0));

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an IMF-fixdate as the seconds until it', () => {
    expect(parseRetryAfter('Sun, 29 Nov 2026 08:02:00 GMT', now)).toBe(120);
  });

  it('reads the obsolete RFC 850 and asctime forms', () => {
    expect(parseRetryAfter('Sunday, 29-Nov-26 08:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Sun Nov 29 09:00:00 2026', now)).toBe(3600);
    expect(parseRetryAfter('Tue Dec  1 08:00:00 2026', now)).toBe(2 * 86400);
  });

  it('rounds a fraction of a second up', () => {
    expect(parseRetryAfter('Sun, 29 Nov 2026 08:00:01 GMT', new Date(now.getTime() + 500))).toBe(1);
  });

  it('reads a date already past as no wait', () => {
    expect(parseRetryAfter('Sat, 28 Nov 2026 08:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(0);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['a word', 'soon'],
    ['negative seconds', '-5'],
    ['fractional seconds', '1.5'],
    ['an ISO 8601 instant', '2026-11-29T08:02:00Z'],
    ['a date without its zone', 'Sun, 29 Nov 2026 08:02:00'],
    ['a day no month has', 'Mon, 31 Feb 2026 08:02:00 GMT'],
    ['an hour no day has', 'Sun, 29 Nov 2026 25:02:00 GMT'],
  ])('is undefined for %s', (_label, value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('parseRetrySchedule', () => {
  it('reads whole seconds separated by commas', () => {
    expect(parseRetrySchedule('0,5,300')).toEqual([0, 5, 300]);
    expect(parseRetrySchedule(' 0 , 1 ,2 ')).toEqual([0, 1, 2]);
    expect(parseRetrySchedule('0')).toEqual([0]);
  });

  it('reads the standard schedule written out', () => {
    expect(parseRetrySchedule(standardRetryScheduleSeconds.join(','))).toEqual(standardRetryScheduleSeconds);
  });

  it.each([
    ['', 'it is empty'],
    ['  ', 'it is empty'],
    ['5,300', 'it starts with 5'],
    ['0,,5', '"" is not a whole number of seconds'],
    ['0,5,', '"" is not a whole number of seconds'],
    ['0,-5', '"-5" is not a whole number of seconds'],
    ['0,1.5', '"1.5" is not a whole number of seconds'],
    ['0,5s', '"5s" is not a whole number of seconds'],
    ['0,99999999999999999999', '"99999999999999999999" is not a whole number of seconds'],
  ])('refuses %j: %s', (text, problem) => {
    expect(() => parseRetrySchedule(text)).toThrow(
      `must be whole seconds separated by commas, the first 0 (at once), e.g. 0,5,300; ${problem}`,
    );
  });
});
