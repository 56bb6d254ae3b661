// ReserveSeats, ConfirmSeats and ReleaseSeats on the seat inventory, relying on the one-active-allocation index.
import type { Knex } from 'knex';
import {
  DomainError,
  holdExpired,
  notFound,
  seatUnavailable,
  validationFailed,
  type FieldViolation,
} from '../domain/errors';
import { isSeatNumber, isUuid } from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';
import { isPostgresError, postgresErrorCodes } from './failures';
import {
  businessFailure,
  type ConfirmSeatsInput,
  type ReleaseSeatsInput,
  type ReserveSeatsInput,
  type SeatActivities,
} from './interface';
import { writeBookingSnapshot } from './read-model';

export interface SeatActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  /**
   * How long after its hold_expires_at another booking may take over a seat still HELD by a booking that is not
   * CONFIRMED. The owning workflow normally releases at expiry; this only frees seats of a workflow that never
   * will, with a margin for a confirmation racing its own deadline.
   */
  lapsedHoldGraceSeconds: number;
}

const ONE_ACTIVE_PER_SEAT = 'seat_allocations_one_active_per_seat';
/** A concurrent reservation can win the unique index between our check and our insert; a rerun sees its row. */
const MAXIMUM_RESERVE_ATTEMPTS = 3;

interface ActiveAllocation {
  id: string;
  seat_number: string;
  booking_id: string;
  lapsed: boolean;
}

function seatsFailure(violations: FieldViolation[]): never {
  throw businessFailure(validationFailed(violations));
}

function validateReserveInput(input: ReserveSeatsInput): void {
  const violations: FieldViolation[] = [];
  if (!isUuid(input.bookingId)) violations.push({ field: 'booking_id', message: 'must be a UUID' });
  if (!isUuid(input.tripId)) violations.push({ field: 'trip_id', message: 'must be a UUID' });
  if (Number.isNaN(Date.parse(input.holdExpiresAt))) {
    violations.push({ field: 'hold_expires_at', message: 'must be an ISO 8601 instant' });
  }
  if (!Array.isArray(input.seats) || input.seats.length === 0) {
    violations.push({ field: 'seats', message: 'at least one seat is needed' });
  } else {
    const seen = new Set<string>();
    input.seats.forEach((seat, index) => {
      if (!isSeatNumber(seat.seatNumber)) {
        violations.push({ field: `seats[${index}].seat_number`, message: 'is not a seat number like 12C' });
      } else if (seen.has(seat.seatNumber)) {
        violations.push({ field: `seats[${index}].seat_number`, message: 'is requested twice' });
      }
      seen.add(seat.seatNumber);
      if (!isUuid(seat.passengerId)) {
        violations.push({ field: `seats[${index}].passenger_id`, message: 'must be a UUID' });
      }
    });
  }
  if (
    input.booking !== undefined &&
    (input.booking.id !== input.bookingId || input.booking.tripId !== input.tripId)
  ) {
    violations.push({ field: 'booking', message: 'the snapshot is of another booking or trip' });
  }
  if (violations.length > 0) seatsFailure(violations);
}

function validateSeatNumbers(seatNumbers: readonly string[] | undefined): void {
  const violations = (seatNumbers ?? []).flatMap((seatNumber, index) =>
    isSeatNumber(seatNumber)
      ? []
      : [{ field: `seat_numbers[${index}]`, message: 'is not a seat number like 12C' }],
  );
  if (violations.length > 0) seatsFailure(violations);
}

async function ensureBookingRow(
  transaction: Knex.Transaction,
  input: ReserveSeatsInput,
  cipher: FieldCipher,
): Promise<void> {
  const existing: { trip_id: string } | undefined = await transaction('bookings')
    .where({ id: input.bookingId })
    .first('trip_id');
  if (existing) {
    if (existing.trip_id !== input.tripId) {
      seatsFailure([{ field: 'trip_id', message: 'the booking is for another trip' }]);
    }
    return;
  }
  if (input.booking === undefined) throw businessFailure(notFound('Booking', input.bookingId));
  await writeBookingSnapshot(transaction, input.booking, cipher);
}

/** Seats the trip's layout does not have: the allocation foreign key would reject them anyway. */
async function assertSeatsExist(
  transaction: Knex.Transaction,
  tripId: string,
  seatNumbers: readonly string[],
): Promise<void> {
  const trip: { layout_id: string } | undefined = await transaction('trips')
    .where({ id: tripId })
    .first('layout_id');
  if (!trip) throw businessFailure(notFound('Trip', tripId));
  const known = new Set<string>(
    await transaction('seats')
      .where({ layout_id: trip.layout_id })
      .whereIn('seat_number', seatNumbers)
      .pluck('seat_number'),
  );
  const violations = seatNumbers.flatMap((seatNumber, index) =>
    known.has(seatNumber)
      ? []
      : [{ field: `seats[${index}].seat_number`, message: `seat ${seatNumber} does not exist on this trip` }],
  );
  if (violations.length > 0) seatsFailure(violations);
}

async function reserveInTransaction(
  transaction: Knex.Transaction,
  input: ReserveSeatsInput,
  dependencies: SeatActivityDependencies,
): Promise<void> {
  const seatNumbers = input.seats.map((seat) => seat.seatNumber);
  await assertSeatsExist(transaction, input.tripId, seatNumbers);
  await ensureBookingRow(transaction, input, dependencies.cipher);

  const { rows: active } = await transaction.raw<{ rows: ActiveAllocation[] }>(
    `SELECT allocation.id, allocation.seat_number, allocation.booking_id,
            (allocation.state = 'HELD' AND booking.status <> 'CONFIRMED'
              AND allocation.hold_expires_at < now() - make_interval(secs => ?)) AS lapsed
       FROM seat_allocations AS allocation JOIN bookings AS booking ON booking.id = allocation.booking_id
      WHERE allocation.trip_id = ? AND allocation.seat_number = ANY(?::text[])
        AND allocation.state IN ('HELD', 'BOOKED')
        FOR UPDATE OF allocation`,
    [dependencies.lapsedHoldGraceSeconds, input.tripId, seatNumbers],
  );
  const othersActive = active.filter((allocation) => allocation.booking_id !== input.bookingId);
  const taken = othersActive
    .filter((allocation) => !allocation.lapsed)
    .map((allocation) => allocation.seat_number);
  if (taken.length > 0) throw businessFailure(seatUnavailable([...taken].sort()));

  // Nothing is taken, so every other booking's allocation here is a lapsed hold: release it for this booking.
  const lapsedIds = othersActive.map((allocation) => allocation.id);
  if (lapsedIds.length > 0) {
    await transaction('seat_allocations')
      .whereIn('id', lapsedIds)
      .update({ state: 'RELEASED', released_at: transaction.fn.now() });
  }

  // Seats this booking already holds or has booked are left as they are: a retry is a no-op.
  const alreadyOwned = new Set(
    active
      .filter((allocation) => allocation.booking_id === input.bookingId)
      .map((allocation) => allocation.seat_number),
  );
  const missing = input.seats.filter((seat) => !alreadyOwned.has(seat.seatNumber));
  if (missing.length === 0) return;
  await transaction('seat_allocations').insert(
    missing.map((seat) => ({
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

async function seatsTakenByOthers(
  database: Knex,
  input: Pick<ReserveSeatsInput, 'bookingId' | 'tripId' | 'seats'>,
): Promise<string[]> {
  const seats: string[] = await database('seat_allocations')
    .where({ trip_id: input.tripId })
    .whereIn(
      'seat_number',
      input.seats.map((seat) => seat.seatNumber),
    )
    .whereIn('state', ['HELD', 'BOOKED'])
    .whereNot({ booking_id: input.bookingId })
    .pluck('seat_number');
  return seats.sort();
}

export function createSeatActivities(dependencies: SeatActivityDependencies): SeatActivities {
  const { database } = dependencies;

  /**
   * Holds every requested seat or none (one transaction). A seat held or booked by another booking fails with
   * non-retryable SEAT_UNAVAILABLE naming the seats; a hold lapsed past the grace period is released first.
   * Creates the booking's read-model row from `input.booking` when it does not exist yet (allocations reference it).
   */
  async function ReserveSeats(input: ReserveSeatsInput): Promise<void> {
    validateReserveInput(input);
    for (let attempt = 1; attempt <= MAXIMUM_RESERVE_ATTEMPTS; attempt += 1) {
      try {
        await database.transaction((transaction) => reserveInTransaction(transaction, input, dependencies));
        return;
      } catch (error) {
        if (!isPostgresError(error, postgresErrorCodes.uniqueViolation, ONE_ACTIVE_PER_SEAT)) throw error;
      }
    }
    const taken = await seatsTakenByOthers(database, input);
    throw businessFailure(
      taken.length > 0
        ? seatUnavailable(taken)
        : new DomainError('SEAT_UNAVAILABLE', 'The seats are being reserved by another booking'),
    );
  }

  /** HELD seats of the booking become BOOKED; fails HOLD_EXPIRED when the booking holds no seat any more. */
  async function ConfirmSeats(input: ConfirmSeatsInput): Promise<void> {
    await database.transaction(async (transaction) => {
      await transaction('seat_allocations')
        .where({ booking_id: input.bookingId, trip_id: input.tripId, state: 'HELD' })
        .update({ state: 'BOOKED' });
      const stillActive = await transaction('seat_allocations')
        .where({ booking_id: input.bookingId, trip_id: input.tripId })
        .whereIn('state', ['HELD', 'BOOKED'])
        .first('id');
      if (stillActive) return;
      const lastHold = (await transaction('seat_allocations')
        .where({ booking_id: input.bookingId, trip_id: input.tripId })
        .max('hold_expires_at as hold_expires_at')
        .first()) as { hold_expires_at: Date | null } | undefined;
      throw businessFailure(
        lastHold?.hold_expires_at
          ? holdExpired(lastHold.hold_expires_at.toISOString())
          : notFound('Seat hold of booking', input.bookingId),
      );
    });
  }

  /** The given seats (all of the booking's when `seatNumbers` is absent) become RELEASED; already released is fine. */
  async function ReleaseSeats(input: ReleaseSeatsInput): Promise<void> {
    validateSeatNumbers(input.seatNumbers);
    const query = database('seat_allocations')
      .where({ booking_id: input.bookingId, trip_id: input.tripId })
      .whereIn('state', ['HELD', 'BOOKED']);
    if (input.seatNumbers !== undefined) query.whereIn('seat_number', input.seatNumbers);
    await query.update({ state: 'RELEASED', released_at: database.fn.now() });
  }

  return { ReserveSeats, ConfirmSeats, ReleaseSeats };
}
