// The seat inventory in SQL: seat_allocations rows, their one-active-per-seat index and the seat-in-layout key.
import type { Knex } from 'knex';

/** States in which an allocation keeps its seat from everyone else. */
export const activeAllocationStates = ['HELD', 'BOOKED'] as const;

/** Unique index: at any moment a seat of a trip is held or booked by at most one allocation. */
export const oneActivePerSeatIndex = 'seat_allocations_one_active_per_seat';
/** Foreign key: an allocated seat exists in its trip's layout. */
export const seatInLayoutKey = 'seat_allocations_seat_in_layout_fk';

export interface ActiveAllocation {
  id: string;
  seat_number: string;
  booking_id: string;
  /** Held by a booking that is not confirmed, past its expiry by more than the grace period. */
  lapsed: boolean;
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

/** The active allocations of these seats, locked until the transaction ends. */
export async function lockActiveAllocations(
  transaction: Knex.Transaction,
  input: { tripId: string; seatNumbers: readonly string[]; lapsedHoldGraceSeconds: number },
): Promise<ActiveAllocation[]> {
  const { rows } = await transaction.raw<{ rows: ActiveAllocation[] }>(
    `SELECT allocation.id, allocation.seat_number, allocation.booking_id, ${lapsedHoldSql} AS lapsed
       FROM seat_allocations AS allocation JOIN bookings AS booking ON booking.id = allocation.booking_id
      WHERE allocation.trip_id = ? AND allocation.seat_number = ANY(?::text[])
        AND allocation.state IN ('HELD', 'BOOKED')
        FOR UPDATE OF allocation`,
    [input.lapsedHoldGraceSeconds, input.tripId, [...input.seatNumbers]],
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
 * New HELD allocations. A seat the trip's layout lacks fails the seat-in-layout foreign key (the trigger copies
 * the layout from the trip); a seat someone else holds fails the one-active-per-seat index.
 */
export async function insertHolds(
  transaction: Knex.Transaction,
  input: { bookingId: string; tripId: string; holdExpiresAt: string; seats: readonly SeatHold[] },
): Promise<void> {
  await transaction('seat_allocations').insert(
    input.seats.map((seat) => ({
      trip_id: input.tripId,
      seat_number: seat.seatNumber,
      booking_id: input.bookingId,
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
 * booked. One range scan of the one-active-per-seat index per trip: probing it once per seat of the layout cost
 * PostgreSQL more than the rest of an availability read.
 */
export function takenSeatNumbersOfTrip(database: Knex, tripAlias: string): Knex.Raw {
  return database.raw(
    `(SELECT coalesce(array_agg(allocation.seat_number), '{}') AS seat_numbers
        FROM seat_allocations AS allocation
       WHERE allocation.trip_id = ??.id AND allocation.state IN ('HELD', 'BOOKED'))`,
    [tripAlias],
  );
}

/**
 * The column `taken_seats` of a query over trips (`tripAlias`): a JSON array of the seats among these that another
 * booking holds or has booked, lapsed holds excepted, as a reservation would find them. A read without locks, for
 * refusing a create early; the reservation's own check stays the authority.
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
    `(SELECT coalesce(json_agg(allocation.seat_number), '[]'::json)
        FROM seat_allocations AS allocation JOIN bookings AS booking ON booking.id = allocation.booking_id
       WHERE allocation.trip_id = ??.id AND allocation.seat_number = ANY(?::text[])
         AND allocation.state IN ('HELD', 'BOOKED') AND allocation.booking_id <> ?
         AND NOT ${lapsedHoldSql}) AS taken_seats`,
    [input.tripAlias, [...input.seatNumbers], input.bookingId, input.lapsedHoldGraceSeconds],
  );
}

/** The seats among these that another booking holds or has booked, sorted. */
export async function seatsTakenByOthers(
  database: Knex,
  input: { bookingId: string; tripId: string; seatNumbers: readonly string[] },
): Promise<string[]> {
  const seats = await database<AllocationKey>('seat_allocations')
    .where({ trip_id: input.tripId })
    .whereIn('seat_number', input.seatNumbers)
    .whereIn('state', activeAllocationStates)
    .whereNot({ booking_id: input.bookingId })
    .pluck('seat_number');
  return seats.sort();
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
