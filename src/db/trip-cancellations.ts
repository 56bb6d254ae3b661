// Trip cancellation in SQL: the mark on the trip row (under its lock), and the trip's open bookings page by page.
import type { Knex } from 'knex';
import type { TripStanding, TripStatus } from '../domain/trip-cancellation';

export interface TripCancellationMark {
  tripId: string;
  status: TripStatus;
  departureTime: Date;
  cancelledAt: Date | null;
  cancellationReason: string | null;
}

interface TripRow {
  id: string;
  status: TripStatus;
  departure_time: Date;
  cancelled_at: Date | null;
  cancellation_reason: string | null;
}

function markOf(row: TripRow): TripCancellationMark {
  return {
    tripId: row.id,
    status: row.status,
    departureTime: row.departure_time,
    cancelledAt: row.cancelled_at,
    cancellationReason: row.cancellation_reason,
  };
}

const tripColumns = ['id', 'status', 'departure_time', 'cancelled_at', 'cancellation_reason'];

export async function readTripCancellationMark(
  database: Knex,
  tripId: string,
): Promise<TripCancellationMark | undefined> {
  const row: TripRow | undefined = await database('trips').where({ id: tripId }).first(tripColumns);
  return row === undefined ? undefined : markOf(row);
}

/**
 * Marks the trip cancelled under its row lock, unless `refuse` objects to the trip as it stands (it throws). A trip
 * cancelled already keeps its first mark. Once this commits no seat of the trip can be held or booked (the
 * seat_allocations triggers wait for this lock and then read CANCELLED), so a scan that starts after it finds every
 * booking that will ever need cancelling. Undefined when there is no such trip.
 */
export async function markTripCancelled(
  database: Knex,
  input: { tripId: string; reason: string; at: Date; refuse: (trip: TripStanding) => void },
): Promise<{ mark: TripCancellationMark; newlyCancelled: boolean } | undefined> {
  // A reservation that holds the trip row FOR KEY SHARE (its booking row's foreign key) and then asks FOR SHARE
  // (the trigger) can deadlock with the mark waiting between the two; PostgreSQL aborts one of them, and the mark
  // tries again (the reservation's activity retries in its turn).
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await markInTransaction(database, input);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= maximumMarkAttempts || (code !== deadlockDetected && code !== serializationFailure)) {
        throw error;
      }
    }
  }
}

const maximumMarkAttempts = 5;
const deadlockDetected = '40P01';
const serializationFailure = '40001';

function markInTransaction(
  database: Knex,
  input: { tripId: string; reason: string; at: Date; refuse: (trip: TripStanding) => void },
): Promise<{ mark: TripCancellationMark; newlyCancelled: boolean } | undefined> {
  return database.transaction(async (transaction) => {
    const row: TripRow | undefined = await transaction('trips')
      .where({ id: input.tripId })
      .forUpdate()
      .first(tripColumns);
    if (row === undefined) return undefined;
    if (row.status === 'CANCELLED') return { mark: markOf(row), newlyCancelled: false };
    input.refuse({ id: row.id, status: row.status, departureTime: row.departure_time });
    const [updated] = await transaction('trips')
      .where({ id: input.tripId })
      .update({ status: 'CANCELLED', cancelled_at: input.at, cancellation_reason: input.reason })
      .returning<TripRow[]>(tripColumns);
    return { mark: markOf(updated), newlyCancelled: true };
  });
}

const openStatuses = ['PENDING_PAYMENT', 'CONFIRMED'];

/** How many bookings of the trip are open (pending payment or confirmed) in the read model. */
export async function countOpenBookingsOfTrip(database: Knex, tripId: string): Promise<number> {
  const row = await database('bookings')
    .where({ trip_id: tripId })
    .whereIn('status', openStatuses)
    .count<{ count: string }[]>('id as count')
    .first();
  return Number(row?.count ?? 0);
}

/**
 * The next `limit` open bookings of the trip after `afterBookingId`, in id order: a keyset page that stays stable
 * while the bookings behind it change status.
 */
export async function openBookingsOfTripPage(
  database: Knex,
  input: { tripId: string; afterBookingId?: string; limit: number },
): Promise<string[]> {
  const query = database('bookings')
    .where({ trip_id: input.tripId })
    .whereIn('status', openStatuses)
    .orderBy('id')
    .limit(input.limit)
    .select<{ id: string }[]>('id');
  if (input.afterBookingId !== undefined) query.where('id', '>', input.afterBookingId);
  return (await query).map((row) => row.id);
}

/** The read model's status of a booking; undefined when it has no row. */
export async function bookingStatusOf(database: Knex, bookingId: string): Promise<string | undefined> {
  const row: { status: string } | undefined = await database('bookings')
    .where({ id: bookingId })
    .first('status');
  return row?.status;
}
