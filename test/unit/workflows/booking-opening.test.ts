// A booking opens as version 1 of the lifecycle: PENDING_PAYMENT, priced, its hold no later than departure.
import { DomainError } from '../../../src/domain/errors';
import { minuteMs } from '../../../src/domain/time';
import { openBooking } from '../../../src/workflows/booking-opening';
import type { BookingWorkflowInput } from '../../../src/workflows/shared';
import { bookingState, departureTime, farePrices, relativeToDeparture } from '../../support/booking-states';

const template = bookingState();
const openedAt = new Date('2026-11-01T09:00:00.000Z');

function workflowInput(overrides: Partial<BookingWorkflowInput> = {}): BookingWorkflowInput {
  return {
    bookingId: template.id,
    customerId: template.customerId,
    tripId: template.tripId,
    routeId: template.routeId,
    departureTime,
    originTimeZone: 'Europe/Lisbon',
    passengers: template.passengers.map(({ id: _id, ...passenger }) => passenger),
    contactEmail: template.contactEmail,
    farePrices,
    seatClasses: { '3A': 'STANDARD', '3B': 'STANDARD' },
    refundRule: template.refundRule,
    maxPassengers: 9,
    timings: {
      holdDurationMs: 15 * minuteMs,
      changeCutoffMs: 60 * minuteMs,
      activityStartToCloseMs: 10_000,
      activityRetryInitialIntervalMs: 200,
      activityRetryMaximumIntervalMs: 2_000,
    },
    ...overrides,
  };
}

function idsInOrder(): string[] {
  return template.passengers.map((passenger) => passenger.id);
}

test('opens PENDING_PAYMENT at version 1, priced per passenger, nothing paid, held for the hold duration', () => {
  expect(openBooking(workflowInput(), idsInOrder(), openedAt)).toEqual(template);
});

test('ends the hold at departure when the bus leaves first', () => {
  const late = relativeToDeparture(-5 * minuteMs);
  expect(openBooking(workflowInput(), idsInOrder(), late).holdExpiresAt).toBe(departureTime);
});

test('keeps a contact phone only when one was given', () => {
  const withPhone = openBooking(workflowInput({ contactPhone: '+351912345678' }), idsInOrder(), openedAt);
  expect(withPhone.contactPhone).toBe('+351912345678');
  expect(openBooking(workflowInput(), idsInOrder(), openedAt)).not.toHaveProperty('contactPhone');
});

test('a fare class the trip no longer sells is a validation failure, so nothing is held', () => {
  const premiumOnly = { PREMIUM: farePrices.PREMIUM };
  try {
    openBooking(workflowInput({ farePrices: premiumOnly }), idsInOrder(), openedAt);
    throw new Error('expected a validation failure');
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
  }
});

test('a passenger without an id, or an id without a passenger, is an internal error: nothing is held', () => {
  for (const passengerIds of [idsInOrder().slice(1), [...idsInOrder(), 'one id too many']]) {
    let refusal: unknown;
    try {
      openBooking(workflowInput(), passengerIds, openedAt);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(DomainError);
    expect((refusal as DomainError).code).toBe('INTERNAL');
  }
});
