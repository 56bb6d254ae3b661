// Seat availability of routes on local dates: each route's trips that day with fares, seats and what is taken.
import type { Knex } from 'knex';
import type { FareClass } from '../domain/booking';
import { takenSeatNumbersOfTrip } from './seat-allocations';
import { tripFaresOf, tripFaresSql, type TripFare, type TripFaresColumn } from './trip-fares';

/** One availability read: a route on a local date, for a segment of it. */
export interface AvailabilityRead {
  routeId: string;
  date: string;
  /** Stop codes of the segment; null for the route's end on that side. */
  boardingStopCode: string | null;
  alightingStopCode: string | null;
}

/** A seat of a bus layout: [seat number, fare class]. */
export type LayoutSeat = [string, FareClass];

/** A scheduled trip of the route on the read's date. */
export interface RouteDayTrip {
  tripId: string;
  departureTime: Date;
  arrivalTime: Date;
  /** When the bus leaves the segment's boarding stop and reaches its alighting stop. */
  segmentDepartureTime: Date;
  segmentArrivalTime: Date;
  /** None for a trip not on sale. */
  fares: TripFare[];
  /** Seats another booking holds or has booked on a leg of the segment; a seat may be listed twice. */
  takenSeatNumbers: string[];
  /** The seats of the trip's bus layout, in the bus's seat order. */
  seats: LayoutSeat[];
}

/** A route on a read's date, as the read's segment sees it. */
export interface RouteDay {
  /** The segment's legs [legsFrom, legsTo); null when a stop asked for is not on the route. */
  legsFrom: number | null;
  legsTo: number | null;
  /** Minutes from the origin to the boarding and the alighting stop, and of the whole route. */
  boardingMinutes: number | null;
  alightingMinutes: number | null;
  routeMinutes: number;
  /** None when the stops are not on the route or not in travel order. */
  trips: RouteDayTrip[];
}

/**
 * One row per trip of a read's route on its date; one row with a null trip when the route has none that day; no row
 * when the route does not exist.
 */
interface TripAvailabilityRow {
  /** Which of the query's reads the row answers: 1 for the first route and date asked for. */
  read_number: number;
  trip_id: string | null;
  departure_time: Date | null;
  arrival_time: Date | null;
  layout_id: string | null;
  fares: TripFaresColumn;
  taken_seat_numbers: string[];
  legs_from: number | null;
  legs_to: number | null;
  boarding_minutes: number | null;
  alighting_minutes: number | null;
  route_minutes: number;
  segment_departure_time: Date | null;
  segment_arrival_time: Date | null;
  /** The trip's layout's seats: on the first row of each layout only, null on the others. */
  seats: LayoutSeat[] | null;
}

/**
 * One stop of the route `route` whose code is the SQL expression `codeSql`, as a one-row source with its position
 * (0 the origin, the leg count the destination), minutes from the origin and time zone; no row when the route has
 * no such stop.
 */
function routeStopSql(codeSql: string): string {
  return `SELECT stop_list.position, stop_list.minutes, stop.time_zone
            FROM (SELECT 0 AS position, route.origin_stop_code AS code, 0 AS minutes
                  UNION ALL
                  SELECT route_stop.position, route_stop.stop_code, route_stop.minutes_from_origin
                    FROM route_stops AS route_stop WHERE route_stop.route_id = route.id
                  UNION ALL
                  SELECT route_leg_count(route.id), route.destination_stop_code, route.typical_duration_minutes)
                 AS stop_list
            JOIN stops AS stop ON stop.code = stop_list.code
           WHERE stop_list.code = ${codeSql}`;
}

/**
 * One round trip for a batch of reads: for each route and date asked for (numbered from 1 as given), the route (no
 * row when it does not exist), its trips that day, each with its fares and the seat numbers taken on it, and the
 * seats of each bus layout among them, in the bus's seat order, once per layout on its first row: building and
 * parsing a fifty-seat list per trip was most of a read's cost. Served by the trips (route_id, departure_time),
 * seats and no-overlapping-legs indexes (one range scan of the last per trip, on the trip and the legs).
 * Three things keep PostgreSQL on that plan, each checked with EXPLAIN at 20,000 trips:
 * - `LIMIT ?` (the number of reads, so it cuts nothing): without it the planner assumes ten reads, its one generic
 *   plan looks ten times dearer than a plan made for a lone read, and it plans afresh on every execution (about
 *   0.5 ms each);
 * - `wanted` is MATERIALIZED and the trips are a LATERAL subquery behind `OFFSET 0`: flattened into one join, the
 *   day's bounds became a filter over all of a route's trips (a thousand rows per read) instead of index bounds.
 * Written once as SQL text: building it per request with the query builder cost more than PostgreSQL's part.
 */
function routeAvailabilitySqlOf(database: Knex): string {
  return `
  WITH wanted AS MATERIALIZED (
    SELECT wanted.read_number::integer AS read_number, route.id AS route_id,
           boarding.position AS legs_from, alighting.position AS legs_to,
           -- Null when the stops are not in travel order: no trips are read, and the answer refuses the read.
           CASE WHEN alighting.position > boarding.position
                THEN int4range(boarding.position, alighting.position) END AS legs,
           boarding.minutes AS boarding_minutes, alighting.minutes AS alighting_minutes,
           route.typical_duration_minutes AS route_minutes,
           alighting.position = route_leg_count(route.id) AS alights_at_destination,
           (wanted.day::timestamp AT TIME ZONE boarding.time_zone) - make_interval(mins => boarding.minutes)
             AS day_starts_at,
           ((wanted.day + 1)::timestamp AT TIME ZONE boarding.time_zone) - make_interval(mins => boarding.minutes)
             AS day_ends_at
      FROM (SELECT * FROM unnest(?::uuid[], ?::date[], ?::text[], ?::text[])
                     WITH ORDINALITY AS wanted (route_id, day, boarding_code, alighting_code, read_number)
             LIMIT ?) AS wanted
      JOIN routes AS route ON route.id = wanted.route_id
      LEFT JOIN LATERAL (${routeStopSql('coalesce(wanted.boarding_code, route.origin_stop_code)')}) AS boarding
        ON true
      LEFT JOIN LATERAL (${routeStopSql('coalesce(wanted.alighting_code, route.destination_stop_code)')})
        AS alighting ON true
  ), day_trip AS (
    SELECT wanted.read_number, trip.id, trip.departure_time, trip.arrival_time, trip.layout_id,
           wanted.legs_from, wanted.legs_to, wanted.legs, wanted.boarding_minutes, wanted.alighting_minutes,
           wanted.route_minutes,
           trip.departure_time + make_interval(mins => wanted.boarding_minutes) AS segment_departure_time,
           CASE WHEN wanted.alights_at_destination THEN trip.arrival_time
                ELSE trip.departure_time + make_interval(mins => wanted.alighting_minutes)
           END AS segment_arrival_time
      FROM wanted
      LEFT JOIN LATERAL (
        SELECT trip.id, trip.departure_time, trip.arrival_time, trip.layout_id
          FROM trips AS trip
         WHERE trip.route_id = wanted.route_id AND trip.status = 'SCHEDULED' AND wanted.legs IS NOT NULL
           AND trip.departure_time >= wanted.day_starts_at AND trip.departure_time < wanted.day_ends_at
        OFFSET 0
      ) AS trip ON true
  ), layout AS (
    SELECT seat.layout_id,
           json_agg(json_build_array(seat.seat_number, seat.fare_class) ORDER BY seat.row_number, seat.seat_number)
             AS seats
      FROM seats AS seat
     WHERE seat.layout_id IN (SELECT day_trip.layout_id FROM day_trip)
     GROUP BY seat.layout_id
  )
  SELECT day_trip.read_number, day_trip.id AS trip_id, day_trip.departure_time, day_trip.arrival_time,
         day_trip.layout_id, day_trip.legs_from, day_trip.legs_to, day_trip.boarding_minutes,
         day_trip.alighting_minutes, day_trip.route_minutes, day_trip.segment_departure_time,
         day_trip.segment_arrival_time,
         ${tripFaresSql('day_trip')} AS fares,
         ${takenSeatNumbersOfTrip(database, 'day_trip', 'day_trip.legs').toQuery()}
           AS taken_seat_numbers,
         CASE WHEN row_number() OVER (PARTITION BY day_trip.layout_id
                                          ORDER BY day_trip.read_number, day_trip.departure_time) = 1
              THEN coalesce(layout.seats, '[]'::json) END AS seats
    FROM day_trip
    LEFT JOIN layout ON layout.layout_id = day_trip.layout_id
   ORDER BY day_trip.read_number, day_trip.departure_time`;
}

/** The query's text for each knex instance (its quoting is the instance's dialect's). */
const routeAvailabilitySql = new WeakMap<Knex, string>();

/**
 * Each read's route on its date (in the order given), in one round trip; undefined for a read whose route does not
 * exist.
 */
export async function readRouteDays(
  database: Knex,
  reads: readonly AvailabilityRead[],
): Promise<(RouteDay | undefined)[]> {
  let sql = routeAvailabilitySql.get(database);
  if (sql === undefined) {
    sql = routeAvailabilitySqlOf(database);
    routeAvailabilitySql.set(database, sql);
  }
  const { rows } = await database
    .raw<{ rows: TripAvailabilityRow[] }>(sql, [
      reads.map((read) => read.routeId),
      reads.map((read) => read.date),
      // Arrays with nulls (a side left to the route's end) go to PostgreSQL as text[] with NULL elements.
      reads.map((read) => read.boardingStopCode) as Knex.Value,
      reads.map((read) => read.alightingStopCode) as Knex.Value,
      reads.length,
    ])
    // A named statement is parsed and planned once per connection: planning this query cost PostgreSQL more than
    // running it.
    .options({ name: 'catalog_route_availabilities' });

  const days: (RouteDay | undefined)[] = reads.map(() => undefined);
  const layoutSeats = new Map<string, LayoutSeat[]>();
  for (const row of rows) {
    const day = (days[row.read_number - 1] ??= {
      legsFrom: row.legs_from,
      legsTo: row.legs_to,
      boardingMinutes: row.boarding_minutes,
      alightingMinutes: row.alighting_minutes,
      routeMinutes: row.route_minutes,
      trips: [],
    });
    if (row.layout_id !== null && row.seats !== null) layoutSeats.set(row.layout_id, row.seats);
    if (
      row.trip_id === null ||
      row.departure_time === null ||
      row.arrival_time === null ||
      row.layout_id === null
    ) {
      continue;
    }
    day.trips.push({
      tripId: row.trip_id,
      departureTime: row.departure_time,
      arrivalTime: row.arrival_time,
      segmentDepartureTime: row.segment_departure_time ?? row.departure_time,
      segmentArrivalTime: row.segment_arrival_time ?? row.arrival_time,
      fares: tripFaresOf(row.fares),
      takenSeatNumbers: row.taken_seat_numbers,
      seats: layoutSeats.get(row.layout_id) ?? [],
    });
  }
  return days;
}
