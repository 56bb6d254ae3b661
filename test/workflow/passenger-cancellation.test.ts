// Lifecycle row "cancel-passengers": some passengers leave a booking that goes on; the validator's refusals; the last ones cancel it.
import { expect } from '@jest/globals';
import type { BookingState } from '../../src/domain/booking';
import { outstandingBalance } from '../../src/domain/fares';
import { quoteRefund } from '../../src/domain/refund-quotes';
import {
  cancelPassengersUpdate,
  confirmPaymentUpdate,
  recordBoardingUpdate,
  updateBookingUpdate,
  type CancelPassengersRequest,
} from '../../src/workflows/shared';
import {
  activitiesOf,
  BookingWorkflowTier,
  quietRuntime,
  stateOf,
  updateErrorCode,
  type BookingOptions,
  type TestBooking,
} from './support/booking-workflow';

const tier = new BookingWorkflowTier();
const hourMs = 60 * 60 * 1000;

beforeAll(async () => {
  quietRuntime();
  await tier.start();
});

afterAll(() => tier.stop());

/** Three passengers on 2A, 2B, 2C (25.00 each), paid, departing in twelve hours: the standard rule gives half back. */
async function confirmedFamily(
  options: BookingOptions = {},
): Promise<TestBooking & { confirmed: BookingState }> {
  const booking = await tier.createBooking({
    seats: ['2A', '2B', '2C'],
    departureInMs: 12 * hourMs,
    ...options,
  });
  const confirmed = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });
  booking.calls.length = 0;
  return { ...booking, confirmed };
}

function cancel(booking: TestBooking, request: CancelPassengersRequest): Promise<BookingState> {
  return booking.handle.executeUpdate(cancelPassengersUpdate, { args: [request] });
}

function inputsOf(booking: TestBooking, activity: string): Record<string, unknown>[] {
  return booking.calls.filter((call) => call.activity === activity).map((call) => call.input);
}

test('CONFIRMED, one of three passengers cancelled → CONFIRMED: their seat released, their share refunded by the rule, tickets reissued without them, the contact told', async () => {
  const booking = await confirmedFamily();
  const [, leaving] = booking.confirmed.passengers;

  const after = await cancel(booking, { passengerIds: [leaving.id], reason: 'Ill' });

  expect(activitiesOf(booking)).toEqual([
    'ReleaseSeats',
    'RefundPayment',
    'IssueTickets',
    'SendEmailNotification',
  ]);
  expect(inputsOf(booking, 'ReleaseSeats')[0]).toMatchObject({ seatNumbers: ['2B'] });
  expect(inputsOf(booking, 'ReleaseSeats')[0]).not.toHaveProperty('keepLegs');
  // Half of the passenger's 25.00, twelve hours before departure.
  expect(inputsOf(booking, 'RefundPayment')[0]).toMatchObject({ amount: { amountMinor: 1250 } });
  expect(after).toMatchObject({
    status: 'CONFIRMED',
    version: booking.confirmed.version + 1,
    price: { total: { amountMinor: 5000 } },
    amountPaid: { amountMinor: 7500 },
    amountRefunded: { amountMinor: 1250 },
    payment: { status: 'PARTIALLY_REFUNDED' },
    cancelledPassengers: [
      { passengerId: leaving.id, paid: { amountMinor: 2500 }, refund: { amountMinor: 1250 } },
    ],
  });
  expect(after.passengers.map((passenger) => passenger.seatNumber)).toEqual(['2A', '2C']);
  expect(after.price.lines.map((line) => line.passengerId)).not.toContain(leaving.id);
  expect(outstandingBalance(after)).toEqual({ amountMinor: 0, currency: 'EUR' });
  const tickets = inputsOf(booking, 'IssueTickets')[0] as unknown as BookingState;
  expect(tickets.passengers.map((passenger) => passenger.id)).not.toContain(leaving.id);
  expect(inputsOf(booking, 'SendEmailNotification')[0]).toMatchObject({
    template: 'passengers-cancelled',
    to: 'ana@example.com',
    parameters: { passengerCount: 1, seatNumbers: '2A, 2C', refundAmountMinor: 1250, reason: 'Ill' },
  });
});

test('CONFIRMED, a passenger cancelled with a quote: exactly the quote is refunded, whatever the rule gives now', async () => {
  const booking = await confirmedFamily();
  const [leaving] = booking.confirmed.passengers;
  // Quoted when the rule still gave everything back: the customer accepted 25.00.
  const quote = quoteRefund({
    booking: booking.confirmed,
    passengerIds: [leaving.id],
    id: 'c5d6e7f8-0000-4000-8000-000000000001',
    now: new Date(Date.parse(booking.confirmed.departureTime) - 48 * hourMs).toISOString(),
  });
  expect(quote.total.amountMinor).toBe(2500);

  const after = await cancel(booking, { passengerIds: [leaving.id], quote });

  expect(inputsOf(booking, 'RefundPayment').map((input) => input.amount)).toEqual([quote.total]);
  expect(after.cancelledPassengers).toEqual([
    expect.objectContaining({ passengerId: leaving.id, refund: quote.total }),
  ]);
  expect(after.amountRefunded.amountMinor).toBe(2500);
});

test('the last passengers cancelled → CANCELLED as a whole cancel: the remaining seats released, the rule’s refund, the booking-cancelled notice', async () => {
  const booking = await confirmedFamily();
  const [first, second, third] = booking.confirmed.passengers;
  await cancel(booking, { passengerIds: [first.id] });
  booking.calls.length = 0;

  const cancelled = await cancel(booking, { passengerIds: [third.id, second.id], reason: 'Plans changed' });

  expect(cancelled).toMatchObject({
    status: 'CANCELLED',
    cancellationReason: 'Plans changed',
    amountRefunded: { amountMinor: 1250 + 2500 },
  });
  expect(activitiesOf(booking)).toEqual([
    'RefundPayment',
    'ReleaseSeats',
    'IssueTickets',
    'SendEmailNotification',
  ]);
  // The whole cancel's rule applies to the two still travelling: what was kept of the first stays kept.
  expect(inputsOf(booking, 'RefundPayment')[0]).toMatchObject({ amount: { amountMinor: 2500 } });
  expect(inputsOf(booking, 'ReleaseSeats')[0]).not.toHaveProperty('seatNumbers');
  expect(inputsOf(booking, 'SendEmailNotification')[0]).toMatchObject({ template: 'booking-cancelled' });
  expect(outstandingBalance(cancelled)).toEqual({ amountMinor: 0, currency: 'EUR' });
});

test('every passenger cancelled with a quote → CANCELLED, refunding exactly the quote', async () => {
  const booking = await confirmedFamily();
  const ids = booking.confirmed.passengers.map((passenger) => passenger.id);
  const quote = quoteRefund({
    booking: booking.confirmed,
    passengerIds: ids,
    id: 'c5d6e7f8-0000-4000-8000-000000000002',
    now: new Date().toISOString(),
  });

  const cancelled = await cancel(booking, { passengerIds: ids, quote });

  expect(cancelled.status).toBe('CANCELLED');
  expect(inputsOf(booking, 'RefundPayment').map((input) => input.amount)).toEqual([quote.total]);
});

test('PENDING_PAYMENT, a passenger cancelled: the seat released, nothing refunded, the amount due shrinks and the payment charges it', async () => {
  const booking = await tier.createBooking({ seats: ['2A', '2B'] });
  const [, leaving] = booking.created.passengers;
  booking.calls.length = 0;

  const after = await cancel(booking, { passengerIds: [leaving.id] });

  expect(activitiesOf(booking)).toEqual(['ReleaseSeats', 'SendEmailNotification']);
  expect(after).toMatchObject({ status: 'PENDING_PAYMENT', price: { total: { amountMinor: 2500 } } });
  const confirmed = await booking.handle.executeUpdate(confirmPaymentUpdate, {
    args: [{ paymentToken: 'tok_visa' }],
  });
  expect(confirmed).toMatchObject({ status: 'CONFIRMED', amountPaid: { amountMinor: 2500 } });
  expect(outstandingBalance(confirmed)).toEqual({ amountMinor: 0, currency: 'EUR' });
});

test('refused before it is accepted: an unknown, repeated, boarded or already cancelled passenger, an empty list, a stale quote', async () => {
  const booking = await confirmedFamily();
  const [first, second, third] = booking.confirmed.passengers;
  const staleQuote = quoteRefund({
    booking: booking.confirmed,
    passengerIds: [second.id],
    id: 'c5d6e7f8-0000-4000-8000-000000000003',
    now: new Date().toISOString(),
  });
  await cancel(booking, { passengerIds: [first.id] });
  await booking.handle.executeUpdate(recordBoardingUpdate, {
    args: [
      {
        passengerId: third.id,
        stopCode: 'LIS',
        boardedAt: new Date().toISOString(),
        actorId: 'driver-1',
      },
    ],
  });
  const before = await stateOf(booking);
  booking.calls.length = 0;

  expect(
    await updateErrorCode(cancel(booking, { passengerIds: ['4e1f7c52-0000-4000-8000-00000000dead'] })),
  ).toBe('VALIDATION_FAILED');
  expect(await updateErrorCode(cancel(booking, { passengerIds: [first.id] }))).toBe('VALIDATION_FAILED');
  expect(await updateErrorCode(cancel(booking, { passengerIds: [third.id] }))).toBe('VALIDATION_FAILED');
  expect(await updateErrorCode(cancel(booking, { passengerIds: [second.id, second.id] }))).toBe(
    'VALIDATION_FAILED',
  );
  expect(await updateErrorCode(cancel(booking, { passengerIds: [] }))).toBe('VALIDATION_FAILED');
  expect(await updateErrorCode(cancel(booking, { passengerIds: [second.id], quote: staleQuote }))).toBe(
    'QUOTE_INVALID',
  );

  expect(booking.calls).toEqual([]);
  expect(await stateOf(booking)).toEqual(before);
});

test('a quote made before a change of the booking is refused: QUOTE_INVALID, nothing moves', async () => {
  const booking = await confirmedFamily();
  const [leaving, staying] = booking.confirmed.passengers;
  const quote = quoteRefund({
    booking: booking.confirmed,
    passengerIds: [leaving.id],
    id: 'c5d6e7f8-0000-4000-8000-000000000004',
    now: new Date().toISOString(),
  });
  await booking.handle.executeUpdate(updateBookingUpdate, {
    args: [{ changes: { seatChanges: [{ passengerId: staying.id, seatNumber: '3A' }] } }],
  });
  booking.calls.length = 0;

  expect(await updateErrorCode(cancel(booking, { passengerIds: [leaving.id], quote }))).toBe('QUOTE_INVALID');
  expect(booking.calls).toEqual([]);
});

test('a refund the processor refuses after the seats went back: the cancellation stands, the unpaid refund recorded as an incident and reported', async () => {
  const booking = await confirmedFamily({ outcomes: { refundsRefused: true } });
  const [leaving] = booking.confirmed.passengers;

  const after = await cancel(booking, { passengerIds: [leaving.id] });

  expect(activitiesOf(booking)).toEqual([
    'ReleaseSeats',
    'RefundPayment',
    'IssueTickets',
    'ReportPaymentIncident',
    'SendEmailNotification',
  ]);
  expect(after.passengers.map((passenger) => passenger.id)).not.toContain(leaving.id);
  expect(after.amountRefunded.amountMinor).toBe(0);
  const state = await stateOf(booking);
  expect(state?.paymentIncidents).toEqual([
    expect.objectContaining({ kind: 'REFUND_FAILED', amount: { amountMinor: 1250, currency: 'EUR' } }),
  ]);
  // The booking owes the customer the refund until an operator settles it.
  expect(outstandingBalance(after)).toEqual({ amountMinor: -1250, currency: 'EUR' });
});
