// The route catalogue's search: routes with their stops, matched by origin, destination and travel date, by code.
import type { Knex } from 'knex';
import { readPage, type KeysetListing, type PageWindow } from './paging';

/** A route code as the routes table allows it (routes_code_format). */
const routeCodePattern = /^[A-Z0-9]+(-[A-Z0-9]+)*$/;
const maximumRouteCodeLength = 40;

export interface CatalogStop {
  code: string;
  name: string;
  city: string;
  countryCode: string;
  timeZone: string;
}

export interface CatalogRoute {
  id: string;
  code: string;
  origin: CatalogStop;
  destination: CatalogStop;
  intermediateStops: CatalogStop[];
  operatorName: string;
  distanceKm: number;
  typicalDurationMinutes: number;
  /**
   * The stops a search's origin and destination matched, in travel order (the route's ends when the search named
   * neither): book and ask availability with these as the boarding and alighting stops.
   */
  matchedStops: { boardingStopCode: string; alightingStopCode: string };
}

/** What a search asks for; a stop term matches a stop's code or its city in any letter case. */
export interface RouteSearchFilter {
  origin?: string;
  destination?: string;
  /** The travel date `YYYY-MM-DD`: the local date at the boarding stop. */
  date?: string;
}

interface StopRow {
  code: string;
  name: string;
  city: string;
  country_code: string;
  time_zone: string;
}

export interface RouteRow {
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

/** Routes are listed by code; a page ends at the code of its last route. */
export const routeListing: KeysetListing<RouteRow, string> = {
  name: 'routes',
  positionOf: (row) => row.code,
  readPosition: (value) =>
    typeof value === 'string' && value.length <= maximumRouteCodeLength && routeCodePattern.test(value)
      ? value
      : undefined,
};

function toStop(row: StopRow): CatalogStop {
  return {
    code: row.code,
    name: row.name,
    city: row.city,
    countryCode: row.country_code,
    timeZone: row.time_zone,
  };
}

function endStop(row: RouteRow, end: 'origin' | 'destination'): CatalogStop {
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

/** One page of the routes the search matches, by code, in one round trip. */
export async function readRoutePage(
  database: Knex,
  window: PageWindow<RouteRow, string>,
  search: RouteSearchFilter,
): Promise<{ routes: CatalogRoute[]; nextPageToken?: string }> {
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

  const { rows, nextPageToken } = await readPage<RouteRow, string>(window, query);
  const routes = rows.map((row): CatalogRoute => ({
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
  return { routes, ...(nextPageToken === undefined ? {} : { nextPageToken }) };
}
