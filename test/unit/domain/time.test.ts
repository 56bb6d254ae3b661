// Instants and durations: the one timestamp format, and unreadable stored timestamps as INTERNAL.
import { expect } from '@jest/globals';
import { addDuration, hourMs, minuteMs, timestampMs, toTimestamp } from '../../../src/domain/time';

describe('timestamps', () => {
  it('writes instants as ISO 8601 in UTC with milliseconds', () => {
    expect(toTimestamp(new Date(Date.UTC(2026, 10, 1, 9, 0, 0, 5)))).toBe('2026-11-01T09:00:00.005Z');
  });

  it('reads any ISO 8601 offset as the same instant', () => {
    expect(timestampMs('2026-11-01T10:00:00+01:00')).toBe(Date.UTC(2026, 10, 1, 9));
  });

  it('adds a duration to an instant', () => {
    expect(addDuration(new Date('2026-11-01T09:00:00.000Z'), hourMs + 30 * minuteMs)).toBe(
      '2026-11-01T10:30:00.000Z',
    );
  });

  it('reports an unreadable stored timestamp as INTERNAL', () => {
    expect(() => timestampMs('soon')).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});
