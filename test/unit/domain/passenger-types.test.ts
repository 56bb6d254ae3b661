// Passenger types: ages on the day of travel (leap days, boundaries), the type rules, parties, and typed prices.
import type { FarePrices } from '../../../src/domain/booking';
import { DomainError } from '../../../src/domain/errors';
import { priceBooking } from '../../../src/domain/fares';
import {
  ageOn,
  assertPassengerTypeSet,
  assertPassengerTypes,
  defaultPassengerTypes,
  parseParty,
  partyFare,
  passengerTypeViolations,
  priceParty,
  pricePassenger,
  seatsNeeded,
  typeFare,
  type PassengerType,
} from '../../../src/domain/passenger-types';
import { parseCalendarDate } from '../../../src/domain/time';
import {
  euros,
  farePrices,
  firstPassengerId,
  passengers,
  secondPassengerId,
} from '../../support/booking-states';

function thrown(action: () => unknown): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

const types = defaultPassengerTypes;
const travelDate = '2026-12-01';
const pricing = { types, legCount: 2 };

describe('ageOn', () => {
  it('counts whole years, the birthday itself included', () => {
    expect(ageOn('2014-12-01', travelDate)).toBe(12);
    expect(ageOn('2014-12-02', travelDate)).toBe(11);
    expect(ageOn('2014-11-30', travelDate)).toBe(12);
    expect(ageOn('2026-12-01', travelDate)).toBe(0);
  });

  it('makes someone born on 29 February a year older on 1 March when the year has no 29 February', () => {
    expect(ageOn('2008-02-29', '2026-02-28')).toBe(17);
    expect(ageOn('2008-02-29', '2026-03-01')).toBe(18);
    expect(ageOn('2008-02-29', '2028-02-28')).toBe(19);
    expect(ageOn('2008-02-29', '2028-02-29')).toBe(20);
  });

  it('is negative for a birth date after the travel date', () => {
    expect(ageOn('2026-12-02', travelDate)).toBe(-1);
  });

  it('refuses dates that are not in the calendar', () => {
    expect(thrown(() => ageOn('2026-02-29', travelDate)).code).toBe('INTERNAL');
    expect(thrown(() => ageOn('2020-01-01', '2026-13-01')).code).toBe('INTERNAL');
  });
});

describe('parseCalendarDate', () => {
  it.each([
    ['2024-02-29', { year: 2024, month: 2, day: 29 }],
    ['2000-02-29', { year: 2000, month: 2, day: 29 }],
    ['2026-04-30', { year: 2026, month: 4, day: 30 }],
  ])('reads %s', (text, date) => {
    expect(parseCalendarDate(text)).toEqual(date);
  });

  it.each(['1900-02-29', '2026-02-29', '2026-04-31', '2026-00-10', '2026-1-01', '01.02.2026', '', 20260101])(
    'refuses %p',
    (text) => {
      expect(parseCalendarDate(text)).toBeUndefined();
    },
  );
});

describe('the default set', () => {
  it('is a valid set covering ages 0 to 99 without gaps', () => {
    expect(() => assertPassengerTypeSet(types)).not.toThrow();
    const ordered = [...types].sort((first, second) => first.minAge - second.minAge);
    expect(ordered[0].minAge).toBe(0);
    ordered.slice(1).forEach((type, index) => expect(type.minAge).toBe(ordered[index].maxAge + 1));
    expect(ordered.at(-1)?.maxAge).toBe(99);
  });

  it('refuses broken sets as a data bug', () => {
    const adult = types.find((type) => type.code === 'ADULT')!;
    const broken: PassengerType[] = [
      adult,
      { ...adult },
      { ...adult, code: 'SENIOR', minAge: 70, maxAge: 60, priceRule: { kind: 'share', percent: 120 } },
      { ...adult, code: 'PET', requiresCompanion: ['OWNER'] },
    ];
    const error = thrown(() => assertPassengerTypeSet(broken));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toContain('unique');
    expect(error.message).toContain("SENIOR's age range is empty");
    expect(error.message).toContain("SENIOR's share is a whole percent from 0 to 100");
    expect(error.message).toContain('PET requires OWNER');
    expect(thrown(() => assertPassengerTypeSet([])).message).toContain('at least one');
  });
});

describe('assertPassengerTypes', () => {
  const adult = { passengerType: 'ADULT', seatNumber: '3A' };

  it('accepts a family of two adults, a child and an infant on a lap', () => {
    expect(() =>
      assertPassengerTypes(
        [
          adult,
          { passengerType: 'ADULT', seatNumber: '3B', birthDate: '1990-05-05' },
          { passengerType: 'CHILD', seatNumber: '3C', birthDate: '2018-06-15' },
          { passengerType: 'INFANT', birthDate: '2025-01-10' },
        ],
        types,
        travelDate,
      ),
    ).not.toThrow();
  });

  it('treats a passenger without a type as an adult, who needs no birth date', () => {
    expect(
      passengerTypeViolations(
        [{ seatNumber: '3A' }, { passengerType: 'INFANT', birthDate: '2025-01-10' }],
        types,
        travelDate,
      ),
    ).toEqual([]);
  });

  it.each([
    ['CHILD', '2014-12-01', []],
    ['CHILD', '2014-12-02', []],
    ['CHILD', '2013-12-01', ["age 13 on 2026-12-01 is outside CHILD's 3–12"]],
    ['CHILD', '2023-12-01', []],
    ['CHILD', '2023-12-02', ["age 2 on 2026-12-01 is outside CHILD's 3–12"]],
    ['YOUTH', '2000-12-01', ["age 26 on 2026-12-01 is outside YOUTH's 13–25"]],
    ['YOUTH', '2000-12-02', []],
    ['ADULT', '1927-12-01', []],
    ['ADULT', '1926-12-01', ["age 100 on 2026-12-01 is outside ADULT's 26–99"]],
  ])('type %s born %s, at the boundary of its range', (passengerType, birthDate, messages) => {
    expect(
      passengerTypeViolations([{ passengerType, birthDate, seatNumber: '3B' }, adult], types, travelDate).map(
        (violation) => violation.message,
      ),
    ).toEqual(messages);
  });

  it('ages a leap-day child on the day of travel', () => {
    const leapChild = { passengerType: 'CHILD', birthDate: '2016-02-29', seatNumber: '3B' };
    expect(passengerTypeViolations([leapChild, adult], types, '2029-02-28')).toEqual([]);
    expect(passengerTypeViolations([leapChild, adult], types, '2029-03-01')).toEqual([
      { field: 'passengers[0].birth_date', message: "age 13 on 2029-03-01 is outside CHILD's 3–12" },
    ]);
  });

  it('names every problem with its field', () => {
    const error = thrown(() =>
      assertPassengerTypes(
        [
          { passengerType: 'TODDLER', seatNumber: '1A' },
          { passengerType: 'CHILD', seatNumber: '1B' },
          { passengerType: 'YOUTH', seatNumber: '1C', birthDate: '2010-02-30' },
          { passengerType: 'CHILD', seatNumber: '1D', birthDate: '2027-01-01' },
          { passengerType: 'CHILD', birthDate: '2018-01-01' },
          { passengerType: 'INFANT', seatNumber: '2A', birthDate: '2025-01-01' },
        ],
        types,
        travelDate,
      ),
    );
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldViolations).toEqual([
      {
        field: 'passengers[0].passenger_type',
        message: 'unknown passenger type TODDLER; this route sells INFANT, CHILD, YOUTH, ADULT',
      },
      { field: 'passengers[1].birth_date', message: 'is required for passenger type CHILD (ages 3–12)' },
      { field: 'passengers[2].birth_date', message: 'must be a calendar date such as 2019-04-23' },
      { field: 'passengers[3].birth_date', message: 'is after the day of travel 2026-12-01' },
      { field: 'passengers[4].seat_number', message: 'is required: a passenger of type CHILD takes a seat' },
      {
        field: 'passengers[5].seat_number',
        message: 'must be absent: a passenger of type INFANT travels on a lap and takes no seat',
      },
      {
        field: 'passengers[5].passenger_type',
        message: 'a passenger of type INFANT travels with a passenger of type ADULT in the same booking',
      },
    ]);
  });

  it('refuses more lap infants than adults, naming the infants beyond the laps', () => {
    const infant = { passengerType: 'INFANT', birthDate: '2025-01-10' };
    expect(passengerTypeViolations([adult, infant, infant], types, travelDate)).toEqual([
      {
        field: 'passengers[2].passenger_type',
        message: 'each lap passenger needs a lap of their own: 2 lap passengers, 1 ADULT',
      },
    ]);
    expect(passengerTypeViolations([adult, infant, adult, infant], types, travelDate)).toEqual([]);
  });

  it('does not count a child or a youth as an infant’s adult', () => {
    const violations = passengerTypeViolations(
      [
        { passengerType: 'YOUTH', seatNumber: '1A', birthDate: '2005-01-01' },
        { passengerType: 'INFANT', birthDate: '2025-01-10' },
      ],
      types,
      travelDate,
    );
    expect(violations.map((violation) => violation.field)).toEqual(['passengers[1].passenger_type']);
  });

  it('uses the caller’s paths and a set without lap types', () => {
    const seatedOnly = types.filter((type) => type.takesSeat);
    expect(
      passengerTypeViolations([{ passengerType: 'INFANT' }], seatedOnly, travelDate, {
        pathOf: (index) => `add_passengers[${index}]`,
      }),
    ).toEqual([
      {
        field: 'add_passengers[0].passenger_type',
        message: 'unknown passenger type INFANT; this route sells CHILD, YOUTH, ADULT',
      },
    ]);
  });

  it('lets a lap type without named companions sit on any seated passenger', () => {
    const lapAny: PassengerType[] = [
      ...types.filter((type) => type.code !== 'INFANT'),
      { ...types[0], requiresCompanion: undefined },
    ];
    const child = { passengerType: 'CHILD', seatNumber: '1A', birthDate: '2018-01-01' };
    const infant = { passengerType: 'INFANT', birthDate: '2025-01-10' };
    expect(passengerTypeViolations([child, infant], lapAny, travelDate)).toEqual([]);
    expect(passengerTypeViolations([child, infant, infant], lapAny, travelDate)).toEqual([
      {
        field: 'passengers[2].passenger_type',
        message: 'each lap passenger needs a lap of their own: 2 lap passengers, 1 seated passengers',
      },
    ]);
  });
});

describe('parseParty', () => {
  it('reads types and counts, in any case and with spaces', () => {
    expect(parseParty('ADULT:2,CHILD:1', types)).toEqual([
      { passengerType: 'ADULT', count: 2 },
      { passengerType: 'CHILD', count: 1 },
    ]);
    expect(parseParty(' adult:1 , infant:1', types)).toEqual([
      { passengerType: 'ADULT', count: 1 },
      { passengerType: 'INFANT', count: 1 },
    ]);
  });

  it.each<[unknown, string[]]>([
    ['', ['must name at least one passenger type and count, such as ADULT:2,CHILD:1']],
    [undefined, ['must name at least one passenger type and count, such as ADULT:2,CHILD:1']],
    ['ADULT', ['"ADULT" is not a type and a count such as ADULT:2']],
    ['ADULT:2,,CHILD:1', ['"" is not a type and a count such as ADULT:2']],
    ['SENIOR:1', ['unknown passenger type SENIOR; this route sells INFANT, CHILD, YOUTH, ADULT']],
    ['ADULT:0', ['the count of ADULT must be a whole number from 1 to 9']],
    ['ADULT:-1', ['"ADULT:-1" is not a type and a count such as ADULT:2']],
    ['ADULT:1.5', ['"ADULT:1.5" is not a type and a count such as ADULT:2']],
    ['ADULT:1,adult:2', ['ADULT is given more than once']],
    ['ADULT:5,CHILD:5', ['a party has at most 9 passengers; this one has 10']],
    ['INFANT:1', ['a passenger of type INFANT travels with a passenger of type ADULT in the same booking']],
    ['ADULT:1,INFANT:2', ['each lap passenger needs a lap of their own: 2 lap passengers, 1 ADULT']],
  ])('refuses %p', (text, messages) => {
    const error = thrown(() => parseParty(text, types));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldViolations).toEqual(messages.map((message) => ({ field: 'passengers', message })));
  });

  it('takes its cap and field from the caller', () => {
    expect(
      thrown(() => parseParty('ADULT:3', types, { maxPassengers: 2, field: 'party' })).fieldViolations,
    ).toEqual([{ field: 'party', message: 'the count of ADULT must be a whole number from 1 to 2' }]);
  });

  it('counts the seats a party needs: lap infants need none', () => {
    expect(seatsNeeded(parseParty('ADULT:2,CHILD:1,INFANT:1', types), types)).toBe(3);
  });
});

describe('prices', () => {
  it('prices a share half up to the minor unit', () => {
    const child = types.find((type) => type.code === 'CHILD');
    const youth = types.find((type) => type.code === 'YOUTH');
    expect(typeFare(euros(1255), child, 1)).toEqual(euros(628));
    expect(typeFare(euros(1254), child, 1)).toEqual(euros(627));
    expect(typeFare(euros(1001), youth, 1)).toEqual(euros(801));
    expect(typeFare(euros(1003), youth, 1)).toEqual(euros(802));
    expect(typeFare(euros(999), undefined, 1)).toEqual(euros(999));
  });

  it('prices a per-segment type by the legs of the segment, in the trip’s currency only', () => {
    const dog: PassengerType = {
      ...types[3],
      code: 'DOG',
      priceRule: { kind: 'per_segment', amount: euros(300) },
    };
    expect(typeFare(euros(2500), dog, 3)).toEqual(euros(900));
    expect(thrown(() => typeFare({ amountMinor: 2500, currency: 'USD' }, dog, 3)).code).toBe('INTERNAL');
    expect(thrown(() => typeFare(euros(2500), dog, 0)).code).toBe('INTERNAL');
  });

  it('prices passengers without types exactly as priceBooking', () => {
    expect(priceParty(passengers, farePrices, pricing)).toEqual(priceBooking(passengers, farePrices));
  });

  it('prices a family line by line, naming each type', () => {
    const family = [
      { id: firstPassengerId, seatNumber: '3A', fareClass: 'STANDARD' as const, passengerType: 'ADULT' },
      { id: secondPassengerId, seatNumber: '3B', fareClass: 'PREMIUM' as const },
      { id: 'child', seatNumber: '3C', fareClass: 'STANDARD' as const, passengerType: 'CHILD' },
      { id: 'infant', fareClass: 'STANDARD' as const, passengerType: 'INFANT' },
    ];
    expect(priceParty(family, farePrices, pricing)).toEqual({
      lines: [
        {
          passengerId: firstPassengerId,
          seatNumber: '3A',
          fareClass: 'STANDARD',
          amount: euros(2500),
          passengerType: 'ADULT',
        },
        { passengerId: secondPassengerId, seatNumber: '3B', fareClass: 'PREMIUM', amount: euros(4000) },
        {
          passengerId: 'child',
          seatNumber: '3C',
          fareClass: 'STANDARD',
          amount: euros(1250),
          passengerType: 'CHILD',
        },
        {
          passengerId: 'infant',
          seatNumber: '',
          fareClass: 'STANDARD',
          amount: euros(0),
          passengerType: 'INFANT',
        },
      ],
      total: euros(7750),
    });
    expect(pricePassenger(family[2], farePrices, pricing).amount).toEqual(euros(1250));
  });

  it('refuses an unknown type or a class the trip does not sell', () => {
    const standardOnly: FarePrices = { STANDARD: euros(2500) };
    expect(
      thrown(() =>
        priceParty(
          [{ id: 'p', seatNumber: '1A', fareClass: 'STANDARD', passengerType: 'SENIOR' }],
          farePrices,
          pricing,
        ),
      ).fieldViolations,
    ).toEqual([
      {
        field: 'passengers[0].passenger_type',
        message: 'unknown passenger type SENIOR; this route sells INFANT, CHILD, YOUTH, ADULT',
      },
    ]);
    expect(
      thrown(() => priceParty([{ id: 'p', seatNumber: '1A', fareClass: 'PREMIUM' }], standardOnly, pricing))
        .fieldViolations,
    ).toEqual([
      { field: 'passengers[0].fare_class', message: 'fare class PREMIUM is not sold on this trip' },
    ]);
  });

  it('prices a search party per type and in total', () => {
    expect(partyFare(parseParty('ADULT:2,CHILD:1,INFANT:1', types), euros(1255), pricing)).toEqual({
      lines: [
        { passengerType: 'ADULT', count: 2, unitPrice: euros(1255), amount: euros(2510) },
        { passengerType: 'CHILD', count: 1, unitPrice: euros(628), amount: euros(628) },
        { passengerType: 'INFANT', count: 1, unitPrice: euros(0), amount: euros(0) },
      ],
      total: euros(3138),
    });
  });
});
