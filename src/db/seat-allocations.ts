// The seat inventory in SQL: seat_allocations rows, their no-overlapping-legs exclusion and the seat-in-layout key.
import type { Knex } from 'knex';
import type { LegRange } from '../domain/segments';

/** States in which an allocation keeps its seat from everyone else. */
export const activeAllocationStates = ['HELD', 'BOOKED'] as const;

/**
 * Exclusion constraint: at any moment a leg of a trip's seat is held or booked by at most one allocation (two
 * allocations of a seat may touch at a stop, never share a leg).
 */
export const noOverlappingLegsConstraint = 'seat_allocations_no_overlapping_legs';

/** SQL for a LegRange as an int4range. */
function legRangeSql(legs: LegRange): [string, number[]] {
  return ['int4range(?::integer, ?::integer)', [legs.from, legs.to]];
}
/** Raised by the seat_allocations triggers: no seat of a cancelled trip is held or booked. */
export const tripNotCancelledCheck = 'seat_allocations_trip_not_cancelled';
/** Foreign key: an allocated seat exists in its trip's layout. */
export const seatInLayoutKey = 'seat_allocations_seat_in_layout_fk';

export interface ActiveAllocation {
  id: string;
  seat_number: string;
  booking_id: string;
  /** Held by a booking that is not confirmed, past its expiry by more than the grace period. */
  lapsed: boolean;
  legs_from: number;
  legs_to: number;
}

/** The columns of seat_allocations the reads here filter on. */
interface AllocationKey {
  trip_id: string;
  seat_number: string;
  booking_id: string;
  state: string;
}

export interface SeatHold {
  seatNumber: string;
  passengerId: string;
}

/**
 * Whether the allocation `allocation` of the booking `booking` is a hold lapsed past the grace period (its one
 * parameter, in seconds): a reservation releases such a hold rather than being refused by it.
 */
const lapsedHoldSql = `(allocation.state = 'HELD' AND booking.status <> 'CONFIRMED'
  AND allocation.hold_expires_at < now() - make_interval(secs => ?))`;

/**
 * The active allocations of these seats that share a leg with `legs` (the booking's own on any leg, so a retry or a
 * segment change finds them), locked until the transaction ends.
 */
export async function lockActiveAllocations(
  transaction: Knex.Transaction,
  input: {
    tripId: string;
    bookingId: string;
    seatNumbers: readonly string[];
    legs: LegRange;
    lapsedHoldGraceSeconds: number;
  },
): Promise<ActiveAllocation[]> {
  const [legsSql, legsBindings] = legRangeSql(input.legs);
  const { rows } = await transaction.raw<{ rows: ActiveAllocation[] }>(
    `SELECT allocation.id, allocation.seat_number, allocation.booking_id, ${lapsedHoldSql} AS lapsed,
            lower(allocation.legs) AS legs_from, upper(allocation.legs) AS legs_to
       FROM seat_allocations AS allocation JOIN bookings AS booking ON booking.id = allocation.booking_id
      WHERE allocation.trip_id = ? AND allocation.seat_number = ANY(?::text[])
        AND allocation.state IN ('HELD', 'BOOKED')
        AND (allocation.legs && ${legsSql} OR allocation.booking_id = ?)
        FOR UPDATE OF allocation`,
    [input.lapsedHoldGraceSeconds, input.tripId, [...input.seatNumbers], ...legsBindings, input.bookingId],
  );
  return rows;
}

export async function releaseAllocations(
  transaction: Knex.Transaction,
  allocationIds: readonly string[],
): Promise<void> {
  await transaction('seat_allocations')
    .whereIn('id', allocationIds)
    .update({ state: 'RELEASED', released_at: transaction.fn.now() });
}

/**
 * New HELD allocations of `legs`. A seat the trip's layout lacks fails the seat-in-layout foreign key (the trigger
 * copies the layout from the trip); a leg of a seat someone else holds fails the no-overlapping-legs exclusion.
 */
export async function insertHolds(
  transaction: Knex.Transaction,
  input: {
    bookingId: string;
    tripId: string;
    holdExpiresAt: string;
    legs: LegRange;
    seats: readonly SeatHold[];
  },
): Promise<void> {
  const [legsSql, legsBindings] = legRangeSql(input.legs);
  await transaction('seat_allocations').insert(
    input.seats.map((seat) => ({
      trip_id: input.tripId,
      seat_number: seat.seatNumber,
      booking_id: input.bookingId,
      legs: transaction.raw(legsSql, legsBindings),
      // Linked only once the passenger's read-model row exists (a passenger being added gets linked by RecordBooking).
      passenger_id: transaction.raw('(SELECT id FROM passengers WHERE id = ? AND booking_id = ?)', [
        seat.passengerId,
        input.bookingId,
      ]),
      state: 'HELD',
      hold_expires_at: input.holdExpiresAt,
    })),
  );
}

/**
 * A one-row source with the column `seat_numbers`: the seats of the trip `tripAlias` that an allocation holds or has
 * booked on a leg of `legsSql` (an int4range expression of the query); a seat held on two parts of the range by
 * two bookings is listed twice (readers make a set of them: sorting them away cost more than the read). One range
 * scan of the no-overlapping-legs exclusion's index per trip: probing it once per seat of the layout cost
 * PostgreSQL more than the rest of an availability read.
 */
export function takenSeatNumbersOfTrip(database: Knex, tripAlias: string, legsSql: string): Knex.Raw {
  return database.raw(
    `(SELECT coalesce(array_agg(allocation.seat_number), '{}') AS seat_numbers
        FROM seat_allocations AS allocation
       WHERE allocation.trip_id = ??.id AND allocation.state IN ('HELD', 'BOOKED')
         AND allocation.legs && ${legsSql})`,
    [tripAlias],
  );
}

/**
 * The column `taken_seats` of a query over trips (`tripAlias`): a JSON array of `[seat, first leg, leg past the
 * last]` for the seats among these that another booking holds or has booked, lapsed holds excepted, as a
 * reservation would find them. A read without locks, for refusing a create early (the caller keeps the allocations
 * that share a leg with its segment); the reservation's own check stays the authority.
 */
export function seatsTakenColumn(
  database: Knex,
  input: {
    tripAlias: string;
    seatNumbers: readonly string[];
    bookingId: string;
    lapsedHoldGraceSeconds: number;
  },
): Knex.Raw {
  return database.raw(
    `(SELECT coalesce(json_agg(json_build_array(allocation.seat_number, lower(allocation.legs),
                                                upper(allocation.legs))), '[]'::json)
        FROM seat_allocations AS allocation JOIN bookings AS booking ON booking.id = allocation.booking_id
       WHERE allocation.trip_id = ??.id AND allocation.seat_number = ANY(?::text[])
         AND allocation.state IN ('HELD', 'BOOKED') AND allocation.booking_id <> ?
         AND NOT ${lapsedHoldSql}) AS taken_seats`,
    [input.tripAlias, [...input.seatNumbers], input.bookingId, input.lapsedHoldGraceSeconds],
  );
}

/** An allocation of another booking that shares legs with a request: its seat and its leg range. */
export interface TakenSeat {
  seatNumber: string;
  legs: LegRange;
}

/** The allocations of these seats by another booking that share a leg with `legs`, sorted by seat. */
export async function seatsTakenByOthers(
  database: Knex,
  input: { bookingId: string; tripId: string; seatNumbers: readonly string[]; legs: LegRange },
): Promise<TakenSeat[]> {
  const [legsSql, legsBindings] = legRangeSql(input.legs);
  const rows = await database<AllocationKey>('seat_allocations')
    .where({ trip_id: input.tripId })
    .whereIn('seat_number', input.seatNumbers)
    .whereIn('state', activeAllocationStates)
    .whereNot({ booking_id: input.bookingId })
    .whereRaw(`legs && ${legsSql}`, legsBindings)
    .select<{ seat_number: string; legs_from: number; legs_to: number }[]>(
      'seat_number',
      database.raw('lower(legs) AS legs_from'),
      database.raw('upper(legs) AS legs_to'),
    );
  return rows
    .map((row) => ({ seatNumber: row.seat_number, legs: { from: row.legs_from, to: row.legs_to } }))
    .sort((first, second) => first.seatNumber.localeCompare(second.seatNumber));
}

/** The booking's HELD seats become BOOKED; returns how many (none when a retry finds them booked already). */
export function bookHeldSeats(database: Knex, input: { bookingId: string; tripId: string }): Promise<number> {
  return database('seat_allocations')
    .where({ booking_id: input.bookingId, trip_id: input.tripId, state: 'HELD' })
    .update({ state: 'BOOKED' });
}

/**
 * Whether the booking holds or has booked any seat, and otherwise when its last hold expired (null when it never
 * held one).
 */
export async function seatHoldStanding(
  database: Knex,
  input: { bookingId: string; tripId: string },
): Promise<{ active: true } | { active: false; lastHoldExpiresAt: Date | null }> {
  const allocations = () =>
    database('seat_allocations').where({ booking_id: input.bookingId, trip_id: input.tripId });
  if (await allocations().whereIn('state', activeAllocationStates).first('id')) return { active: true };
  const lastHold = (await allocations().max('hold_expires_at as hold_expires_at').first()) as
    { hold_expires_at: Date | null } | undefined;
  return { active: false, lastHoldExpiresAt: lastHold?.hold_expires_at ?? null };
}

/** The given seats of the booking (all of them when `seatNumbers` is absent) become RELEASED. */
/** Returns how many seats it released (none when a retry finds them released already). */
export async function releaseBookingSeats(
  database: Knex,
  input: { bookingId: string; tripId: string; seatNumbers?: readonly string[] },
): Promise<number> {
  const query = database('seat_allocations')
    .where({ booking_id: input.bookingId, trip_id: input.tripId })
    .whereIn('state', activeAllocationStates);
  if (input.seatNumbers !== undefined) query.whereIn('seat_number', input.seatNumbers);
  return query.update({ state: 'RELEASED', released_at: database.fn.now() });
}

/**
 * The booking's active allocations (of `seatNumbers`, or all) cut down to `keepLegs`: those sharing no leg with it
 * become RELEASED, the others keep only the shared legs. Returns how many it released.
 */
export async function releaseLegsOutside(
  transaction: Knex.Transaction,
  input: { bookingId: string; tripId: string; seatNumbers?: readonly string[]; keepLegs: LegRange },
): Promise<number> {
  const [legsSql, legsBindings] = legRangeSql(input.keepLegs);
  const mine = () => {
    const query = transaction('seat_allocations')
      .where({ booking_id: input.bookingId, trip_id: input.tripId })
      .whereIn('state', activeAllocationStates);
    if (input.seatNumbers !== undefined) query.whereIn('seat_number', input.seatNumbers);
    return query;
  };
  const released = await mine()
    .whereRaw(`NOT (legs && ${legsSql})`, legsBindings)
    .update({ state: 'RELEASED', released_at: transaction.fn.now() });
  await mine()
    .whereRaw(`NOT (legs <@ ${legsSql})`, legsBindings)
    .update({ legs: transaction.raw(`legs * ${legsSql}`, legsBindings) });
  return released;
}

/** The whole route of the trip as legs: what a reservation naming no legs holds. */
export async function wholeRouteLegs(database: Knex, tripId: string): Promise<LegRange> {
  const { rows } = await database.raw<{ rows: { leg_count: number }[] }>(
    'SELECT route_leg_count(trip.route_id) AS leg_count FROM trips AS trip WHERE trip.id = ?',
    [tripId],
  );
  return { from: 0, to: rows[0]?.leg_count ?? 1 };
}

/** The stop codes of the trip's route in travel order (origin, intermediate stops, destination). */
export async function routeStopCodesOfTrip(database: Knex, tripId: string): Promise<string[]> {
  const { rows } = await database.raw<{ rows: { codes: string[] }[] }>(
    `SELECT array[route.origin_stop_code]
            || coalesce((SELECT array_agg(stop.stop_code ORDER BY stop.position) FROM route_stops AS stop
                          WHERE stop.route_id = route.id), '{}')
            || array[route.destination_stop_code] AS codes
       FROM trips AS trip JOIN routes AS route ON route.id = trip.route_id
      WHERE trip.id = ?`,
    [tripId],
  );
  return rows[0]?.codes ?? [];
}

/** Seats of passengers about to be deleted keep their allocation, without the passenger link. */
export async function detachPassengers(
  transaction: Knex.Transaction,
  passengerIds: readonly string[],
): Promise<void> {
  await transaction('seat_allocations').whereIn('passenger_id', passengerIds).update({ passenger_id: null });
}

/** Each active seat of the booking points at the passenger sitting in it now (seat changes move passengers). */
export async function linkSeatsToPassengers(transaction: Knex.Transaction, bookingId: string): Promise<void> {
  await transaction.raw(
    `UPDATE seat_allocations AS allocation SET passenger_id = passenger.id
       FROM passengers AS passenger
      WHERE allocation.booking_id = ? AND passenger.booking_id = allocation.booking_id
        AND passenger.seat_number = allocation.seat_number AND allocation.state IN ('HELD', 'BOOKED')
        AND allocation.passenger_id IS DISTINCT FROM passenger.id`,
    [bookingId],
  );
}

/**
 * The seat named by a seat-in-layout violation, read from PostgreSQL's detail line
 * (`Key (layout_id, seat_number)=(…, 9D) is not present in table "seats".`); undefined when the line says
 * otherwise (a server whose messages are translated).
 */
export function seatNamedByLayoutViolation(error: { detail?: unknown }): string | undefined {
  if (typeof error.detail !== 'string') return undefined;
  return /\(layout_id, seat_number\)=\([^,]*, ([^)]*)\)/.exec(error.detail)?.[1];
}
