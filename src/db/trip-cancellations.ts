// Trip cancellation in SQL: the mark on the trip row (under its lock) with its bookings to cancel, page by page.
import type { Knex } from 'knex';
import type { TripStanding, TripStatus } from '../domain/trip-cancellation';
import { tripCancelledDraft } from '../domain/partner-events';
import { retrying } from '../retry';
import { recordTripEvents, type RecordedEvents } from './partner-events';
import { isPostgresError, postgresErrorCodes } from './postgres-errors';

export interface TripCancellationMark {
  tripId: string;
  status: TripStatus;
  departureTime: Date;
  cancelledAt: Date | null;
  cancellationReason: string | null;
}

interface TripRow {
  id: string;
  route_id: string;
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

const tripColumns = ['id', 'route_id', 'status', 'departure_time', 'cancelled_at', 'cancellation_reason'];

export async function readTripCancellationMark(
  database: Knex,
  tripId: string,
): Promise<TripCancellationMark | undefined> {
  const row: TripRow | undefined = await database('trips').where({ id: tripId }).first(tripColumns);
  return row === undefined ? undefined : markOf(row);
}

export interface MarkTripCancelledInput {
  tripId: string;
  reason: string;
  at: Date;
  refuse: (trip: TripStanding) => void;
  /** How long the mark may wait for locks or run, in milliseconds; past that it is rolled back (nothing marked). */
  withinMs?: number;
}

export interface MarkedTrip {
  mark: TripCancellationMark;
  newlyCancelled: boolean;
  /** The trip.cancelled partner event the mark recorded, to dispatch once it has committed. */
  events?: RecordedEvents;
  /** How many bookings were open at the mark: the cancellation's whole list. */
  openAtMark: number;
}

/**
 * Marks the trip cancelled under its row lock, unless `refuse` objects to the trip as it stands (it throws), and
 * writes down in the same transaction every booking of the trip open at that moment. A trip cancelled already
 * keeps its first mark. Once this commits no seat of the trip can be held or booked (the seat_allocations triggers
 * wait for this lock and then read CANCELLED), so that list holds every booking that will ever need cancelling.
 * Undefined when there is no such trip; TimedOutMark when `withinMs` passed first.
 */
export async function markTripCancelled(
  database: Knex,
  input: MarkTripCancelledInput,
): Promise<MarkedTrip | undefined> {
  // A reservation that holds the trip row FOR KEY SHARE (its booking row's foreign key) and then asks FOR SHARE
  // (the trigger) can deadlock with the mark waiting between the two; PostgreSQL aborts one of them, and the mark
  // tries again (the reservation's activity retries in its turn).
  try {
    return await retrying(() => markInTransaction(database, input), {
      attempts: maximumMarkAttempts,
      retryOn: (error) =>
        isPostgresError(error, postgresErrorCodes.deadlockDetected) ||
        isPostgresError(error, postgresErrorCodes.serializationFailure),
    });
  } catch (error) {
    if (
      isPostgresError(error, postgresErrorCodes.lockNotAvailable) ||
      isPostgresError(error, postgresErrorCodes.queryCanceled)
    ) {
      throw new TimedOutMark(input.tripId);
    }
    throw error;
  }
}

const maximumMarkAttempts = 5;

/** The mark could not be made within its time: its transaction was rolled back, the trip is as it was. */
export class TimedOutMark extends Error {
  constructor(tripId: string) {
    super(`Trip ${tripId} was not marked cancelled in time; nothing was changed`);
    this.name = 'TimedOutMark';
  }
}

function markInTransaction(database: Knex, input: MarkTripCancelledInput): Promise<MarkedTrip | undefined> {
  return database.transaction(async (transaction) => {
    if (input.withinMs !== undefined) {
      // SET takes no bind parameters; the value is a whole number this module made.
      const limit = Math.max(1, Math.floor(input.withinMs));
      await transaction.raw(`SET LOCAL lock_timeout = ${limit}; SET LOCAL statement_timeout = ${limit}`);
    }
    const row: TripRow | undefined = await transaction('trips')
      .where({ id: input.tripId })
      .forUpdate()
      .first(tripColumns);
    if (row === undefined) return undefined;
    if (row.status === 'CANCELLED') {
      return {
        mark: markOf(row),
        newlyCancelled: false,
        openAtMark: await countOpenBookingsOfTrip(transaction, row.id),
      };
    }
    input.refuse({ id: row.id, status: row.status, departureTime: row.departure_time });
    // The database's clock at the mark: payments and changes are compared against it.
    const [updated] = await transaction('trips')
      .where({ id: input.tripId })
      .update({
        status: 'CANCELLED',
        cancelled_at: transaction.raw('clock_timestamp()'),
        cancellation_reason: input.reason,
      })
      .returning<TripRow[]>(tripColumns);
    const listed = await transaction.raw<{ rowCount: number }>(
      `INSERT INTO trip_cancellation_bookings (trip_id, booking_id)
       SELECT trip_id, id FROM bookings WHERE trip_id = ? AND status IN ('PENDING_PAYMENT', 'CONFIRMED')
       ON CONFLICT DO NOTHING`,
      [input.tripId],
    );
    const mark = markOf(updated);
    const events = await recordTripEvents(
      transaction,
      { id: updated.id, routeId: updated.route_id, departureTime: updated.departure_time.toISOString() },
      [
        tripCancelledDraft({
          reason: input.reason,
          cancelledAt: (mark.cancelledAt ?? input.at).toISOString(),
          bookingsAffected: listed.rowCount,
        }),
      ],
    );
    return { mark, newlyCancelled: true, openAtMark: listed.rowCount, events };
  });
}

/** How many bookings were open at the trip's mark: each is cancelled, found ended, or reported failed. */
export async function countOpenBookingsOfTrip(database: Knex, tripId: string): Promise<number> {
  const row = await database('trip_cancellation_bookings')
    .where({ trip_id: tripId })
    .count<{ count: string }[]>('booking_id as count')
    .first();
  return Number(row?.count ?? 0);
}

/**
 * The next `limit` bookings open at the trip's mark after `afterBookingId`, in id order, whatever their status now:
 * a booking that ended on its own since is still listed, and its workflow answers ALREADY_ENDED.
 */
export async function openBookingsOfTripPage(
  database: Knex,
  input: { tripId: string; afterBookingId?: string; limit: number },
): Promise<string[]> {
  const query = database('trip_cancellation_bookings')
    .where({ trip_id: input.tripId })
    .orderBy('booking_id')
    .limit(input.limit)
    .select<{ booking_id: string }[]>('booking_id');
  if (input.afterBookingId !== undefined) query.where('booking_id', '>', input.afterBookingId);
  return (await query).map((row) => row.booking_id);
}

/** The read model's status of a booking; undefined when it has no row. */
export async function bookingStatusOf(database: Knex, bookingId: string): Promise<string | undefined> {
  const row: { status: string } | undefined = await database('bookings')
    .where({ id: bookingId })
    .first('status');
  return row?.status;
}

export interface BookingTripStanding {
  tripId: string;
  tripStatus: TripStatus;
  cancellationReason: string | null;
}

/**
 * The trip a stored booking is for, with its status and the operator's reason when it was cancelled; undefined when
 * the booking has no row. One statement: ProcessPayment asks it, finding the booking, before any money moves.
 */
export async function tripStandingOfBooking(
  database: Knex,
  bookingId: string,
): Promise<BookingTripStanding | undefined> {
  const row: { trip_id: string; status: TripStatus; cancellation_reason: string | null } | undefined =
    await database('bookings')
      .join('trips', 'trips.id', 'bookings.trip_id')
      .where('bookings.id', bookingId)
      .first('bookings.trip_id', 'trips.status', 'trips.cancellation_reason');
  return row === undefined
    ? undefined
    : { tripId: row.trip_id, tripStatus: row.status, cancellationReason: row.cancellation_reason };
}
