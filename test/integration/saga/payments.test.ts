// The payment step against the gateway simulator: transient failures retried into one charge, declines, refund rules.
import type { BookingView } from '../../../src/application/interface';
import { useSagaTestBed } from '../../support/saga';
import { activeSeatsOf, paymentLedger } from '../../support/booking-records';
import { bookingRequest, createTrip, standardPriceMinor } from '../../support/trips';
import { errorCodeOf } from '../../support/outcomes';

jest.setTimeout(60_000);

const testBed = useSagaTestBed({ seatCount: 16 });

async function transientFailuresOf(bookingId: string): Promise<string[]> {
  return testBed.saga
    .database('payment_simulator.transient_failures')
    .where('idempotency_key', 'like', `${bookingId}:%`)
    .pluck('failure');
}

test.each([
  ['tok_timeoutOnce', 'TIMEOUT', '1A'],
  ['tok_unavailableOnce', 'UNAVAILABLE', '1B'],
])('a transient gateway failure (%s) is retried and charges exactly once', async (token, failure, seat) => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, [seat]),
  );

  const confirmed = await testBed.saga.application.confirmPayment(testBed.customer, pending.id, {
    paymentToken: token,
  });

  expect(confirmed).toMatchObject({ status: 'CONFIRMED', amountPaid: { amountMinor: standardPriceMinor } });
  expect(await transientFailuresOf(pending.id)).toEqual([failure]);
  expect(await paymentLedger(testBed.saga.database, pending.id)).toMatchObject({
    charges: [standardPriceMinor],
    declinedCharges: 0,
  });
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual([`${seat}:BOOKED`]);
});

test('declines keep the hold and record every attempt until a card is approved', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['2A']),
  );

  expect(
    await errorCodeOf(
      testBed.saga.application.confirmPayment(testBed.customer, pending.id, {
        paymentToken: 'tok_insufficientFunds',
      }),
    ),
  ).toBe('PAYMENT_DECLINED');
  expect(
    await errorCodeOf(
      testBed.saga.application.confirmPayment(testBed.customer, pending.id, {
        paymentToken: 'tok_unknownCard',
      }),
    ),
  ).toBe('PAYMENT_DECLINED');
  const declined = await testBed.saga.application.getBooking(testBed.customer, pending.id);
  expect(declined).toMatchObject({
    status: 'PENDING_PAYMENT',
    version: 3,
    payment: { status: 'DECLINED', declineReason: 'invalid_token' },
  });
  expect(await activeSeatsOf(testBed.saga.database, pending.id)).toEqual(['2A:HELD']);

  const confirmed = await testBed.saga.application.confirmPayment(testBed.customer, pending.id, {
    paymentToken: 'tok_visa',
  });

  expect(confirmed).toMatchObject({ status: 'CONFIRMED', version: 4 });
  expect(await paymentLedger(testBed.saga.database, pending.id)).toMatchObject({
    charges: [standardPriceMinor],
    declinedCharges: 2,
  });
  const query = await testBed.saga.client.workflow
    .getHandle(`booking-${pending.id}`)
    .query<{ paymentAttempts: { outcome: string }[] }>('BookingState');
  expect(query.paymentAttempts.map((attempt) => attempt.outcome)).toEqual([
    'DECLINED',
    'DECLINED',
    'APPROVED',
  ]);
});

test('a payment token that is not a token is refused before any workflow runs', async () => {
  const pending = await testBed.saga.application.createBooking(
    testBed.customer,
    bookingRequest(testBed.trip, ['2B']),
  );
  expect(
    await errorCodeOf(
      testBed.saga.application.confirmPayment(testBed.customer, pending.id, { paymentToken: '4242 4242' }),
    ),
  ).toBe('VALIDATION_FAILED');
  expect(await errorCodeOf(testBed.saga.application.confirmPayment(testBed.customer, pending.id, {}))).toBe(
    'VALIDATION_FAILED',
  );
});

describe('cancelling a confirmed booking refunds per the fare rule at that time', () => {
  async function confirmedOn(departureInMs: number): Promise<BookingView> {
    const ownTrip = await createTrip(testBed.saga.database, { seatCount: 4, departureInMs });
    const pending = await testBed.saga.application.createBooking(
      testBed.customer,
      bookingRequest(ownTrip, ['1A', '1B']),
    );
    return testBed.saga.application.confirmPayment(testBed.customer, pending.id, {
      paymentToken: 'tok_visa',
    });
  }

  test.each([
    ['more than 24 hours ahead: all of it', 30 * 3_600_000, 100],
    ['less than 24 hours ahead: half', 2 * 3_600_000, 50],
  ])('%s', async (_notice, departureInMs, refundPercent) => {
    const confirmed = await confirmedOn(departureInMs);
    const paid = 2 * standardPriceMinor;

    const cancelled = await testBed.saga.application.cancelBooking(testBed.customer, confirmed.id, {
      reason: 'Illness',
    });

    const refund = (paid * refundPercent) / 100;
    expect(cancelled).toMatchObject({
      status: 'CANCELLED',
      amountPaid: { amountMinor: paid },
      amountRefunded: { amountMinor: refund },
      payment: { status: refundPercent === 100 ? 'REFUNDED' : 'PARTIALLY_REFUNDED' },
    });
    expect(await paymentLedger(testBed.saga.database, confirmed.id)).toMatchObject({
      charges: [paid],
      refunds: [refund],
    });
    expect(await activeSeatsOf(testBed.saga.database, confirmed.id)).toEqual([]);
  });
});
