// What a create is admitted on, read in one round trip: the trip, its fares, its layout, and the requested seats.
import type { Knex } from 'knex';
import type { FareClass, FarePrices } from '../domain/booking';
import type { LegRange, RouteStop } from '../domain/segments';
import { earlierCreateColumns } from './booking-hold-claims';
import { seatsTakenColumn } from './seat-allocations';
import { farePricesOf, tripFaresSql, type TripFaresColumn } from './trip-fares';

export interface BookableTrip {
  id: string;
  routeId: string;
  departureTime: Date;
  status: string;
  originTimeZone: string;
  farePrices: FarePrices;
  seatClasses: Record<string, FareClass>;
  /** The route's stops in travel order, the origin first. */
  stops: RouteStop[];
  /** Allocations of the requested seats by another booking (lapsed holds excepted), with their legs. */
  seatsTaken: { seatNumber: string; legs: LegRange }[];
  /** Whether a create of this booking id came before: this one is a retry. */
  madeBefore: boolean;
  /** The request of an earlier create of this booking id that was refused before it claimed a slot. */
  refusedRequestFingerprint: string | null;
}

interface BookableTripRow {
  id: string;
  route_id: string;
  departure_time: Date;
  status: string;
  time_zone: string;
  fares: TripFaresColumn;
  /** [seat number, fare class]. */
  seats: [string, FareClass][];
  taken_seats: [string, number, number][];
  stops: RouteStop[];
  made_before: boolean;
  refused_request_fingerprint: string | null;
}

/** The trip as a create of `bookingId` for these seats sees it; undefined when there is no such trip. */
export async function readBookableTrip(
  database: Knex,
  request: {
    tripId: string;
    seatNumbers: readonly string[];
    bookingId: string;
    lapsedHoldGraceSeconds: number;
  },
): Promise<BookableTrip | undefined> {
  const trip: BookableTripRow | undefined = await database('trips')
    .join('routes', 'routes.id', 'trips.route_id')
    .join('stops', 'stops.code', 'routes.origin_stop_code')
    .where('trips.id', request.tripId)
    .first(
      'trips.id',
      'trips.route_id',
      'trips.departure_time',
      'trips.status',
      'stops.time_zone',
      database.raw(`${tripFaresSql('trips')} AS fares`),
      database.raw(`(SELECT coalesce(json_agg(json_build_array(seat.seat_number, seat.fare_class)), '[]'::json)
                       FROM seats AS seat WHERE seat.layout_id = trips.layout_id) AS seats`),
      seatsTakenColumn(database, {
        tripAlias: 'trips',
        seatNumbers: request.seatNumbers,
        bookingId: request.bookingId,
        lapsedHoldGraceSeconds: request.lapsedHoldGraceSeconds,
      }),
      routeStopsColumn(database, 'routes'),
      ...earlierCreateColumns(database, request.bookingId),
    );
  if (trip === undefined) return undefined;
  const farePrices = farePricesOf(trip.fares);
  const seatClasses: Record<string, FareClass> = {};
  for (const [seatNumber, fareClass] of trip.seats) seatClasses[seatNumber] = fareClass;
  return {
    id: trip.id,
    routeId: trip.route_id,
    departureTime: trip.departure_time,
    status: trip.status,
    originTimeZone: trip.time_zone,
    farePrices,
    seatClasses,
    stops: trip.stops,
    seatsTaken: trip.taken_seats
      .map(([seatNumber, from, to]) => ({ seatNumber, legs: { from, to } }))
      .sort((first, second) => first.seatNumber.localeCompare(second.seatNumber)),
    madeBefore: trip.made_before,
    refusedRequestFingerprint: trip.refused_request_fingerprint,
  };
}

/** Whether a user account with this id exists. */
export async function userAccountExists(database: Knex, userId: string): Promise<boolean> {
  return (await database('users').where('id', userId).first<{ id: string } | undefined>('id')) !== undefined;
}

/**
 * The column `stops` of a query over routes (`routeAlias`): the route's stops in travel order as RouteStop objects,
 * the origin at minute 0 and the destination at the route's typical duration.
 */
export function routeStopsColumn(database: Knex, routeAlias: string): Knex.Raw {
  const stopJson = (stop: string, minutes: string) =>
    `json_build_object('code', ${stop}.code, 'name', ${stop}.name, 'city', ${stop}.city,
                       'timeZone', ${stop}.time_zone, 'minutesFromOrigin', ${minutes})`;
  return database.raw(
    `(SELECT json_agg(stop_row.stop ORDER BY stop_row.position)
        FROM (SELECT 0 AS position, ${stopJson('origin', '0')} AS stop
                FROM stops AS origin WHERE origin.code = ??.origin_stop_code
              UNION ALL
              SELECT route_stop.position, ${stopJson('middle', 'route_stop.minutes_from_origin')}
                FROM route_stops AS route_stop JOIN stops AS middle ON middle.code = route_stop.stop_code
               WHERE route_stop.route_id = ??.id
              UNION ALL
              SELECT 2147483647, ${stopJson('destination', '??.typical_duration_minutes')}
                FROM stops AS destination WHERE destination.code = ??.destination_stop_code) AS stop_row) AS stops`,
    [routeAlias, routeAlias, routeAlias, routeAlias],
  );
}

/** What a segment change of a booking on the trip is priced and timed from: its route's stops, fares, departure. */
export async function readTripSegmentTerms(
  database: Knex,
  tripId: string,
): Promise<{ stops: RouteStop[]; farePrices: FarePrices; departureTime: Date } | undefined> {
  const trip: { departure_time: Date; fares: TripFaresColumn; stops: RouteStop[] } | undefined =
    await database('trips')
      .join('routes', 'routes.id', 'trips.route_id')
      .where('trips.id', tripId)
      .first(
        'trips.departure_time',
        database.raw(`${tripFaresSql('trips')} AS fares`),
        routeStopsColumn(database, 'routes'),
      );
  if (trip === undefined) return undefined;
  return { stops: trip.stops, farePrices: farePricesOf(trip.fares), departureTime: trip.departure_time };
}
