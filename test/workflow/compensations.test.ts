// The saga's undo paths: what a failure, an expiry or a cancel gives back, and in which order.
import { expect } from '@jest/globals';
import { WorkflowFailedError } from '@temporalio/client';
import { cancelBookingUpdate, confirmPaymentUpdate, updateBookingUpdate } from '../../src/workflows/shared';
import {
  activitiesOf,
  BookingWorkflowTier,
  declinedCard,
  quietRuntime,
  stateOf,
  updateErrorCode,
} from './support/booking-workflow';

const tier = new BookingWorkflowTier();

beforeAll(async () => {
  quietRuntime();
  await tier.start();
});

afterAll(() => tier.stop());

test('payment declined, then the hold expires: the seats are released and nothing is refunded', async () => {
  const booking = await tier.createBooking({ timings: { holdDurationMs: 4_000 } });
  const declined = booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: declinedCard }],
  });
  expect(await updateErrorCode(declined)).toBe('PAYMENT_DECLINED');

  const result = await booking.handle.result();

  expect(result).toMatchObject({ booking: { status: 'EXPIRED', amountRefunded: { amountMinor: 0 } } });
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'ReleaseSeats',
    'SendEmailNotification',
  ]);
});

test('cancel after payment: the refund first, then the seats, newest step undone first', async () => {
  const booking = await tier.createBooking();
  const paid = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });

  await booking.handle.executeUpdate(cancelBookingUpdate, { args: [{ reason: 'Plans changed' }] });

  const undo = booking.calls.filter((call) => ['RefundPayment', 'ReleaseSeats'].includes(call.activity));
  expect(undo.map((call) => [call.activity, call.input.amount ?? call.input.seatNumbers])).toEqual([
    ['RefundPayment', paid.amountPaid],
    ['ReleaseSeats', undefined],
  ]);
});

test('hold expiry: the held seats go back with the revision of the expiry', async () => {
  const booking = await tier.createBooking({ timings: { holdDurationMs: 1_000 } });

  await booking.handle.result();

  const release = booking.calls.find((call) => call.activity === 'ReleaseSeats');
  expect(release?.input).toEqual({
    bookingId: booking.bookingId,
    tripId: booking.input.tripId,
    idempotencyKey: `${booking.bookingId}:release-seats:expired`,
  });
});

test('a later step fails after the charge (the seats cannot be confirmed): refund, then release, in reverse order', async () => {
  const booking = await tier.createBooking({ outcomes: { holdLapsedAtConfirmation: true } });

  const confirm = booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });

  expect(await updateErrorCode(confirm)).toBe('HOLD_EXPIRED');
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ProcessPayment',
    'ConfirmSeats',
    'RefundPayment',
    'ReleaseSeats',
    'SendEmailNotification',
  ]);
  expect(await stateOf(booking)).toMatchObject({ status: 'EXPIRED', payment: { status: 'REFUNDED' } });
});

test('a change whose charge is declined: the new seats are released, the old ones kept', async () => {
  // The difference is charged to the card on file, which the gateway declines the second time.
  const booking = await tier.createBooking({ seats: ['2A'], outcomes: { approvedCharges: 1 } });
  const [passenger] = booking.created.passengers;
  await booking.handle.executeUpdate(confirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] });
  booking.calls.length = 0;

  const upgrade = booking.handle.executeUpdate(updateBookingUpdate, {
    args: [
      { changes: { seatChanges: [{ passengerId: passenger.id, seatNumber: '1A', fareClass: 'PREMIUM' }] } },
    ],
  });

  expect(await updateErrorCode(upgrade)).toBe('PAYMENT_DECLINED');
  // The decline is recorded on the confirmed booking, whose tickets are checked (and left as they are).
  expect(activitiesOf(booking)).toEqual([
    'ReserveSeats',
    'ConfirmSeats',
    'ProcessPayment',
    'IssueTickets',
    'ReleaseSeats',
  ]);
  const release = booking.calls.find((call) => call.activity === 'ReleaseSeats');
  expect(release?.input.seatNumbers).toEqual(['1A']);
  expect(await stateOf(booking)).toMatchObject({ status: 'CONFIRMED', passengers: [{ seatNumber: '2A' }] });
});

test('an operator cancels the workflow after payment: everything is refunded and released, the run ends cancelled', async () => {
  const booking = await tier.createBooking();
  const paid = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });

  await booking.handle.cancel();

  await expect(booking.handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
  const undo = booking.calls.filter((call) => ['RefundPayment', 'ReleaseSeats'].includes(call.activity));
  expect(undo.map((call) => call.activity)).toEqual(['RefundPayment', 'ReleaseSeats']);
  expect(undo[0].input.amount).toEqual(paid.amountPaid);
});
