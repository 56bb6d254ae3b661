// ReserveSeats, ConfirmSeats and ReleaseSeats: the seat inventory's rules, its SQL and constraints in db/seat-allocations.
import { ApplicationFailure } from '@temporalio/common';
import type { Knex } from 'knex';
import { DomainError, holdExpired, notFound, validationFailed, type FieldViolation } from '../domain/errors';
import {
  bookingTripKey,
  tripOfBooking,
  writeBookingSnapshot,
  type SnapshotWrite,
} from '../db/booking-read-model';
import {
  bookHeldSeats,
  insertHolds,
  lockActiveAllocations,
  noOverlappingLegsConstraint,
  releaseAllocations,
  releaseBookingSeats,
  releaseLegsOutside,
  routeStopCodesOfTrip,
  wholeRouteLegs,
  seatHoldStanding,
  seatInLayoutKey,
  seatNamedByLayoutViolation,
  seatsTakenByOthers,
  tripNotCancelledCheck,
} from '../db/seat-allocations';
import { tripCancelledRefusal } from '../domain/trip-cancellation';
import { readTripCancellationMark } from '../db/trip-cancellations';
import { redeemDiscountCode } from '../db/discount-codes';
import { seatsTakenOnLegs, uncoveredLegs, type LegRange, type TakenLegs } from '../domain/segments';
import { createBusinessMetrics, type BusinessMetrics } from '../observability/metrics';
import { notBookedReasonOf } from '../observability/metrics-labels';
import { retrying } from '../retry';
import type { FieldCipher } from '../security/field-encryption';
import { isPostgresError, postgresErrorCodes } from '../db/postgres-errors';
import {
  businessFailure,
  type ConfirmSeatsInput,
  type ReleaseSeatsInput,
  type ReserveSeatsInput,
  type SeatActivities,
} from './interface';
import { countBookingTransition } from './read-model';

export interface SeatActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
  /**
   * How long after its hold_expires_at another booking may take over a seat still HELD by a booking that is not
   * CONFIRMED. The owning workflow normally releases at expiry; this only frees seats of a workflow that never
   * will, with a margin for a confirmation racing its own deadline.
   */
  lapsedHoldGraceSeconds: number;
  metrics?: BusinessMetrics;
}

/**
 * A concurrent reservation can win the exclusion between our check and our insert; a rerun sees its row. Two
 * inserts of the same seat at once may instead each wait for the other (PostgreSQL checks an exclusion after
 * inserting) until the deadlock detector aborts one: that one reruns too.
 */
const MAXIMUM_RESERVE_ATTEMPTS = 3;

function lostToAnotherReservation(error: unknown): boolean {
  return (
    isPostgresError(error, postgresErrorCodes.exclusionViolation, noOverlappingLegsConstraint) ||
    isPostgresError(error, postgresErrorCodes.deadlockDetected)
  );
}

function seatsFailure(violations: FieldViolation[]): never {
  throw businessFailure(validationFailed(violations));
}

/** Writes the booking's first snapshot unless its row exists; returns that write, if it made one. */
async function ensureBookingRow(
  transaction: Knex.Transaction,
  input: ReserveSeatsInput,
  cipher: FieldCipher,
): Promise<SnapshotWrite | undefined> {
  const tripId = await tripOfBooking(transaction, input.bookingId);
  if (tripId !== undefined) {
    if (tripId !== input.tripId) {
      seatsFailure([{ field: 'trip_id', message: 'the booking is for another trip' }]);
    }
    return undefined;
  }
  if (input.booking === undefined) throw businessFailure(notFound('Booking', input.bookingId));
  return writeBookingSnapshot(transaction, input.booking, cipher);
}

/**
 * The discount code a new booking is priced with is redeemed in the transaction that creates its row and holds its
 * seats: a code used up meanwhile refuses the create with nothing held, and a create refused for its seats redeems
 * nothing. The code's maximum is PostgreSQL's to keep (redeemDiscountCode), however many creates race for it.
 */
async function redeemBookingDiscount(transaction: Knex.Transaction, input: ReserveSeatsInput): Promise<void> {
  const discount = input.booking?.price.discount;
  if (input.booking === undefined || discount === undefined) return;
  try {
    await redeemDiscountCode(transaction, discount.code, input.bookingId, new Date(), {
      routeId: input.booking.routeId,
      currency: input.booking.price.total.currency,
    });
  } catch (error) {
    if (error instanceof DomainError) throw businessFailure(error);
    throw error;
  }
}

/** What a committed reservation changed: the booking row it created, seats newly held, lapsed holds released. */
interface Reservation {
  bookingWrite?: SnapshotWrite;
  seatsHeld: number;
  lapsedHoldsReleased: number;
}

async function reserveInTransaction(
  transaction: Knex.Transaction,
  input: ReserveSeatsInput,
  dependencies: SeatActivityDependencies,
): Promise<Reservation> {
  const bookingWrite = await ensureBookingRow(transaction, input, dependencies.cipher);
  if (bookingWrite !== undefined) await redeemBookingDiscount(transaction, input);
  const legs = input.legs ?? (await wholeRouteLegs(transaction, input.tripId));
  const active = await lockActiveAllocations(transaction, {
    tripId: input.tripId,
    bookingId: input.bookingId,
    seatNumbers: input.seats.map((seat) => seat.seatNumber),
    legs,
    lapsedHoldGraceSeconds: dependencies.lapsedHoldGraceSeconds,
  });
  const othersActive = active.filter((allocation) => allocation.booking_id !== input.bookingId);
  const taken = othersActive
    .filter((allocation) => !allocation.lapsed)
    .map((allocation) => ({
      seatNumber: allocation.seat_number,
      legs: { from: allocation.legs_from, to: allocation.legs_to },
    }));
  if (taken.length > 0)
    throw businessFailure(await takenSeatsRefusal(transaction, input.tripId, legs, taken));

  // Nothing is taken, so every other booking's allocation here is a lapsed hold: release it for this booking.
  const lapsedIds = othersActive.map((allocation) => allocation.id);
  if (lapsedIds.length > 0) await releaseAllocations(transaction, lapsedIds);

  // Legs this booking already holds or has booked are left as they are: a retry is a no-op, and a segment change
  // holds only the legs its old segment lacks (ReleaseSeats then cuts the old allocations down to the new legs).
  const ownLegs = (seatNumber: string) =>
    active
      .filter(
        (allocation) => allocation.booking_id === input.bookingId && allocation.seat_number === seatNumber,
      )
      .map((allocation) => ({ from: allocation.legs_from, to: allocation.legs_to }));
  const holds = input.seats.flatMap((seat) =>
    uncoveredLegs(legs, ownLegs(seat.seatNumber)).map((missingLegs) => ({ seat, legs: missingLegs })),
  );
  const seatsHeld = new Set(holds.map((hold) => hold.seat.seatNumber)).size;
  const reservation = { bookingWrite, seatsHeld, lapsedHoldsReleased: lapsedIds.length };
  for (const hold of holds) {
    await insertHolds(transaction, {
      bookingId: input.bookingId,
      tripId: input.tripId,
      holdExpiresAt: input.holdExpiresAt,
      legs: hold.legs,
      seats: [hold.seat],
    });
  }
  return reservation;
}

/** SEAT_UNAVAILABLE naming each taken seat and the legs it shares with the request, in the route's stop codes. */
async function takenSeatsRefusal(
  database: Knex,
  tripId: string,
  legs: LegRange,
  taken: readonly TakenLegs[],
): Promise<DomainError> {
  return seatsTakenOnLegs(await routeStopCodesOfTrip(database, tripId), legs, taken);
}

/** The error code a business failure carries (its type), undefined for other failures. */
function businessFailureCode(error: unknown): string | undefined {
  return error instanceof ApplicationFailure && error.nonRetryable && typeof error.type === 'string'
    ? error.type
    : undefined;
}

/**
 * The layout check is the database's (the seat-in-layout foreign key); this says which seat failed it, in the
 * request's terms. The application refuses such seats before any workflow starts, so reaching here means the
 * layout changed since, or a caller other than the booking workflow.
 */
function seatNotOnBus(input: ReserveSeatsInput, error: { detail?: unknown }): DomainError {
  const seatNumber = seatNamedByLayoutViolation(error);
  const index = input.seats.findIndex((seat) => seat.seatNumber === seatNumber);
  if (seatNumber === undefined || index < 0) {
    return validationFailed([{ field: 'seats', message: 'a requested seat does not exist on this trip' }]);
  }
  return validationFailed([
    { field: `seats[${index}].seat_number`, message: `seat ${seatNumber} does not exist on this trip` },
  ]);
}

/** What a failed reservation means for the booking, when the database refused it for a business reason. */
function reservationRefusal(input: ReserveSeatsInput, error: unknown): DomainError | undefined {
  if (isPostgresError(error, postgresErrorCodes.foreignKeyViolation, seatInLayoutKey)) {
    return seatNotOnBus(input, error as { detail?: unknown });
  }
  if (isPostgresError(error, postgresErrorCodes.foreignKeyViolation, bookingTripKey)) {
    return notFound('Trip', input.tripId);
  }
  if (isPostgresError(error, postgresErrorCodes.checkViolation, tripNotCancelledCheck)) {
    return tripCancelledRefusal(input.tripId);
  }
  return undefined;
}

export function createSeatActivities(dependencies: SeatActivityDependencies): SeatActivities {
  const { database } = dependencies;
  const metrics = dependencies.metrics ?? createBusinessMetrics();

  /**
   * Holds every requested seat or none (one transaction). A seat held or booked by another booking fails with
   * non-retryable SEAT_UNAVAILABLE naming the seats; a hold lapsed past the grace period is released first.
   * Creates the booking's read-model row from `input.booking` when it does not exist yet (allocations reference it).
   */
  async function ReserveSeats(input: ReserveSeatsInput): Promise<void> {
    try {
      const reservation = await reserve(input);
      // Counted once committed: a retry finds the row and its seats and reports nothing new.
      if (reservation.bookingWrite !== undefined && input.booking !== undefined) {
        countBookingTransition(metrics, reservation.bookingWrite, input.booking);
      }
      metrics.seatsHeld(reservation.seatsHeld);
      metrics.seatsReleased(reservation.lapsedHoldsReleased);
    } catch (error) {
      // A creating reservation that fails for a business reason ends the request without a booking.
      const code = businessFailureCode(error);
      if (code !== undefined && input.booking !== undefined) {
        metrics.bookingTransition('not_booked', notBookedReasonOf(code));
      }
      throw error;
    }
  }

  async function reserve(input: ReserveSeatsInput): Promise<Reservation> {
    try {
      return await retrying(
        () => database.transaction((transaction) => reserveInTransaction(transaction, input, dependencies)),
        { attempts: MAXIMUM_RESERVE_ATTEMPTS, retryOn: lostToAnotherReservation },
      );
    } catch (error) {
      const refusal = reservationRefusal(input, error);
      if (refusal !== undefined) throw businessFailure(refusal);
      if (!lostToAnotherReservation(error)) throw error;
    }
    const legs = input.legs ?? (await wholeRouteLegs(database, input.tripId));
    const taken = await seatsTakenByOthers(database, {
      bookingId: input.bookingId,
      tripId: input.tripId,
      seatNumbers: input.seats.map((seat) => seat.seatNumber),
      legs,
    });
    throw businessFailure(
      taken.length > 0
        ? await takenSeatsRefusal(database, input.tripId, legs, taken)
        : new DomainError('SEAT_UNAVAILABLE', 'The seats are being reserved by another booking'),
    );
  }

  /** HELD seats of the booking become BOOKED; fails HOLD_EXPIRED when the booking holds no seat any more. */
  async function ConfirmSeats(input: ConfirmSeatsInput): Promise<void> {
    // One statement in the usual case: seats it booked show that the booking still held them.
    let booked: number;
    try {
      booked = await bookHeldSeats(database, input);
    } catch (error) {
      if (isPostgresError(error, postgresErrorCodes.checkViolation, tripNotCancelledCheck)) {
        const mark = await readTripCancellationMark(database, input.tripId);
        throw businessFailure(tripCancelledRefusal(input.tripId, mark?.cancellationReason));
      }
      throw error;
    }
    if (booked > 0) return;
    // None was HELD: a retry finds them BOOKED already, or the hold lapsed and the seats went back.
    const standing = await seatHoldStanding(database, input);
    if (standing.active) return;
    throw businessFailure(
      standing.lastHoldExpiresAt
        ? holdExpired(standing.lastHoldExpiresAt.toISOString())
        : notFound('Seat hold of booking', input.bookingId),
    );
  }

  /**
   * The given seats (all of the booking's when `seatNumbers` is absent) become RELEASED; with `keepLegs`, only
   * their legs outside those. Already released is fine.
   */
  async function ReleaseSeats(input: ReleaseSeatsInput): Promise<void> {
    let released: number;
    try {
      released =
        input.keepLegs === undefined
          ? await releaseBookingSeats(database, input)
          : await database.transaction((transaction) =>
              releaseLegsOutside(transaction, { ...input, keepLegs: input.keepLegs! }),
            );
    } catch (error) {
      metrics.compensation('release_seats', 'failed');
      throw error;
    }
    // A retry that finds the seats released already releases none and counts nothing.
    if (released > 0) metrics.compensation('release_seats', 'succeeded');
    metrics.seatsReleased(released);
  }

  return { ReserveSeats, ConfirmSeats, ReleaseSeats };
}
