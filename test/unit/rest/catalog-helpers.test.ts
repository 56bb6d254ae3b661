// Pure helpers of the route catalogue: calendar dates and ISO 8601 durations.
import { isCalendarDate, minutesToIsoDuration } from '../../../src/application/catalog';

describe('isCalendarDate', () => {
  it.each(['2026-12-01', '2028-02-29', '2026-01-31'])('accepts %s', (date) => {
    expect(isCalendarDate(date)).toBe(true);
  });

  it.each(['0001-01-01', '0054-10-15', '0099-12-31', '9999-12-31'])(
    'accepts %s: every date from year 1 to 9999 the contract allows, years below 100 taken literally',
    (date) => {
      expect(isCalendarDate(date)).toBe(true);
    },
  );

  it.each(['0000-12-31', '0000-01-01', '0054-02-29'])(
    'refuses %s: there is no year 0 nor 29 February 54',
    (date) => {
      expect(isCalendarDate(date)).toBe(false);
    },
  );

  it.each(['2026-02-30', '2027-02-29', '2026-13-01', '2026-1-01', '20261201', '', 'today', 20261201])(
    'refuses %p',
    (date) => {
      expect(isCalendarDate(date)).toBe(false);
    },
  );
});

describe('minutesToIsoDuration', () => {
  it.each([
    [195, 'PT3H15M'],
    [180, 'PT3H'],
    [45, 'PT45M'],
    [1500, 'PT25H'],
  ])('%i minutes is %s', (minutes, duration) => {
    expect(minutesToIsoDuration(minutes)).toBe(duration);
  });
});
