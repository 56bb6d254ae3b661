// Route catalogue reads from PostgreSQL: route search with AIP-158 paging, and seat availability per local date.
import DataLoader from 'dataloader';
import type { Knex } from 'knex';
import { parseInt8 } from '../db/connection';
import { pageWindow, readPage, type KeysetListing, type PageWindow } from '../db/paging';
import { everyRoute, type RouteAvailabilityChanges } from '../db/route-availability-changes';
import { takenSeatNumbersOfTrip } from '../db/seat-allocations';
import type { FareClass, Money } from '../domain/booking';
import { notFound, validationFailed } from '../domain/errors';
import { alightingStopField, boardingStopField, segmentFare, type SegmentRequest } from '../domain/segments';
import { fieldMessages, validateId } from '../domain/validation';
import type {
  CatalogApplication,
  Page,
  PageRequest,
  RouteAvailabilityView,
  RouteView,
  SeatMapEntryView,
  StopView,
  TripAvailabilityView,
} from './interface';
import { ReadThroughCache } from './read-through-cache';

const maximumSearchTermLength = 100;
/** A route code as the routes table allows it (routes_code_format). */
const routeCodePattern = /^[A-Z0-9]+(-[A-Z0-9]+)*$/;
const maximumRouteCodeLength = 40;

export interface RouteSearch extends PageRequest {
  origin?: string;
  destination?: string;
  date?: string;
}

interface StopRow {
  code: string;
  name: string;
  city: string;
  country_code: string;
  time_zone: string;
}

interface RouteRow {
  id: string;
  code: string;
  operator_name: string;
  distance_km: number;
  typical_duration_minutes: number;
  origin_code: string;
  origin_name: string;
  origin_city: string;
  origin_country_code: string;
  origin_time_zone: string;
  destination_code: string;
  destination_name: string;
  destination_city: string;
  destination_country_code: string;
  destination_time_zone: string;
  /** The route's stops in order, as JSON built by PostgreSQL. */
  intermediate_stops: StopRow[];
  /** The stops the search matched, in travel order. */
  boarding_code: string;
  alighting_code: string;
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
  /** [fare class, amount in minor units as text (bigint), currency]. */
  fares: [FareClass, string, string][];
  /** Seats another booking holds or has booked on a leg of the segment. */
  taken_seat_numbers: string[];
  /** The segment's legs [legs_from, legs_to); null when a stop asked for is not on the route. */
  legs_from: number | null;
  legs_to: number | null;
  /** Minutes from the origin to the boarding and the alighting stop, and of the whole route. */
  boarding_minutes: number | null;
  alighting_minutes: number | null;
  route_minutes: number;
  segment_departure_time: Date | null;
  segment_arrival_time: Date | null;
  /**
   * [seat number, fare class] of the trip's bus layout, in the bus's seat order: on the first row of each layout
   * only, null on the others.
   */
  seats: [string, FareClass][] | null;
}

interface AvailabilityRead {
  routeId: string;
  date: string;
  /** Stop codes of the segment; null for the route's end on that side. */
  boardingStopCode: string | null;
  alightingStopCode: string | null;
}

interface FareRow {
  fare_class: FareClass;
  amount_minor: number;
  currency: string;
}

/** Routes are listed by code; a page ends at the code of its last route. */
const routeListing: KeysetListing<RouteRow, string> = {
  name: 'routes',
  positionOf: (row) => row.code,
  readPosition: (value) =>
    typeof value === 'string' && value.length <= maximumRouteCodeLength && routeCodePattern.test(value)
      ? value
      : undefined,
};

/**
 * A calendar date `YYYY-MM-DD` that exists (no 30 February), from 0001-01-01 to 9999-12-31 as the REST contract
 * says: PostgreSQL has no year 0 and would otherwise fail the cast.
 */
export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const [year, month, day] = value.split('-').map(Number);
  if (year < 1) return false;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years 0 to 99 literally instead of as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** ISO 8601 duration of whole minutes, e.g. 195 → `PT3H15M`. */
export function minutesToIsoDuration(totalMinutes: number): string {
  const hours = Math.floor(totalMinutes / 60);
  const minutes = totalMinutes % 60;
  if (hours === 0) return `PT${minutes}M`;
  return minutes === 0 ? `PT${hours}H` : `PT${hours}H${minutes}M`;
}

function readSearchTerm(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  const term = value.trim();
  // Characters, not UTF-16 units, as the contract's maxLength counts them.
  const length = [...term].length;
  if (length < 1 || length > maximumSearchTermLength) {
    throw validationFailed([{ field, message: `must be 1 to ${maximumSearchTermLength} characters` }]);
  }
  return term;
}

function toStop(row: StopRow): StopView {
  return {
    code: row.code,
    name: row.name,
    city: row.city,
    countryCode: row.country_code,
    timeZone: row.time_zone,
  };
}

function endStop(row: RouteRow, end: 'origin' | 'destination'): StopView {
  return toStop({
    code: row[`${end}_code`],
    name: row[`${end}_name`],
    city: row[`${end}_city`],
    country_code: row[`${end}_country_code`],
    time_zone: row[`${end}_time_zone`],
  });
}

/**
 * The stops of the route aliased `route` in travel order: position (0 the origin), code, city, time zone and minutes
 * from the origin.
 */
const routeStopListSql = `
  SELECT 0 AS position, origin_stop.code, origin_stop.city, origin_stop.time_zone, 0 AS minutes
    FROM stops AS origin_stop WHERE origin_stop.code = route.origin_stop_code
  UNION ALL
  SELECT route_stop.position, middle_stop.code, middle_stop.city, middle_stop.time_zone,
         route_stop.minutes_from_origin
    FROM route_stops AS route_stop JOIN stops AS middle_stop ON middle_stop.code = route_stop.stop_code
   WHERE route_stop.route_id = route.id
  UNION ALL
  SELECT route_leg_count(route.id), destination_stop.code, destination_stop.city, destination_stop.time_zone,
         route.typical_duration_minutes
    FROM stops AS destination_stop WHERE destination_stop.code = route.destination_stop_code`;

export interface CatalogApplicationDependencies {
  database: Knex;
  /**
   * How long a page of the route catalogue is served again without asking PostgreSQL (routes and timetables change
   * rarely, and only by operators); 0 asks every time.
   */
  routeCacheSeconds?: number;
  /**
   * Seat availability answers kept until PostgreSQL says their route changed, and only while that is heard; absent,
   * every availability read asks PostgreSQL.
   */
  availabilityCache?: {
    changes: RouteAvailabilityChanges;
    /** The longest an answer is kept even when no change is heard; 0 keeps none. */
    timeToLiveSeconds: number;
    maximumEntries: number;
  };
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
}

/** Availability reads sent to PostgreSQL in one query at most, so one query's time stays bounded. */
const maximumReadsPerQuery = 64;

/** Distinct route searches kept at once; each is a page of at most a hundred routes. */
const maximumCachedRoutePages = 1000;

/** A kept availability lives from four fifths of the configured time to live to all of it. */
const availabilityExpirySpread = 0.2;

export function createCatalogApplication(dependencies: CatalogApplicationDependencies): CatalogApplication {
  const { database, availabilityCache } = dependencies;
  const availabilityReads = new ReadThroughCache<RouteAvailabilityView>({
    timeToLiveMs: (availabilityCache?.timeToLiveSeconds ?? 0) * 1000,
    maximumEntries: availabilityCache?.maximumEntries ?? 0,
    expirySpread: availabilityExpirySpread,
    keepWhile: () => availabilityCache?.changes.hearing === true,
    ...(dependencies.now === undefined ? {} : { now: dependencies.now }),
  });
  availabilityCache?.changes.subscribe((routeId) => {
    if (routeId === everyRoute) availabilityReads.forgetAll();
    else availabilityReads.forgetWhere((key) => key.startsWith(`${routeId}/`));
  });
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
  const routeAvailabilitySql = `
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
           (SELECT coalesce(json_agg(json_build_array(fare.fare_class, fare.amount_minor::text, fare.currency)),
                            '[]'::json)
              FROM trip_fares AS fare WHERE fare.trip_id = day_trip.id) AS fares,
           ${takenSeatNumbersOfTrip(database, 'day_trip', 'day_trip.legs').toQuery()}
             AS taken_seat_numbers,
           CASE WHEN row_number() OVER (PARTITION BY day_trip.layout_id
                                            ORDER BY day_trip.read_number, day_trip.departure_time) = 1
                THEN coalesce(layout.seats, '[]'::json) END AS seats
      FROM day_trip
      LEFT JOIN layout ON layout.layout_id = day_trip.layout_id
     ORDER BY day_trip.read_number, day_trip.departure_time`;
  /**
   * Reads that miss the cache within one turn of the event loop go to PostgreSQL together, as one query: under load
   * a round trip per read cost the API more than the read itself (the write to PostgreSQL's socket, and the
   * connection and query set-up around it).
   */
  const availabilityQueries = new DataLoader<AvailabilityRead, RouteAvailabilityView>(
    readRouteAvailabilities,
    {
      cache: false,
      maxBatchSize: maximumReadsPerQuery,
      batchScheduleFn: (sendQuery) => setImmediate(sendQuery),
    },
  );
  const routePages = new ReadThroughCache<Page<RouteView>>({
    timeToLiveMs: (dependencies.routeCacheSeconds ?? 0) * 1000,
    maximumEntries: maximumCachedRoutePages,
    ...(dependencies.now === undefined ? {} : { now: dependencies.now }),
  });

  async function listRoutes(request: RouteSearch): Promise<Page<RouteView>> {
    const origin = readSearchTerm(request.origin, 'origin');
    const destination = readSearchTerm(request.destination, 'destination');
    const date = request.date;
    if (date !== undefined && !isCalendarDate(date)) {
      throw validationFailed([{ field: 'date', message: 'must be a calendar date YYYY-MM-DD' }]);
    }
    // Stops match case-insensitively, so a token stays good for the same search in other letter case.
    const window = pageWindow(routeListing, request, {
      origin: origin?.toLowerCase() ?? null,
      destination: destination?.toLowerCase() ?? null,
      date: date ?? null,
    });
    // The same search (stops in any letter case) from the same position answers the same page.
    const searchKey = JSON.stringify([
      origin?.toLowerCase() ?? null,
      destination?.toLowerCase() ?? null,
      date ?? null,
      window.pageSize,
      window.after ?? null,
    ]);
    return routePages.read(searchKey, () => readRoutePage(window, { origin, destination, date }));
  }

  async function readRoutePage(
    window: PageWindow<RouteRow, string>,
    search: { origin?: string; destination?: string; date?: string },
  ): Promise<Page<RouteView>> {
    const { origin, destination, date } = search;
    const query = database('routes as route')
      .join('stops as origin', 'origin.code', 'route.origin_stop_code')
      .join('stops as destination', 'destination.code', 'route.destination_stop_code')
      .select(
        'route.id',
        'route.code',
        'route.operator_name',
        'route.distance_km',
        'route.typical_duration_minutes',
        'origin.code as origin_code',
        'origin.name as origin_name',
        'origin.city as origin_city',
        'origin.country_code as origin_country_code',
        'origin.time_zone as origin_time_zone',
        'destination.code as destination_code',
        'destination.name as destination_name',
        'destination.city as destination_city',
        'destination.country_code as destination_country_code',
        'destination.time_zone as destination_time_zone',
        // The route's stops in the same round trip, so a page is one query.
        database.raw(`(SELECT coalesce(json_agg(json_build_object('code', stop.code, 'name', stop.name,
                         'city', stop.city, 'country_code', stop.country_code, 'time_zone', stop.time_zone)
                         ORDER BY route_stop.position), '[]'::json)
                         FROM route_stops AS route_stop JOIN stops AS stop ON stop.code = route_stop.stop_code
                        WHERE route_stop.route_id = route.id) AS intermediate_stops`),
      )
      .select('matched.boarding_code', 'matched.alighting_code')
      // Any two stops of the route in travel order: the first boarding stop the origin matches, and the last
      // alighting stop after it the destination matches (the route's ends when the search names neither).
      .joinRaw(
        `JOIN LATERAL (
           SELECT boarding.code AS boarding_code, alighting.code AS alighting_code,
                  boarding.time_zone AS boarding_time_zone, boarding.minutes AS boarding_minutes
             FROM (${routeStopListSql}) AS boarding, (${routeStopListSql}) AS alighting
            WHERE boarding.position < alighting.position
              AND (?::text IS NULL OR boarding.code = upper(?) OR lower(boarding.city) = lower(?))
              AND (?::text IS NULL OR alighting.code = upper(?) OR lower(alighting.city) = lower(?))
            ORDER BY boarding.position, alighting.position DESC
            LIMIT 1) AS matched ON true`,
        [
          origin ?? null,
          origin ?? null,
          origin ?? null,
          destination ?? null,
          destination ?? null,
          destination ?? null,
        ],
      )
      .orderBy('route.code');
    if (date !== undefined) {
      // The travel date is the local date at the boarding stop.
      query.whereExists(
        database('trips as trip')
          .whereRaw('trip.route_id = route.id')
          .where('trip.status', 'SCHEDULED')
          .whereRaw(
            `trip.departure_time >= (CAST(? AS date)::timestamp AT TIME ZONE matched.boarding_time_zone)
                                      - make_interval(mins => matched.boarding_minutes)
             AND trip.departure_time < ((CAST(? AS date) + 1)::timestamp AT TIME ZONE matched.boarding_time_zone)
                                      - make_interval(mins => matched.boarding_minutes)`,
            [date, date],
          )
          .select(database.raw('1')),
      );
    }
    if (window.after !== undefined) query.where('route.code', '>', window.after);

    const { rows: pageRows, nextPageToken } = await readPage<RouteRow, string>(window, query);
    const items = pageRows.map((row): RouteView => ({
      id: row.id,
      code: row.code,
      origin: endStop(row, 'origin'),
      destination: endStop(row, 'destination'),
      intermediateStops: row.intermediate_stops.map(toStop),
      operatorName: row.operator_name,
      distanceKm: row.distance_km,
      typicalDurationMinutes: row.typical_duration_minutes,
      matchedStops: { boardingStopCode: row.boarding_code, alightingStopCode: row.alighting_code },
    }));
    return { items, ...(nextPageToken === undefined ? {} : { nextPageToken }) };
  }

  async function getRouteAvailability(
    routeIdInput: string,
    date: string,
    segment: SegmentRequest = {},
  ): Promise<RouteAvailabilityView> {
    const routeId = validateId(routeIdInput, 'route_id');
    if (!isCalendarDate(date)) {
      throw validationFailed([{ field: 'date', message: 'must be a calendar date YYYY-MM-DD' }]);
    }
    const boardingStopCode = readStopCode(segment.boardingStopCode, boardingStopField);
    const alightingStopCode = readStopCode(segment.alightingStopCode, alightingStopField);
    // Identical reads at the same moment (a popular trip) share one query; with the cache, later ones reuse it until
    // a seat, fare or trip of the route changes.
    return availabilityReads.read(
      `${routeId}/${date}/${boardingStopCode ?? ''}/${alightingStopCode ?? ''}`,
      () => availabilityQueries.load({ routeId, date, boardingStopCode, alightingStopCode }),
    );
  }

  async function readRouteAvailabilities(
    reads: readonly AvailabilityRead[],
  ): Promise<(RouteAvailabilityView | Error)[]> {
    const { rows } = await database
      .raw<{ rows: TripAvailabilityRow[] }>(routeAvailabilitySql, [
        reads.map((read) => read.routeId),
        reads.map((read) => read.date),
        // Arrays with nulls (a side left to the route's end) go to PostgreSQL as text[] with NULL elements.
        reads.map((read) => read.boardingStopCode) as Knex.Value,
        reads.map((read) => read.alightingStopCode) as Knex.Value,
        reads.length,
      ])
      // A named statement is parsed and planned once per connection: planning this query cost PostgreSQL more
      // than running it.
      .options({ name: 'catalog_route_availabilities' });

    // A read whose route exists has at least one row, so it has a list here, empty on a day without trips.
    const tripsOfRead: (TripAvailabilityView[] | undefined)[] = reads.map(() => undefined);
    const refusals: (Error | undefined)[] = reads.map(() => undefined);
    const layoutSeats = new Map<string, [string, FareClass][]>();
    for (const row of rows) {
      const refusal = segmentRefusal(row, reads[row.read_number - 1]);
      if (refusal !== undefined) {
        refusals[row.read_number - 1] = refusal;
        continue;
      }
      const trips = (tripsOfRead[row.read_number - 1] ??= []);
      if (row.layout_id !== null && row.seats !== null) layoutSeats.set(row.layout_id, row.seats);
      const trip = tripView(row, layoutSeats);
      if (trip !== undefined) trips.push(trip);
    }
    return reads.map((read, index) => {
      const refusal = refusals[index];
      if (refusal !== undefined) return refusal;
      const trips = tripsOfRead[index];
      return trips === undefined
        ? notFound('Route', read.routeId)
        : { routeId: read.routeId, date: read.date, trips };
    });
  }

  return { listRoutes, getRouteAvailability };
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

/** A stop code of a query parameter; a malformed one is refused naming the parameter. */
function readStopCode(value: string | undefined, field: string): string | null {
  if (value === undefined || value === '') return null;
  if (!/^[A-Z0-9]{2,12}$/.test(value)) {
    throw validationFailed([{ field, message: fieldMessages.stopCode }]);
  }
  return value;
}

/** VALIDATION_FAILED for a read whose stops are not on the route or not in travel order; undefined when they are. */
function segmentRefusal(row: TripAvailabilityRow, read: AvailabilityRead): Error | undefined {
  if (row.legs_from === null) {
    return validationFailed([
      { field: boardingStopField, message: `stop ${read.boardingStopCode} is not on this route` },
    ]);
  }
  if (row.legs_to === null) {
    return validationFailed([
      { field: alightingStopField, message: `stop ${read.alightingStopCode} is not on this route` },
    ]);
  }
  if (row.legs_to <= row.legs_from) {
    return validationFailed([
      {
        field: read.alightingStopCode === null ? boardingStopField : alightingStopField,
        message: 'the alighting stop does not come after the boarding stop',
      },
    ]);
  }
  return undefined;
}

/** The trip's fares for the row's segment (segmentFare of each). */
function segmentFareRows(row: TripAvailabilityRow, fares: readonly FareRow[]): FareRow[] {
  const boarding = row.boarding_minutes ?? 0;
  const alighting = row.alighting_minutes ?? row.route_minutes;
  const stops = [0, boarding, alighting, row.route_minutes].map((minutesFromOrigin) => ({
    minutesFromOrigin,
  }));
  return fares.map((fare) => ({
    ...fare,
    amount_minor: segmentFare({ amountMinor: fare.amount_minor, currency: fare.currency }, stops, {
      boardingPosition: 1,
      alightingPosition: 2,
    }).amountMinor,
  }));
}

/** A trip's availability from its row; none when the row has no trip or the trip has no fares (it is not on sale). */
function tripView(
  row: TripAvailabilityRow,
  layoutSeats: ReadonlyMap<string, [string, FareClass][]>,
): TripAvailabilityView | undefined {
  if (
    row.trip_id === null ||
    row.departure_time === null ||
    row.arrival_time === null ||
    row.layout_id === null
  ) {
    return undefined;
  }
  const tripFares = row.fares.map(([fareClass, amountMinor, currency]): FareRow => ({
    fare_class: fareClass,
    amount_minor: parseInt8(amountMinor),
    currency,
  }));
  if (tripFares.length === 0) return undefined;
  const segmentFares = segmentFareRows(row, tripFares);
  const taken = new Set(row.taken_seat_numbers);
  const seatMap = (layoutSeats.get(row.layout_id) ?? []).map(([seatNumber, fareClass]): SeatMapEntryView => ({
    seatNumber,
    fareClass,
    status: taken.has(seatNumber) ? 'TAKEN' : 'FREE',
  }));
  return {
    tripId: row.trip_id,
    departureTime: (row.segment_departure_time ?? row.departure_time).toISOString(),
    arrivalTime: (row.segment_arrival_time ?? row.arrival_time).toISOString(),
    seatsTotal: seatMap.length,
    seatsFree: seatMap.filter((seat) => seat.status === 'FREE').length,
    lowestPrice: lowestPrice(segmentFares, seatMap),
    seatMap,
  };
}

/** The cheapest fare a traveller can still buy; on a full trip, the cheapest fare of the trip. */
function lowestPrice(fares: readonly FareRow[], seatMap: readonly SeatMapEntryView[]): Money {
  const classesWithFreeSeats = new Set(
    seatMap.filter((seat) => seat.status === 'FREE').map((seat) => seat.fareClass),
  );
  const buyable = fares.filter((fare) => classesWithFreeSeats.has(fare.fare_class));
  const candidates = buyable.length > 0 ? buyable : fares;
  const cheapest = candidates.reduce((best, fare) => (fare.amount_minor < best.amount_minor ? fare : best));
  return { amountMinor: cheapest.amount_minor, currency: cheapest.currency.trim() };
}
