// Segments of a trip: a route's stops in travel order, the legs between them, and what a segment costs and when.
import type {
  BookingSegment,
  FarePrices,
  LegRange,
  Money,
  Segment,
  SegmentPositions,
  SegmentStopTime,
  Timestamp,
} from './booking';

export type { BookingSegment, LegRange, Segment, SegmentPositions, SegmentStopTime } from './booking';
import { DomainError, seatUnavailable, validationFailed } from './errors';
import { minuteMs, timestampMs } from './time';

/** One stop of a route; `minutesFromOrigin` is 0 at the origin and grows strictly along the route. */
export interface RouteStop {
  readonly code: string;
  readonly name: string;
  readonly city: string;
  readonly timeZone: string;
  readonly minutesFromOrigin: number;
}

export function legRangeOf(segment: SegmentPositions): LegRange {
  return { from: segment.boardingPosition, to: segment.alightingPosition };
}

/** The legs of `wanted` not covered by any range of `held`, as ranges in travel order. */
export function uncoveredLegs(wanted: LegRange, held: readonly LegRange[]): LegRange[] {
  const missing: LegRange[] = [];
  let start = wanted.from;
  for (const range of [...held].sort((first, second) => first.from - second.from)) {
    if (range.to <= start || range.from >= wanted.to) continue;
    if (range.from > start) missing.push({ from: start, to: range.from });
    start = Math.max(start, range.to);
  }
  if (start < wanted.to) missing.push({ from: start, to: wanted.to });
  return missing;
}

export interface SegmentRequest {
  readonly boardingStopCode?: string;
  readonly alightingStopCode?: string;
}

/** Field names of a segment in requests, as both fronts spell them. */
export const boardingStopField = 'boarding_stop';
export const alightingStopField = 'alighting_stop';

/**
 * The segment a request asks for on a route whose stops are `stops` (travel order). An absent stop defaults to the
 * route's end on that side, so a request naming neither books the whole route. A stop not on the route, or a pair
 * not in travel order, is a VALIDATION_FAILED naming the field.
 */
export function resolveSegment(stops: readonly RouteStop[], request: SegmentRequest): Segment {
  if (stops.length < 2) throw new DomainError('INTERNAL', 'A route must have at least two stops');
  const positionOf = (code: string | undefined, fallback: number) =>
    code === undefined ? fallback : stops.findIndex((stop) => stop.code === code);
  const boardingPosition = positionOf(request.boardingStopCode, 0);
  const alightingPosition = positionOf(request.alightingStopCode, stops.length - 1);
  const violations = [
    ...(boardingPosition < 0
      ? [
          {
            field: boardingStopField,
            message: `stop ${request.boardingStopCode} is not on this trip's route`,
          },
        ]
      : []),
    ...(alightingPosition < 0
      ? [
          {
            field: alightingStopField,
            message: `stop ${request.alightingStopCode} is not on this trip's route`,
          },
        ]
      : []),
  ];
  if (violations.length > 0) throw validationFailed(violations);
  if (alightingPosition <= boardingPosition) {
    const field = request.alightingStopCode !== undefined ? alightingStopField : boardingStopField;
    throw validationFailed([
      {
        field,
        message: `the alighting stop ${stops[alightingPosition].code} does not come after the boarding stop ${stops[boardingPosition].code}`,
      },
    ]);
  }
  return {
    boardingStopCode: stops[boardingPosition].code,
    alightingStopCode: stops[alightingPosition].code,
    boardingPosition,
    alightingPosition,
  };
}

/** The whole route as a segment: what a booking made before segments existed travels. */
export function wholeRouteSegment(stops: readonly RouteStop[]): Segment {
  return resolveSegment(stops, {});
}

export function legCount(stops: readonly unknown[]): number {
  return stops.length - 1;
}

/** The legs a segment covers, in travel order. */
export function segmentLegs(segment: SegmentPositions): number[] {
  return Array.from(
    { length: segment.alightingPosition - segment.boardingPosition },
    (_unused, index) => segment.boardingPosition + index,
  );
}

/** The legs both segments cover (empty when they only touch at a stop). */
export function overlappingLegs(first: SegmentPositions, second: SegmentPositions): number[] {
  const from = Math.max(first.boardingPosition, second.boardingPosition);
  const to = Math.min(first.alightingPosition, second.alightingPosition);
  return segmentLegs({ boardingPosition: from, alightingPosition: Math.max(from, to) });
}

export function segmentsOverlap(first: SegmentPositions, second: SegmentPositions): boolean {
  return overlappingLegs(first, second).length > 0;
}

export function sameSegment(first: SegmentPositions, second: SegmentPositions): boolean {
  return (
    first.boardingPosition === second.boardingPosition && first.alightingPosition === second.alightingPosition
  );
}

/** Legs named for people: `AMS→HAJ, HAJ→BER`. */
export function describeLegs(stops: readonly Pick<RouteStop, 'code'>[], legs: readonly number[]): string {
  return legs.map((leg) => `${stops[leg].code}→${stops[leg + 1].code}`).join(', ');
}

/** The instant the bus is at `stop` on a trip that leaves its origin at `tripDeparture`. */
export function instantAtStop(
  tripDeparture: Timestamp,
  stop: Pick<RouteStop, 'minutesFromOrigin'>,
): Timestamp {
  return new Date(timestampMs(tripDeparture) + stop.minutesFromOrigin * minuteMs).toISOString();
}

/** `GMT+02:00` / `GMT` as Intl names offsets, into `+02:00` / `+00:00` (a local time, not UTC's `Z`). */
function offsetSuffix(longOffsetName: string): string {
  const offset = longOffsetName.replace(/^GMT/, '');
  return offset === '' ? '+00:00' : offset;
}

/** An instant as RFC 3339 in the wall-clock time and UTC offset of `timeZone` (an IANA name), to the second. */
export function localRfc3339(instant: Timestamp, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'longOffset',
  }).formatToParts(new Date(timestampMs(instant)));
  const part = (type: Intl.DateTimeFormatPartTypes) =>
    parts.find((candidate) => candidate.type === type)?.value;
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}${offsetSuffix(part('timeZoneName') ?? 'GMT')}`;
}

/** The calendar date (YYYY-MM-DD) of an instant in `timeZone`. */
export function localDate(instant: Timestamp, timeZone: string): string {
  return localRfc3339(instant, timeZone).slice(0, 10);
}

/** A stop of the segment with the local time the bus is there. */
export function stopTime(stop: RouteStop, tripDeparture: Timestamp): SegmentStopTime {
  return {
    code: stop.code,
    name: stop.name,
    city: stop.city,
    timeZone: stop.timeZone,
    localTime: localRfc3339(instantAtStop(tripDeparture, stop), stop.timeZone),
  };
}

/** When the bus leaves the boarding stop and reaches the alighting stop, as instants (UTC). */
export function segmentTimes(
  stops: readonly RouteStop[],
  segment: SegmentPositions,
  tripDeparture: Timestamp,
): { departure: Timestamp; arrival: Timestamp } {
  return {
    departure: instantAtStop(tripDeparture, stops[segment.boardingPosition]),
    arrival: instantAtStop(tripDeparture, stops[segment.alightingPosition]),
  };
}

/**
 * The fare of a segment from the whole route's fare: the share of the route's travel time the segment takes,
 * rounded to whole tens of minor units and never below a tenth of the route's fare, so a short hop still costs
 * something. The whole route costs exactly the route's fare.
 */
export function segmentFare(
  routeFare: Money,
  stops: readonly Pick<RouteStop, 'minutesFromOrigin'>[],
  segment: SegmentPositions,
): Money {
  const total = stops[stops.length - 1].minutesFromOrigin;
  const covered =
    stops[segment.alightingPosition].minutesFromOrigin - stops[segment.boardingPosition].minutesFromOrigin;
  if (covered >= total) return routeFare;
  const share = Math.round((routeFare.amountMinor * covered) / total / 10) * 10;
  const floor = Math.round(routeFare.amountMinor / 10 / 10) * 10;
  return {
    amountMinor: Math.min(routeFare.amountMinor, Math.max(share, floor)),
    currency: routeFare.currency,
  };
}

/** Each fare class's price for the segment (segmentFare of the trip's price for the whole route). */
export function segmentFarePrices(
  farePrices: FarePrices,
  stops: readonly Pick<RouteStop, 'minutesFromOrigin'>[],
  segment: SegmentPositions,
): FarePrices {
  return Object.fromEntries(
    Object.entries(farePrices).map(([fareClass, price]) => [fareClass, segmentFare(price, stops, segment)]),
  );
}

export function bookingSegmentOf(
  stops: readonly RouteStop[],
  segment: Segment,
  tripDeparture: Timestamp,
): BookingSegment {
  return {
    ...segment,
    boardingStop: stopTime(stops[segment.boardingPosition], tripDeparture),
    alightingStop: stopTime(stops[segment.alightingPosition], tripDeparture),
  };
}

/** An allocation of a seat by another booking: which seat, on which legs. */
export interface TakenLegs {
  readonly seatNumber: string;
  readonly legs: LegRange;
}

/**
 * SEAT_UNAVAILABLE for a request of `wanted` legs on a route whose stops are `stopCodes`: names each taken seat and
 * the legs it shares with the request (`1A is taken on HAJ→BER`), also in its details. Allocations that share no
 * leg with the request are ignored.
 */
export function seatsTakenOnLegs(
  stopCodes: readonly string[],
  wanted: LegRange,
  taken: readonly TakenLegs[],
): DomainError {
  const wantedSegment = { boardingPosition: wanted.from, alightingPosition: wanted.to };
  const sharedLegs = new Map<string, Set<number>>();
  for (const allocation of taken) {
    const shared = overlappingLegs(wantedSegment, {
      boardingPosition: allocation.legs.from,
      alightingPosition: allocation.legs.to,
    });
    if (shared.length === 0) continue;
    const seatLegs = sharedLegs.get(allocation.seatNumber) ?? new Set<number>();
    shared.forEach((leg) => seatLegs.add(leg));
    sharedLegs.set(allocation.seatNumber, seatLegs);
  }
  const seats = [...sharedLegs.keys()].sort();
  const stops = stopCodes.map((code) => ({ code }));
  const legsOf = (seat: string) =>
    describeLegs(
      stops,
      [...(sharedLegs.get(seat) ?? [])].sort((first, second) => first - second),
    );
  const error = seatUnavailable(seats, seats.map((seat) => `${seat} is taken on ${legsOf(seat)}`).join('; '));
  return new DomainError(error.code, error.message, {
    details: { seatNumbers: seats, overlappingLegs: seats.map((seat) => `${seat} ${legsOf(seat)}`) },
  });
}

/** What a segment change needs beyond the request: worked out from the trip's route and fares by the application. */
export interface SegmentChangeTerms {
  readonly segment: BookingSegment;
  /** The trip's prices per fare class for the new segment. */
  readonly farePrices: FarePrices;
  /** Departure from the new boarding stop and arrival at the new alighting stop (UTC). */
  readonly departureTime: Timestamp;
  readonly arrivalTime: Timestamp;
  /** The legs the booking holds now (the whole route for a booking made before segments). */
  readonly previousLegs: LegRange;
}

/**
 * The terms of changing a booking's segment to the stops requested; a side not named keeps the current stop (the
 * route's end for a booking without a segment). The same segment again, or a boarding stop the bus has left, is
 * a VALIDATION_FAILED naming the field.
 */
export function segmentChangeTerms(input: {
  stops: readonly RouteStop[];
  current: SegmentPositions | undefined;
  request: SegmentRequest;
  tripFarePrices: FarePrices;
  tripDeparture: Timestamp;
  now: Timestamp;
}): SegmentChangeTerms {
  const { stops } = input;
  const current = input.current ?? wholeRouteSegment(stops);
  const segment = resolveSegment(stops, {
    boardingStopCode: input.request.boardingStopCode ?? stops[current.boardingPosition].code,
    alightingStopCode: input.request.alightingStopCode ?? stops[current.alightingPosition].code,
  });
  const field = input.request.boardingStopCode !== undefined ? boardingStopField : alightingStopField;
  if (sameSegment(segment, current)) {
    throw validationFailed([{ field, message: 'the booking already travels between these stops' }]);
  }
  const times = segmentTimes(stops, segment, input.tripDeparture);
  if (timestampMs(times.departure) <= timestampMs(input.now)) {
    throw validationFailed([
      { field: boardingStopField, message: `the bus left ${segment.boardingStopCode} at ${times.departure}` },
    ]);
  }
  return {
    segment: bookingSegmentOf(stops, segment, input.tripDeparture),
    farePrices: segmentFarePrices(input.tripFarePrices, stops, segment),
    departureTime: times.departure,
    arrivalTime: times.arrival,
    previousLegs: legRangeOf(current),
  };
}
