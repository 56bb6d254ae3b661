// Route catalogue reads from PostgreSQL: route search with AIP-158 paging, and seat availability per local date.
import type { Knex } from 'knex';
import { pageWindow, readPage, type KeysetListing } from '../db/paging';
import { seatTakenColumn } from '../db/seat-allocations';
import type { FareClass, Money } from '../domain/booking';
import { notFound, validationFailed } from '../domain/errors';
import { validateId } from '../domain/validation';
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
}

interface IntermediateStopRow extends StopRow {
  route_id: string;
}

interface TripRow {
  id: string;
  departure_time: Date;
  arrival_time: Date;
}

interface SeatRow {
  trip_id: string;
  seat_number: string;
  fare_class: FareClass;
  taken: boolean;
}

interface FareRow {
  trip_id: string;
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

/** A stop given by code or by city, compared case-insensitively. */
function whereStopMatches(query: Knex.QueryBuilder, alias: string, term: string): void {
  query.where((inner) => {
    inner
      .where(`${alias}.code`, term.toUpperCase())
      .orWhereRaw(`lower(??) = lower(?)`, [`${alias}.city`, term]);
  });
}

/** Departures on a local calendar date at the origin, as an index-friendly instant range. */
const localDateRangeSql = `trip.departure_time >= (CAST(? AS date)::timestamp AT TIME ZONE origin.time_zone)
  AND trip.departure_time < ((CAST(? AS date) + 1)::timestamp AT TIME ZONE origin.time_zone)`;

export function createCatalogApplication(dependencies: { database: Knex }): CatalogApplication {
  const { database } = dependencies;

  async function intermediateStopsByRoute(routeIds: string[]): Promise<Map<string, StopView[]>> {
    const stopsByRoute = new Map<string, StopView[]>(routeIds.map((id) => [id, []]));
    if (routeIds.length === 0) return stopsByRoute;
    const rows: IntermediateStopRow[] = await database('route_stops as route_stop')
      .join('stops as stop', 'stop.code', 'route_stop.stop_code')
      .whereIn('route_stop.route_id', routeIds)
      .orderBy([{ column: 'route_stop.route_id' }, { column: 'route_stop.position' }])
      .select(
        'route_stop.route_id',
        'stop.code',
        'stop.name',
        'stop.city',
        'stop.country_code',
        'stop.time_zone',
      );
    for (const row of rows) stopsByRoute.get(row.route_id)?.push(toStop(row));
    return stopsByRoute;
  }

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
      )
      .orderBy('route.code');
    if (origin !== undefined) whereStopMatches(query, 'origin', origin);
    if (destination !== undefined) whereStopMatches(query, 'destination', destination);
    if (date !== undefined) {
      query.whereExists(
        database('trips as trip')
          .whereRaw('trip.route_id = route.id')
          .where('trip.status', 'SCHEDULED')
          .whereRaw(localDateRangeSql, [date, date])
          .select(database.raw('1')),
      );
    }
    if (window.after !== undefined) query.where('route.code', '>', window.after);

    const { rows: pageRows, nextPageToken } = await readPage(window, query);
    const stopsByRoute = await intermediateStopsByRoute(pageRows.map((row) => row.id));
    const items = pageRows.map((row): RouteView => ({
      id: row.id,
      code: row.code,
      origin: endStop(row, 'origin'),
      destination: endStop(row, 'destination'),
      intermediateStops: stopsByRoute.get(row.id) ?? [],
      operatorName: row.operator_name,
      distanceKm: row.distance_km,
      typicalDurationMinutes: row.typical_duration_minutes,
    }));
    return { items, ...(nextPageToken === undefined ? {} : { nextPageToken }) };
  }

  async function getRouteAvailability(routeIdInput: string, date: string): Promise<RouteAvailabilityView> {
    const routeId = validateId(routeIdInput, 'route_id');
    if (!isCalendarDate(date)) {
      throw validationFailed([{ field: 'date', message: 'must be a calendar date YYYY-MM-DD' }]);
    }
    const route = await database('routes').where('id', routeId).first('id');
    if (route === undefined) throw notFound('Route', routeId);

    const trips: TripRow[] = await database('trips as trip')
      .join('routes as route', 'route.id', 'trip.route_id')
      .join('stops as origin', 'origin.code', 'route.origin_stop_code')
      .where('trip.route_id', routeId)
      .where('trip.status', 'SCHEDULED')
      .whereRaw(localDateRangeSql, [date, date])
      .orderBy('trip.departure_time')
      .select('trip.id', 'trip.departure_time', 'trip.arrival_time');
    const tripIds = trips.map((trip) => trip.id);
    if (tripIds.length === 0) return { routeId, date, trips: [] };

    const [seats, fares] = await Promise.all([
      database('trips as trip')
        .join('seats as seat', 'seat.layout_id', 'trip.layout_id')
        .whereIn('trip.id', tripIds)
        .orderBy([{ column: 'trip.id' }, { column: 'seat.row_number' }, { column: 'seat.seat_number' }])
        .select(
          'trip.id as trip_id',
          'seat.seat_number',
          'seat.fare_class',
          seatTakenColumn(database, { trip: 'trip', seat: 'seat' }),
        ) as Promise<SeatRow[]>,
      database('trip_fares')
        .whereIn('trip_id', tripIds)
        .select('trip_id', 'fare_class', 'amount_minor', 'currency') as Promise<FareRow[]>,
    ]);

    const seatsByTrip = groupBy(seats, (seat) => seat.trip_id);
    const faresByTrip = groupBy(fares, (fare) => fare.trip_id);
    const availability = trips.flatMap((trip): TripAvailabilityView[] => {
      const tripFares = faresByTrip.get(trip.id) ?? [];
      // A trip without fares is not on sale, so it has no price to show.
      if (tripFares.length === 0) return [];
      const seatMap = (seatsByTrip.get(trip.id) ?? []).map((seat): SeatMapEntryView => ({
        seatNumber: seat.seat_number,
        fareClass: seat.fare_class,
        status: seat.taken ? 'TAKEN' : 'FREE',
      }));
      return [
        {
          tripId: trip.id,
          departureTime: trip.departure_time.toISOString(),
          arrivalTime: trip.arrival_time.toISOString(),
          seatsTotal: seatMap.length,
          seatsFree: seatMap.filter((seat) => seat.status === 'FREE').length,
          lowestPrice: lowestPrice(tripFares, seatMap),
          seatMap,
        },
      ];
    });
    return { routeId, date, trips: availability };
  }

  return { listRoutes, getRouteAvailability };
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
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
