// The route catalogue: route search with AIP-158 paging, and seat availability per local date, with their caches.
import DataLoader from 'dataloader';
import type { Knex } from 'knex';
import { pageWindow } from '../db/paging';
import {
  readRouteDays,
  type AvailabilityRead,
  type RouteDay,
  type RouteDayTrip,
} from '../db/route-availability';
import { everyRoute, type RouteAvailabilityChanges } from '../db/route-availability-changes';
import { readPassengerTypes } from '../db/passenger-types';
import { existingRouteIds } from '../db/routes';
import { readRoutePage, routeListing } from '../db/route-search';
import type { TripFare } from '../db/trip-fares';
import type { Money } from '../domain/booking';
import { notFound, validationFailed } from '../domain/errors';
import {
  parseParty,
  partyFare,
  seatsNeeded,
  type PartyEntry,
  type PassengerType,
} from '../domain/passenger-types';
import { alightingStopField, boardingStopField, segmentFare, type SegmentRequest } from '../domain/segments';
import { fieldMessages, validateId } from '../domain/validation';
import type {
  CatalogApplication,
  FareClassAvailabilityView,
  Page,
  PartyFareView,
  PageRequest,
  RouteAvailabilityView,
  RouteView,
  SeatMapEntryView,
  TripAvailabilityView,
} from './interface';
import { ReadThroughCache } from './read-through-cache';

const maximumSearchTermLength = 100;

export interface RouteSearch extends PageRequest {
  origin?: string;
  destination?: string;
  date?: string;
}

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

/** Parties priced per kept availability answer; a popular answer is asked for with a handful of parties. */
const maximumPartiesPerAnswer = 32;

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
  // A route's passenger types change only when an operator replaces the whole set, which sends no change notice:
  // they are kept for the availability cache's time to live (the route cache's without one), so a warm availability
  // read with a party asks PostgreSQL nothing more than one without.
  const passengerTypeSets = new ReadThroughCache<readonly PassengerType[] | null>({
    timeToLiveMs:
      (availabilityCache === undefined
        ? (dependencies.routeCacheSeconds ?? 0)
        : availabilityCache.timeToLiveSeconds) * 1000,
    maximumEntries: availabilityCache?.maximumEntries ?? maximumCachedRoutePages,
    ...(dependencies.now === undefined ? {} : { now: dependencies.now }),
  });
  /** Each kept answer's party-priced copies, so a repeated party is priced (and serialized) once per answer. */
  const partyAnswers = new WeakMap<RouteAvailabilityView, Map<string, RouteAvailabilityView>>();
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
    return routePages.read(searchKey, async () => {
      const page = await readRoutePage(database, window, {
        ...(origin === undefined ? {} : { origin }),
        ...(destination === undefined ? {} : { destination }),
        ...(date === undefined ? {} : { date }),
      });
      return {
        items: page.routes,
        ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
      };
    });
  }

  /** The route's types (the default set when it lists none); NOT_FOUND for a route there is none of. */
  async function passengerTypesOf(routeId: string): Promise<readonly PassengerType[]> {
    const types = await passengerTypeSets.read(routeId, async () => {
      const [types, existing] = await Promise.all([
        readPassengerTypes(database, routeId),
        existingRouteIds(database, [routeId]),
      ]);
      return existing.length === 0 ? null : types;
    });
    if (types === null) throw notFound('Route', routeId);
    return types;
  }

  async function listPassengerTypes(routeIdInput: string): Promise<readonly PassengerType[]> {
    return passengerTypesOf(validateId(routeIdInput, 'route_id'));
  }

  async function getRouteAvailability(
    routeIdInput: string,
    date: string,
    segment: SegmentRequest = {},
    passengers?: string,
  ): Promise<RouteAvailabilityView> {
    if (passengers === undefined) return readAvailability(routeIdInput, date, segment);
    const routeId = validateId(routeIdInput, 'route_id');
    const [availability, types] = await Promise.all([
      readAvailability(routeId, date, segment),
      passengerTypesOf(routeId),
    ]);
    const party = parseParty(passengers, types, { field: 'passengers' });
    const partyKey = party.map((entry) => `${entry.passengerType}:${entry.count}`).join(',');
    let priced = partyAnswers.get(availability);
    if (priced === undefined) {
      priced = new Map();
      partyAnswers.set(availability, priced);
    }
    const kept = priced.get(partyKey);
    if (kept !== undefined) return kept;
    const answer = pricedForParty(availability, party, types);
    if (priced.size >= maximumPartiesPerAnswer) priced.clear();
    priced.set(partyKey, answer);
    return answer;
  }

  async function readAvailability(
    routeIdInput: string,
    date: string,
    segment: SegmentRequest,
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
    const days = await readRouteDays(database, reads);
    return reads.map((read, index) => {
      const day = days[index];
      if (day === undefined) return notFound('Route', read.routeId);
      const refusal = segmentRefusal(day, read);
      if (refusal !== undefined) return refusal;
      const trips = day.trips.flatMap((trip) => tripView(day, trip) ?? []);
      // segmentRefusal has refused a read without both ends.
      const legCount = (day.legsTo ?? 0) - (day.legsFrom ?? 0);
      return { routeId: read.routeId, date: read.date, legCount, trips };
    });
  }

  return { listRoutes, getRouteAvailability, listPassengerTypes };
}

/**
 * The answer for a party: each trip with the party's price in every fare class with a free seat for each passenger
 * who takes one (cheapest first), and only the trips that have such a class.
 */
function pricedForParty(
  availability: RouteAvailabilityView,
  party: readonly PartyEntry[],
  types: readonly PassengerType[],
): RouteAvailabilityView {
  const needed = seatsNeeded(party, types);
  const pricing = { types, legCount: availability.legCount };
  const trips = availability.trips.flatMap((trip) => {
    const partyFares = trip.fareClasses
      .filter((fareClass) => fareClass.seatsFree >= needed)
      .map((fareClass): PartyFareView => {
        const fare = partyFare(party, fareClass.price, pricing);
        return {
          fareClass: fareClass.fareClass,
          seatsFree: fareClass.seatsFree,
          total: fare.total,
          lines: fare.lines.map((line) => ({ ...line })),
        };
      })
      .sort((first, second) => first.total.amountMinor - second.total.amountMinor);
    return partyFares.length === 0 ? [] : [{ ...trip, partyFares }];
  });
  return { ...availability, trips };
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
function segmentRefusal(day: RouteDay, read: AvailabilityRead): Error | undefined {
  if (day.legsFrom === null) {
    return validationFailed([
      { field: boardingStopField, message: `stop ${read.boardingStopCode} is not on this route` },
    ]);
  }
  if (day.legsTo === null) {
    return validationFailed([
      { field: alightingStopField, message: `stop ${read.alightingStopCode} is not on this route` },
    ]);
  }
  if (day.legsTo <= day.legsFrom) {
    return validationFailed([
      {
        field: read.alightingStopCode === null ? boardingStopField : alightingStopField,
        message: 'the alighting stop does not come after the boarding stop',
      },
    ]);
  }
  return undefined;
}

/** The trip's fares for the day's segment (segmentFare of each). */
function segmentFares(day: RouteDay, fares: readonly TripFare[]): TripFare[] {
  const boarding = day.boardingMinutes ?? 0;
  const alighting = day.alightingMinutes ?? day.routeMinutes;
  const stops = [0, boarding, alighting, day.routeMinutes].map((minutesFromOrigin) => ({
    minutesFromOrigin,
  }));
  return fares.map((fare) => ({
    ...fare,
    amountMinor: segmentFare({ amountMinor: fare.amountMinor, currency: fare.currency }, stops, {
      boardingPosition: 1,
      alightingPosition: 2,
    }).amountMinor,
  }));
}

/** A trip's availability on the day's segment; none when the trip has no fares (it is not on sale). */
function tripView(day: RouteDay, trip: RouteDayTrip): TripAvailabilityView | undefined {
  if (trip.fares.length === 0) return undefined;
  const taken = new Set(trip.takenSeatNumbers);
  const seatMap = trip.seats.map(([seatNumber, fareClass]): SeatMapEntryView => ({
    seatNumber,
    fareClass,
    status: taken.has(seatNumber) ? 'TAKEN' : 'FREE',
  }));
  const fares = segmentFares(day, trip.fares);
  return {
    tripId: trip.tripId,
    departureTime: trip.segmentDepartureTime.toISOString(),
    arrivalTime: trip.segmentArrivalTime.toISOString(),
    seatsTotal: seatMap.length,
    seatsFree: seatMap.filter((seat) => seat.status === 'FREE').length,
    lowestPrice: lowestPrice(fares, seatMap),
    seatMap,
    fareClasses: fares.map((fare): FareClassAvailabilityView => ({
      fareClass: fare.fareClass,
      price: { amountMinor: fare.amountMinor, currency: fare.currency },
      seatsFree: seatMap.filter((seat) => seat.status === 'FREE' && seat.fareClass === fare.fareClass).length,
    })),
  };
}

/** The cheapest fare a traveller can still buy; on a full trip, the cheapest fare of the trip. */
function lowestPrice(fares: readonly TripFare[], seatMap: readonly SeatMapEntryView[]): Money {
  const classesWithFreeSeats = new Set(
    seatMap.filter((seat) => seat.status === 'FREE').map((seat) => seat.fareClass),
  );
  const buyable = fares.filter((fare) => classesWithFreeSeats.has(fare.fareClass));
  const candidates = buyable.length > 0 ? buyable : fares;
  const cheapest = candidates.reduce((best, fare) => (fare.amountMinor < best.amountMinor ? fare : best));
  return { amountMinor: cheapest.amountMinor, currency: cheapest.currency };
}
