// Each saga step calls its activity with the booking's ids and a key naming the step, so a retry finds its own work.
import { expect } from '@jest/globals';
import type { BookingActivityStubs } from '../../../src/workflows/booking-activities';
import { BookingSteps } from '../../../src/workflows/booking-steps';
import { bookingId, bookingState, euros, passengers } from '../../support/booking-states';

interface ActivityCall {
  activity: string;
  input: Record<string, unknown>;
}

const tripId = bookingState().tripId;

/** Activity stubs that record every call in order and answer like the real activities do. */
function recordingSteps(): {
  steps: BookingSteps;
  calls: ActivityCall[];
} {
  const calls: ActivityCall[] = [];
  const recording =
    (activity: string, answer: (input: Record<string, unknown>) => unknown = () => undefined) =>
    (input: Record<string, unknown>) => {
      calls.push({ activity, input });
      return Promise.resolve(answer(input));
    };
  const activities = {
    seats: {
      ReserveSeats: recording('ReserveSeats'),
      ConfirmSeats: recording('ConfirmSeats'),
      ReleaseSeats: recording('ReleaseSeats'),
    },
    localSeats: {
      ReserveSeats: recording('local ReserveSeats'),
      ConfirmSeats: recording('local ConfirmSeats'),
    },
    localReadModel: { RecordBooking: recording('local RecordBooking') },
    payments: {
      ProcessPayment: recording('ProcessPayment', (input) => ({
        transactionId: 'txn-1',
        methodMasked: 'visa •••• 4242',
        amount: input.amount,
      })),
      RefundPayment: recording('RefundPayment', (input) => ({ refundId: 'refund-1', amount: input.amount })),
    },
    notifications: {
      SendEmailNotification: recording('SendEmailNotification'),
      SendSMSNotification: recording('SendSMSNotification'),
    },
  } as unknown as BookingActivityStubs;
  return {
    steps: new BookingSteps(activities, { bookingId, tripId, originTimeZone: 'Europe/Lisbon' }),
    calls,
  };
}

test('ConfirmSeats has a key of its own, apart from the ReserveSeats of the same version', async () => {
  const { steps, calls } = recordingSteps();

  await steps.reserveSeats(passengers, '2026-11-01T09:15:00.000Z', 3, { from: 1, to: 3 });
  await steps.confirmSeats(3);

  expect(calls.map((call) => [call.activity, call.input.idempotencyKey])).toEqual([
    ['ReserveSeats', `${bookingId}:reserve-seats:3`],
    ['local ConfirmSeats', `${bookingId}:confirm-seats:3`],
  ]);
});

test('the creating reservation carries the first snapshot; a later one does not', async () => {
  const { steps, calls } = recordingSteps();
  const firstSnapshot = bookingState();

  await steps.reserveSeats(passengers, firstSnapshot.holdExpiresAt, 1, undefined, firstSnapshot);
  await steps.reserveSeats(passengers.slice(1), firstSnapshot.holdExpiresAt, 2, undefined);

  expect(calls[0].input).toEqual({
    bookingId,
    tripId,
    seats: [
      { passengerId: passengers[0].id, seatNumber: '3A', fareClass: 'STANDARD' },
      { passengerId: passengers[1].id, seatNumber: '3B', fareClass: 'STANDARD' },
    ],
    holdExpiresAt: firstSnapshot.holdExpiresAt,
    idempotencyKey: `${bookingId}:reserve-seats:1`,
    booking: firstSnapshot,
  });
  expect(calls[1].input).not.toHaveProperty('booking');
});

test('a new booking holds its first seats by local activity; its later reservations go to the seats queue', async () => {
  const { steps, calls } = recordingSteps();
  const firstSnapshot = bookingState();

  await steps.reserveSeats(passengers, firstSnapshot.holdExpiresAt, 1, undefined, firstSnapshot);
  await steps.reserveSeats(passengers.slice(1), firstSnapshot.holdExpiresAt, 2, undefined);

  expect(calls.map((call) => [call.activity, call.input.idempotencyKey])).toEqual([
    ['local ReserveSeats', `${bookingId}:reserve-seats:1`],
    ['ReserveSeats', `${bookingId}:reserve-seats:2`],
  ]);
  expect(calls[0].input.booking).toEqual(firstSnapshot);
});

test('seat confirmations and read-model writes are local activities', async () => {
  const { steps, calls } = recordingSteps();

  await steps.confirmSeats(2);
  await steps.recordBooking(bookingState());

  expect(calls.map((call) => call.activity)).toEqual(['local ConfirmSeats', 'local RecordBooking']);
});

test('releasing names the seats of a change, or releases every seat when none are named', async () => {
  const { steps, calls } = recordingSteps();

  await steps.releaseSeats('4', ['3A']);
  await steps.releaseSeats('cancelled');

  expect(calls.map((call) => call.input)).toEqual([
    { bookingId, tripId, seatNumbers: ['3A'], idempotencyKey: `${bookingId}:release-seats:4` },
    { bookingId, tripId, idempotencyKey: `${bookingId}:release-seats:cancelled` },
  ]);
});

test('payments and refunds are keyed by attempt and refund number', async () => {
  const { steps, calls } = recordingSteps();

  await steps.processPayment(2, euros(5000), 'tok_visa');
  await steps.refundPayment(1, { transactionId: 'txn-1', amount: euros(2500) });

  expect(calls.map((call) => call.input)).toEqual([
    {
      bookingId,
      idempotencyKey: `${bookingId}:process-payment:2`,
      amount: euros(5000),
      paymentToken: 'tok_visa',
    },
    {
      bookingId,
      idempotencyKey: `${bookingId}:refund-payment:1`,
      transactionId: 'txn-1',
      amount: euros(2500),
    },
  ]);
});

test('a notification goes by email, and by SMS too when a phone was given, with the departure in its time zone', async () => {
  const withPhone = recordingSteps();
  const withoutPhone = recordingSteps();
  const booking = bookingState({ contactPhone: '+351912345678' });

  await withPhone.steps.notifyExpired(booking);
  await withoutPhone.steps.notifyExpired(bookingState());

  const parameters = {
    holdExpiresAt: booking.holdExpiresAt,
    departureTime: booking.departureTime,
    timeZone: 'Europe/Lisbon',
  };
  expect(withPhone.calls).toEqual([
    {
      activity: 'SendEmailNotification',
      input: {
        bookingId,
        idempotencyKey: `${bookingId}:send-email:expired`,
        template: 'booking-expired',
        to: booking.contactEmail,
        parameters,
      },
    },
    {
      activity: 'SendSMSNotification',
      input: {
        bookingId,
        idempotencyKey: `${bookingId}:send-sms:expired`,
        template: 'booking-expired',
        to: '+351912345678',
        parameters,
      },
    },
  ]);
  expect(withoutPhone.calls.map((call) => call.activity)).toEqual(['SendEmailNotification']);
});

test('each notification carries what its template needs', async () => {
  const { steps, calls } = recordingSteps();
  const confirmed = bookingState({ status: 'CONFIRMED', amountPaid: euros(5000), version: 4 });

  await steps.notifyConfirmed(confirmed);
  await steps.notifyCancelled(confirmed, euros(2500), 'plans changed');
  await steps.notifyChanged(confirmed, { kind: 'REFUND', amount: euros(500) });

  expect(calls.map((call) => [call.input.idempotencyKey, call.input.parameters])).toEqual([
    [
      `${bookingId}:send-email:confirmed`,
      expect.objectContaining({ seatNumbers: '3A, 3B', amountPaidMinor: 5000, currency: 'EUR' }),
    ],
    [
      `${bookingId}:send-email:cancelled`,
      expect.objectContaining({ refundAmountMinor: 2500, currency: 'EUR', reason: 'plans changed' }),
    ],
    [
      `${bookingId}:send-email:changed-4`,
      expect.objectContaining({
        seatNumbers: '3A, 3B',
        totalMinor: 5000,
        currency: 'EUR',
        refundedMinor: 500,
      }),
    ],
  ]);
  expect(calls[2].input.parameters).not.toHaveProperty('chargedMinor');
});
