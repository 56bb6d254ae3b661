// Type parsers for our connections: exact numbers or a loud failure, never a silently rounded amount.
import { createTypeParsers, parseInt8, parseNumeric, UnsafeNumberError } from '../../../src/db/connection';

describe('parseInt8', () => {
  it('turns safe integers into numbers', () => {
    expect(parseInt8('0')).toBe(0);
    expect(parseInt8('-1590')).toBe(-1590);
    expect(parseInt8('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('throws beyond the safe range', () => {
    expect(() => parseInt8('9007199254740992')).toThrow(UnsafeNumberError);
    expect(() => parseInt8('-9223372036854775808')).toThrow(/outside the safe integer range/);
  });
});

describe('parseNumeric', () => {
  it('parses integral sums and short decimals', () => {
    expect(parseNumeric('4580')).toBe(4580);
    expect(parseNumeric('12.50')).toBe(12.5);
    expect(parseNumeric('-0.125')).toBe(-0.125);
    expect(parseNumeric('NaN')).toBeNaN();
  });

  it('throws when a JS number cannot hold the value exactly', () => {
    expect(() => parseNumeric('12345678901234567890')).toThrow(UnsafeNumberError);
    expect(() => parseNumeric('1234567890.1234567')).toThrow(/more digits/);
  });
});

describe('createTypeParsers', () => {
  it('overrides int8, numeric and date and leaves timestamptz to pg', () => {
    const parsers = createTypeParsers();
    expect(parsers.getTypeParser(20, 'text')('42')).toBe(42);
    expect(parsers.getTypeParser(1700, 'text')('1.5')).toBe(1.5);
    expect(parsers.getTypeParser(1082, 'text')('2026-12-01')).toBe('2026-12-01');
    expect(parsers.getTypeParser(1184, 'text')('2026-12-01 08:00:00+00')).toEqual(
      new Date('2026-12-01T08:00:00Z'),
    );
  });
});
