// A trip's fares column: the subquery every trip read embeds, and how its JSON is read back.
import { UnsafeNumberError } from '../../../src/db/connection';
import { farePricesOf, tripFaresOf, tripFaresSql } from '../../../src/db/trip-fares';

describe('tripFaresSql', () => {
  it("reads the fares of the surrounding query's trip alias", () => {
    expect(tripFaresSql('day_trip')).toMatch(/FROM trip_fares AS fare WHERE fare\.trip_id = day_trip\.id\)$/);
  });

  it.each(['trips; DROP TABLE trips', 'Trips', '"trips"', ''])('refuses %j as an alias', (alias) => {
    expect(() => tripFaresSql(alias)).toThrow(RangeError);
  });
});

describe('reading the fares column', () => {
  it('gives amounts as numbers and currencies without padding', () => {
    expect(
      tripFaresOf([
        ['STANDARD', '2500', 'EUR'],
        ['PREMIUM', '4000', 'EUR '],
      ]),
    ).toEqual([
      { fareClass: 'STANDARD', amountMinor: 2500, currency: 'EUR' },
      { fareClass: 'PREMIUM', amountMinor: 4000, currency: 'EUR' },
    ]);
  });

  it('gives prices per fare class', () => {
    expect(farePricesOf([['PREMIUM', '4000', 'EUR ']])).toEqual({
      PREMIUM: { amountMinor: 4000, currency: 'EUR' },
    });
  });

  it('reads a trip without fares as none', () => {
    expect(tripFaresOf([])).toEqual([]);
    expect(farePricesOf([])).toEqual({});
  });

  it('fails loudly on an amount a JavaScript number cannot hold exactly', () => {
    expect(() => tripFaresOf([['STANDARD', '9007199254740993', 'EUR']])).toThrow(UnsafeNumberError);
  });
});
