// The partial cancellation's plan as the workflow makes it: passengers typed by their price lines, quotes checked.
import { expect } from '@jest/globals';
import type { BookingState, Passenger } from '../../../src/domain/booking';
import { DomainError } from '../../../src/domain/errors';
import { defaultPassengerTypes, priceParty } from '../../../src/domain/passenger-types';
import { quoteRefund } from '../../../src/domain/refund-quotes';
import { passengerCancellationPlan } from '../../../src/workflows/booking-passenger-cancellation';
import { confirmedState, euros, farePrices, relativeToDeparture } from '../../support/booking-states';

function thrown(action: () => unknown): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

const ids = {
  mother: 'aaaaaaaa-0000-4000-8000-000000000001',
  father: 'aaaaaaaa-0000-4000-8000-000000000002',
  infant: 'aaaaaaaa-0000-4000-8000-000000000004',
};

function passenger(id: string, seatNumber: string): Passenger {
  return {
    id,
    firstName: 'Silva',
    lastName: id.slice(-1),
    email: 'family@example.com',
    seatNumber,
    fareClass: 'STANDARD',
  };
}

// The workflow's passengers carry no type: each is typed as its price line was priced.
const passengers = [passenger(ids.mother, '3A'), passenger(ids.father, '3B'), passenger(ids.infant, '')];
const price = priceParty(
  [
    { ...passengers[0], passengerType: 'ADULT' },
    { ...passengers[1], passengerType: 'ADULT' },
    { ...passengers[2], passengerType: 'INFANT' },
  ],
  farePrices,
  { types: defaultPassengerTypes, legCount: 1 },
);
const booking: BookingState = confirmedState({ passengers, price, amountPaid: euros(5000), version: 3 });

test('refuses leaving the infant without an adult, naming the rule; one adult may go', () => {
  const error = thrown(() =>
    passengerCancellationPlan(booking, { passengerIds: [ids.mother, ids.father] }, defaultPassengerTypes),
  );
  expect(error.code).toBe('VALIDATION_FAILED');
  expect(error.fieldViolations).toEqual([
    {
      field: 'passenger_ids',
      message: expect.stringContaining('cancelling these passengers would break a rule of the others'),
    },
  ]);
  const plan = passengerCancellationPlan(booking, { passengerIds: [ids.father] }, defaultPassengerTypes);
  expect(plan.seatsToRelease).toEqual(['3B']);
  expect(plan.remainingPassengers).toEqual([passengers[0], passengers[2]]);
});

test('releases no seat for the lap infant, and keeps the passengers as the workflow holds them', () => {
  const plan = passengerCancellationPlan(booking, { passengerIds: [ids.infant] }, defaultPassengerTypes);
  expect(plan.seatsToRelease).toEqual([]);
  expect(plan.remainingPassengers).toEqual([passengers[0], passengers[1]]);
  expect(plan.remainingPassengers.every((kept) => !('passengerType' in kept))).toBe(true);
});

test('takes a quote of these passengers at this version; refuses one of another version, passengers or booking', () => {
  const now = relativeToDeparture(-48 * 60 * 60 * 1000).toISOString();
  const quote = quoteRefund({ booking, passengerIds: [ids.father], id: 'q-1', now });
  expect(
    passengerCancellationPlan(booking, { passengerIds: [ids.father], quote }, defaultPassengerTypes)
      .cancelsBooking,
  ).toBe(false);
  const reasonOf = (request: Parameters<typeof passengerCancellationPlan>[1], state = booking) =>
    thrown(() => passengerCancellationPlan(state, request, defaultPassengerTypes)).details.reason;
  expect(reasonOf({ passengerIds: [ids.father], quote }, { ...booking, version: 4 })).toBe('booking_changed');
  expect(reasonOf({ passengerIds: [ids.mother], quote })).toBe('other_passengers');
  expect(
    reasonOf({
      passengerIds: [ids.father],
      quote: { ...quote, bookingId: 'c0ffee00-0000-4000-8000-000000000000' },
    }),
  ).toBe('other_booking');
});
