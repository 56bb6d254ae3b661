// Lifecycle rows "change seats, add a passenger, edit details" and "change segment": the status stays, the seats move.
import { uuid4 } from '@temporalio/workflow';
import type { BookingState, Timestamp } from '../domain/booking';
import { planBookingChange, type BookingChangePlan } from '../domain/changes';
import { bookingStateConflict, DomainError, versionMismatch } from '../domain/errors';
import { assertCanUpdate, holdExpiryFor } from '../domain/lifecycle';
import { assertPassengerTypes, travelDateOf } from '../domain/passenger-types';
import { assertExpectedTotal } from '../domain/price-guard';
import { assertUpdateSeatsOnBus } from '../domain/seat-layout';
import { legRangeOf, type SegmentChangeTerms } from '../domain/segments';
import { timestampMs } from '../domain/time';
import { validateUpdateBooking } from '../domain/validation';
import { now, type BookingSaga } from './booking-saga';
import { Compensations } from './compensations';
import type { UpdateBookingRequest } from './shared';

/**
 * Everything a change must satisfy before it starts. The validator passes `mintIds: false`: validators do
 * not run on replay, so they must not draw from the workflow's random number generator.
 */
export function planChange(
  saga: BookingSaga,
  request: UpdateBookingRequest,
  mintIds: boolean,
): BookingChangePlan {
  const booking = saga.booking;
  assertCanUpdate(booking, now(), saga.input.timings.changeCutoffMs);
  // The open payment is for the price as it stands: a change waits until the processor has answered.
  if (saga.openPayment !== undefined) {
    throw bookingStateConflict(booking.status, 'update', 'a payment is open; finish or cancel it first');
  }
  const expectedVersion = request?.expectedVersion;
  if (expectedVersion !== undefined && expectedVersion !== booking.version) {
    throw versionMismatch(expectedVersion, booking.version);
  }
  const command = validateUpdateBooking(request?.changes ?? {}, booking, {
    maxPassengers: saga.input.maxPassengers,
  });
  assertUpdateSeatsOnBus(command, saga.input.seatClasses);
  const newPassengerIds = command.addPassengers.map((_, index) =>
    mintIds ? uuid4() : `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
  );
  if (request.segmentChange !== undefined && command.segmentChange === undefined) {
    throw new DomainError('INTERNAL', 'Segment change terms came without a segment change');
  }
  const plan = planBookingChange(
    booking,
    command,
    newPassengerIds,
    request.segmentChange?.farePrices ?? saga.farePrices,
    saga.priceTerms,
  );
  const { passengerTypes } = saga.priceTerms;
  if (passengerTypes !== undefined && command.addPassengers.length > 0) {
    assertPassengerTypes(plan.passengers, passengerTypes, travelDateOf(booking));
  }
  // The client held to the total it showed: nothing is held or charged at another price.
  assertExpectedTotal(command.expectedTotal, plan.price);
  return plan;
}

/**
 * "change seats, add a passenger, edit details": new seats first, then the money, and only then are the old seats
 * let go, so a failure changes nothing. A segment change goes its own way.
 */
export async function changeBooking(saga: BookingSaga, request: UpdateBookingRequest): Promise<BookingState> {
  if (request.segmentChange !== undefined) return changeSegment(saga, request, request.segmentChange);
  const plan = planChange(saga, request, true);
  const nextVersion = saga.booking.version + 1;
  const undoChange = new Compensations();
  try {
    await holdNewSeats(saga, plan, nextVersion, undoChange);
    await settlePriceDifference(saga, plan);
  } catch (error) {
    await undoChange.runInReverse();
    throw error;
  }
  if (plan.seatsToRelease.length > 0) {
    await saga.steps.releaseSeats(String(nextVersion), [...plan.seatsToRelease]);
  }
  await saga.publish({
    status: saga.next('UPDATE_REQUESTED'),
    passengers: plan.passengers,
    price: plan.price,
  });
  await saga.steps.notifyChanged(saga.booking, plan.settlement);
  return saga.booking;
}

/** A confirmed booking's new seats are booked at once; a pending one's share the booking's hold. */
async function holdNewSeats(
  saga: BookingSaga,
  plan: BookingChangePlan,
  nextVersion: number,
  undoChange: Compensations,
): Promise<void> {
  if (plan.seatsToReserve.length === 0) return;
  const newSeatNumbers = plan.seatsToReserve.map((seat) => seat.seatNumber);
  const newSeats = plan.passengers.filter((passenger) => newSeatNumbers.includes(passenger.seatNumber));
  const confirmed = saga.booking.status === 'CONFIRMED';
  const holdExpiresAt = confirmed
    ? holdExpiryFor(now(), saga.input.timings.holdDurationMs, saga.booking.departureTime)
    : saga.booking.holdExpiresAt;
  undoChange.add('release the new seats', () =>
    saga.steps.releaseSeats(`undo-${nextVersion}`, newSeatNumbers),
  );
  await saga.steps.reserveSeats(newSeats, holdExpiresAt, nextVersion, saga.legs);
  if (confirmed) await saga.steps.confirmSeats(nextVersion);
}

/**
 * "change segment": every seat's new legs are held first, then the price difference is charged or refunded, and
 * only then are the old legs let go. A failure before that puts the booking's allocations back to its old legs.
 */
async function changeSegment(
  saga: BookingSaga,
  request: UpdateBookingRequest,
  terms: SegmentChangeTerms,
): Promise<BookingState> {
  const plan = planChange(saga, request, true);
  const nextVersion = saga.booking.version + 1;
  const newLegs = legRangeOf(terms.segment);
  const confirmed = saga.booking.status === 'CONFIRMED';
  const departureCap = (holdExpiresAt: Timestamp) =>
    timestampMs(holdExpiresAt) < timestampMs(terms.departureTime) ? holdExpiresAt : terms.departureTime;
  const holdExpiresAt = confirmed
    ? holdExpiryFor(now(), saga.input.timings.holdDurationMs, terms.departureTime)
    : departureCap(saga.booking.holdExpiresAt);
  const undoChange = new Compensations();
  try {
    undoChange.add('release the new legs', () =>
      saga.steps.releaseSeats(`undo-${nextVersion}`, undefined, terms.previousLegs),
    );
    await saga.steps.reserveSeats(plan.passengers, holdExpiresAt, nextVersion, newLegs);
    if (confirmed) await saga.steps.confirmSeats(nextVersion);
    await settlePriceDifference(saga, plan);
  } catch (error) {
    await undoChange.runInReverse();
    throw error;
  }
  await saga.steps.releaseSeats(String(nextVersion), undefined, newLegs);
  saga.segmentFarePrices = terms.farePrices;
  await saga.publish({
    status: saga.next('UPDATE_REQUESTED'),
    passengers: plan.passengers,
    price: plan.price,
    segment: terms.segment,
    departureTime: terms.departureTime,
    holdExpiresAt,
  });
  await saga.steps.notifyChanged(saga.booking, plan.settlement);
  return saga.booking;
}

/** Pending: the amount due simply changes. Confirmed: charge or refund the difference. */
async function settlePriceDifference(saga: BookingSaga, plan: BookingChangePlan): Promise<void> {
  const { settlement } = plan;
  if (settlement.kind === 'CHARGE') {
    const { paymentToken } = saga.payments;
    if (paymentToken === undefined) {
      throw bookingStateConflict(
        saga.booking.status,
        'update',
        'no payment method is on file for the difference',
      );
    }
    await saga.chargeOrRecordDecline(settlement.amount, paymentToken);
  } else if (settlement.kind === 'REFUND') {
    await saga.refund(settlement.amount);
  }
}
