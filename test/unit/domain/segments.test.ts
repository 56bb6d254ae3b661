// Segments: validation naming the field, legs and overlap, local times with each stop's own offset, segment fares.
import { DomainError } from '../../../src/domain/errors';
import {
  describeLegs,
  localDate,
  localRfc3339,
  overlappingLegs,
  resolveSegment,
  segmentChangeTerms,
  segmentFare,
  segmentLegs,
  segmentsOverlap,
  segmentTimes,
  stopTime,
  uncoveredLegs,
  type RouteStop,
} from '../../../src/domain/segments';

const stops: RouteStop[] = [
  { code: 'LIS', name: 'Lisboa Oriente', city: 'Lisbon', timeZone: 'Europe/Lisbon', minutesFromOrigin: 0 },
  { code: 'BJZ', name: 'Badajoz', city: 'Badajoz', timeZone: 'Europe/Madrid', minutesFromOrigin: 210 },
  {
    code: 'MAD',
    name: 'Madrid Estación Sur',
    city: 'Madrid',
    timeZone: 'Europe/Madrid',
    minutesFromOrigin: 480,
  },
  { code: 'ZAZ', name: 'Zaragoza', city: 'Zaragoza', timeZone: 'Europe/Madrid', minutesFromOrigin: 705 },
];

function violationsOf(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
    return (error as DomainError).fieldViolations?.map((violation) => violation.field);
  }
  throw new Error('expected a validation failure');
}

describe('resolveSegment', () => {
  it('defaults to the route ends, so a request naming no stop books the whole route', () => {
    expect(resolveSegment(stops, {})).toEqual({
      boardingStopCode: 'LIS',
      alightingStopCode: 'ZAZ',
      boardingPosition: 0,
      alightingPosition: 3,
    });
  });

  it('takes any two stops in travel order, each side defaulting on its own', () => {
    expect(resolveSegment(stops, { boardingStopCode: 'BJZ', alightingStopCode: 'MAD' })).toMatchObject({
      boardingPosition: 1,
      alightingPosition: 2,
    });
    expect(resolveSegment(stops, { boardingStopCode: 'MAD' })).toMatchObject({
      boardingStopCode: 'MAD',
      alightingStopCode: 'ZAZ',
    });
    expect(resolveSegment(stops, { alightingStopCode: 'BJZ' })).toMatchObject({
      boardingStopCode: 'LIS',
      alightingStopCode: 'BJZ',
    });
  });

  it('names the field of a stop not on the route', () => {
    expect(violationsOf(() => resolveSegment(stops, { boardingStopCode: 'BER' }))).toEqual(['boarding_stop']);
    expect(violationsOf(() => resolveSegment(stops, { alightingStopCode: 'BER' }))).toEqual([
      'alighting_stop',
    ]);
    expect(
      violationsOf(() => resolveSegment(stops, { boardingStopCode: 'X1', alightingStopCode: 'X2' })),
    ).toEqual(['boarding_stop', 'alighting_stop']);
  });

  it('refuses stops out of travel order or the same stop twice', () => {
    expect(
      violationsOf(() => resolveSegment(stops, { boardingStopCode: 'MAD', alightingStopCode: 'BJZ' })),
    ).toEqual(['alighting_stop']);
    expect(
      violationsOf(() => resolveSegment(stops, { boardingStopCode: 'MAD', alightingStopCode: 'MAD' })),
    ).toEqual(['alighting_stop']);
    expect(violationsOf(() => resolveSegment(stops, { boardingStopCode: 'ZAZ' }))).toEqual(['boarding_stop']);
  });
});

describe('legs', () => {
  const whole = { boardingPosition: 0, alightingPosition: 3 };
  const first = { boardingPosition: 0, alightingPosition: 1 };
  const rest = { boardingPosition: 1, alightingPosition: 3 };
  const middle = { boardingPosition: 1, alightingPosition: 2 };

  it('are the half-open range from the boarding to the alighting position', () => {
    expect(segmentLegs(whole)).toEqual([0, 1, 2]);
    expect(segmentLegs(middle)).toEqual([1]);
    expect(describeLegs(stops, segmentLegs(rest))).toBe('BJZ→MAD, MAD→ZAZ');
  });

  it('overlap when the segments share a leg, not when they only touch at a stop', () => {
    expect(segmentsOverlap(first, rest)).toBe(false);
    expect(overlappingLegs(first, rest)).toEqual([]);
    expect(segmentsOverlap(whole, middle)).toBe(true);
    expect(overlappingLegs(whole, rest)).toEqual([1, 2]);
    expect(overlappingLegs(middle, rest)).toEqual([1]);
  });
});

describe('local times', () => {
  it('formats an instant with the stop zone’s own offset, summer and winter', () => {
    expect(localRfc3339('2026-07-01T08:00:00.000Z', 'Europe/Lisbon')).toBe('2026-07-01T09:00:00+01:00');
    expect(localRfc3339('2026-12-01T08:00:00.000Z', 'Europe/Lisbon')).toBe('2026-12-01T08:00:00+00:00');
    expect(localRfc3339('2026-12-01T08:00:00.000Z', 'Europe/Madrid')).toBe('2026-12-01T09:00:00+01:00');
    expect(localRfc3339('2026-03-29T01:30:00.000Z', 'Europe/Berlin')).toBe('2026-03-29T03:30:00+02:00');
  });

  it('gives the local date, which can differ from the UTC date', () => {
    expect(localDate('2026-12-01T23:30:00.000Z', 'Europe/Madrid')).toBe('2026-12-02');
  });

  it('places the bus at each stop by its minutes from the origin', () => {
    const departure = '2026-07-01T07:00:00.000Z';
    expect(stopTime(stops[1], departure).localTime).toBe('2026-07-01T12:30:00+02:00');
    expect(segmentTimes(stops, { boardingPosition: 1, alightingPosition: 3 }, departure)).toEqual({
      departure: '2026-07-01T10:30:00.000Z',
      arrival: '2026-07-01T18:45:00.000Z',
    });
  });
});

describe('segmentFare', () => {
  const fare = { amountMinor: 4590, currency: 'EUR' };

  it('charges the whole route its fare', () => {
    expect(segmentFare(fare, stops, { boardingPosition: 0, alightingPosition: 3 })).toEqual(fare);
  });

  it('charges a segment its share of the travel time, in whole tens', () => {
    // 210 of 705 minutes.
    expect(segmentFare(fare, stops, { boardingPosition: 0, alightingPosition: 1 })).toEqual({
      amountMinor: 1370,
      currency: 'EUR',
    });
  });

  it('never charges less than a tenth of the route fare', () => {
    const short: RouteStop[] = [stops[0], { ...stops[1], minutesFromOrigin: 5 }, stops[3]];
    expect(segmentFare(fare, short, { boardingPosition: 0, alightingPosition: 1 }).amountMinor).toBe(460);
  });
});

describe('uncoveredLegs', () => {
  it('is the wanted range minus every held range', () => {
    expect(uncoveredLegs({ from: 0, to: 4 }, [])).toEqual([{ from: 0, to: 4 }]);
    expect(uncoveredLegs({ from: 0, to: 4 }, [{ from: 1, to: 2 }])).toEqual([
      { from: 0, to: 1 },
      { from: 2, to: 4 },
    ]);
    expect(uncoveredLegs({ from: 1, to: 3 }, [{ from: 0, to: 4 }])).toEqual([]);
    expect(
      uncoveredLegs({ from: 1, to: 3 }, [
        { from: 2, to: 5 },
        { from: 0, to: 1 },
      ]),
    ).toEqual([{ from: 1, to: 2 }]);
  });
});

describe('segmentChangeTerms', () => {
  const fares = { STANDARD: { amountMinor: 4590, currency: 'EUR' } };
  const terms = (
    request: { boardingStopCode?: string; alightingStopCode?: string },
    now = '2026-06-30T00:00:00.000Z',
  ) =>
    segmentChangeTerms({
      stops,
      current: { boardingPosition: 0, alightingPosition: 1 },
      request,
      tripFarePrices: fares,
      tripDeparture: '2026-07-01T07:00:00.000Z',
      now,
    });

  it('keeps the side the request does not name, and prices and times the new segment', () => {
    const longer = terms({ alightingStopCode: 'MAD' });
    expect(longer.segment).toMatchObject({
      boardingStopCode: 'LIS',
      alightingStopCode: 'MAD',
      alightingPosition: 2,
    });
    expect(longer.segment.alightingStop.localTime).toBe('2026-07-01T17:00:00+02:00');
    expect(longer.previousLegs).toEqual({ from: 0, to: 1 });
    expect(longer.arrivalTime).toBe('2026-07-01T15:00:00.000Z');
    expect(longer.farePrices.STANDARD?.amountMinor).toBe(3130);
  });

  it('refuses the same segment again and a boarding stop the bus has left', () => {
    expect(violationsOf(() => terms({ alightingStopCode: 'BJZ' }))).toEqual(['alighting_stop']);
    expect(
      violationsOf(() =>
        terms({ boardingStopCode: 'BJZ', alightingStopCode: 'ZAZ' }, '2026-07-01T11:00:00.000Z'),
      ),
    ).toEqual(['boarding_stop']);
  });
});
