// ProcessPayment and RefundPayment through the gateway simulator: every test token, retries, races, refund limits.
import { expect } from '@jest/globals';
import type { PaymentActivities, ProcessPaymentInput } from '../../../src/activities/interface';
import { createPaymentActivities } from '../../../src/activities/payments';
import { createReadModelActivities } from '../../../src/activities/read-model';
import { createPaymentGatewaySimulator } from '../../../src/adapters/payment-gateway-simulator';
import {
  createPaymentSimulatorLedger,
  simulatorLedgerTables,
} from '../../../src/db/payment-simulator-ledger';
import { findDomainError } from '../../../src/domain/errors';
import { activityKey } from '../../../src/domain/ids';
import {
  bookingSnapshot,
  failureOf,
  runActivity,
  testPassenger,
  useActivityTestBed,
} from '../../support/activities';
import type { SimulatorChargeRow } from '../../support/booking-records';
import { createTrip } from '../../support/trips';

const testBed = useActivityTestBed({ poolSize: 12 });
let payments: PaymentActivities;

beforeAll(() => {
  payments = createPaymentActivities({
    database: testBed.database,
    cipher: testBed.cipher,
    paymentGateway: createPaymentGatewaySimulator(createPaymentSimulatorLedger(testBed.database)),
  });
});

/** A recorded booking to pay for (no seats needed: payments only require the booking row). */
async function recordedBooking(): Promise<string> {
  const booking = bookingSnapshot(testBed.trip, [testPassenger('1A')]);
  await createReadModelActivities({ database: testBed.database, cipher: testBed.cipher }).RecordBooking(
    booking,
  );
  return booking.id;
}

function payment(bookingId: string, paymentToken: string, attempt = 1): ProcessPaymentInput {
  return {
    bookingId,
    idempotencyKey: activityKey(bookingId, 'process-payment', attempt),
    amount: { amountMinor: 2590, currency: 'EUR' },
    paymentToken,
  };
}

async function ledgerCharges(idempotencyKey: string) {
  return testBed
    .database<SimulatorChargeRow>(simulatorLedgerTables.charges)
    .where({ idempotency_key: idempotencyKey });
}

/** A recorded booking on a trip of its own, which the test may cancel and must remove. */
async function bookingOnItsOwnTrip() {
  const trip = await createTrip(testBed.database, { seatCount: 4 });
  const booking = bookingSnapshot({ ...trip, customerId: testBed.trip.customerId }, [
    testPassenger(trip.seatNumbers[0]),
  ]);
  await createReadModelActivities({ database: testBed.database, cipher: testBed.cipher }).RecordBooking(
    booking,
  );
  return { trip, booking };
}

describe('ProcessPayment', () => {
  it('refuses a booking whose trip the operator cancelled, naming the reason, before any money moves', async () => {
    const { trip, booking } = await bookingOnItsOwnTrip();
    await testBed
      .database('trips')
      .where({ id: trip.tripId })
      .update({ status: 'CANCELLED', cancelled_at: new Date(), cancellation_reason: 'Storm warning' });
    try {
      const input = payment(booking.id, 'tok_visa');
      const refusal = findDomainError(await failureOf(runActivity(payments, 'ProcessPayment', input)));
      expect(refusal).toMatchObject({
        code: 'BOOKING_STATE_CONFLICT',
        details: { tripId: trip.tripId, tripStatus: 'CANCELLED', reason: 'Storm warning' },
      });
      expect(await ledgerCharges(input.idempotencyKey)).toEqual([]);
      expect(await testBed.database('payments').where({ booking_id: booking.id })).toEqual([]);
    } finally {
      await trip.remove();
    }
  });

  it('answers a retry for a cancelled trip with the charge its first attempt took, and takes no new one', async () => {
    const { trip, booking } = await bookingOnItsOwnTrip();
    try {
      const timedOut = payment(booking.id, 'tok_timeoutOnce', 1);
      const neverCharged = payment(booking.id, 'tok_unavailableOnce', 2);
      for (const input of [timedOut, neverCharged]) {
        expect(await failureOf(runActivity(payments, 'ProcessPayment', input))).toMatchObject({
          type: expect.stringMatching(/^Gateway(Timeout|Unavailable)Error$/),
        });
      }
      await testBed
        .database('trips')
        .where({ id: trip.tripId })
        .update({ status: 'CANCELLED', cancelled_at: new Date(), cancellation_reason: 'Storm warning' });

      const [taken] = await ledgerCharges(timedOut.idempotencyKey);
      await expect(runActivity(payments, 'ProcessPayment', timedOut)).resolves.toMatchObject({
        transactionId: taken.transaction_id,
      });
      expect(
        findDomainError(await failureOf(runActivity(payments, 'ProcessPayment', neverCharged))),
      ).toMatchObject({
        code: 'BOOKING_STATE_CONFLICT',
        details: { tripStatus: 'CANCELLED', reason: 'Storm warning' },
      });
      expect(await ledgerCharges(neverCharged.idempotencyKey)).toEqual([]);
      expect(await testBed.database('payments').where({ booking_id: booking.id })).toHaveLength(1);
    } finally {
      await trip.remove();
    }
  });

  it.each([
    ['tok_visa', 'visa •••• 4242'],
    ['tok_mastercard', 'mastercard •••• 4444'],
  ])('approves %s and stores only the token, brand and last four digits', async (token, masked) => {
    const bookingId = await recordedBooking();
    const input = payment(bookingId, token);
    const result = await runActivity(payments, 'ProcessPayment', input);
    expect(result).toEqual({
      transactionId: expect.stringMatching(/^ch_sim_/),
      methodMasked: masked,
      amount: input.amount,
    });
    const [charge] = await ledgerCharges(input.idempotencyKey);
    expect(charge).toMatchObject({
      status: 'APPROVED',
      payment_token: token,
      card_brand: masked.split(' ')[0],
      card_last4: masked.slice(-4),
      amount_minor: 2590,
    });
    const row = await testBed
      .database<{ idempotency_key: string; method_masked: string }>('payments')
      .where({ idempotency_key: input.idempotencyKey })
      .first();
    expect(row).toMatchObject({ status: 'APPROVED', gateway_transaction_id: result.transactionId });
    expect(row?.method_masked).toMatch(/^enc:v1:/);
    expect(testBed.cipher.decrypt(row?.method_masked ?? '')).toBe(masked);
  });

  it.each([
    ['tok_chargeDeclined', 'card_declined'],
    ['tok_insufficientFunds', 'insufficient_funds'],
    ['tok_doesNotExist', 'invalid_token'],
  ])('declines %s with the reason as non-retryable PAYMENT_DECLINED', async (token, reason) => {
    const bookingId = await recordedBooking();
    const input = payment(bookingId, token);
    const failure = await failureOf(runActivity(payments, 'ProcessPayment', input));
    expect(failure).toMatchObject({ type: 'PAYMENT_DECLINED', nonRetryable: true });
    expect(findDomainError(failure)?.details).toEqual({ declineReason: reason });
    expect(
      await testBed.database('payments').where({ idempotency_key: input.idempotencyKey }).first(),
    ).toMatchObject({
      status: 'DECLINED',
      decline_reason: reason,
      gateway_transaction_id: null,
    });
    // A retry of the declined attempt gets the same answer, and a new attempt with a good card is approved.
    expect((await failureOf(runActivity(payments, 'ProcessPayment', input))).type).toBe('PAYMENT_DECLINED');
    await expect(
      runActivity(payments, 'ProcessPayment', payment(bookingId, 'tok_visa', 2)),
    ).resolves.toMatchObject({
      methodMasked: 'visa •••• 4242',
    });
  });

  it('retries tok_timeoutOnce into the charge the lost answer belonged to', async () => {
    const bookingId = await recordedBooking();
    const input = payment(bookingId, 'tok_timeoutOnce');
    const failure = await failureOf(runActivity(payments, 'ProcessPayment', input));
    expect(failure).toMatchObject({ type: 'GatewayTimeoutError', nonRetryable: false });
    const [taken] = await ledgerCharges(input.idempotencyKey);
    expect(taken.status).toBe('APPROVED');

    const result = await runActivity(payments, 'ProcessPayment', input);
    expect(result.transactionId).toBe(taken.transaction_id);
    expect(await ledgerCharges(input.idempotencyKey)).toHaveLength(1);
  });

  it('retries tok_unavailableOnce after a 503 that took no money', async () => {
    const bookingId = await recordedBooking();
    const input = payment(bookingId, 'tok_unavailableOnce');
    const failure = await failureOf(runActivity(payments, 'ProcessPayment', input));
    expect(failure).toMatchObject({ type: 'GatewayUnavailableError', nonRetryable: false });
    expect(await ledgerCharges(input.idempotencyKey)).toHaveLength(0);

    await expect(runActivity(payments, 'ProcessPayment', input)).resolves.toMatchObject({
      methodMasked: 'visa •••• 4242',
    });
    expect(await ledgerCharges(input.idempotencyKey)).toHaveLength(1);
  });

  it('charges once for a retried key, sequential or concurrent', async () => {
    const bookingId = await recordedBooking();
    const input = payment(bookingId, 'tok_visa');
    const first = await runActivity(payments, 'ProcessPayment', input);
    const again = await runActivity(payments, 'ProcessPayment', input);
    expect(again).toEqual(first);

    const racingInput = payment(bookingId, 'tok_mastercard', 2);
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => runActivity(payments, 'ProcessPayment', racingInput)),
    );
    expect(new Set(racing.map((result) => result.transactionId)).size).toBe(1);
    expect(await ledgerCharges(racingInput.idempotencyKey)).toHaveLength(1);
    expect(await testBed.database('payments').where({ booking_id: bookingId }).count({ count: '*' })).toEqual(
      [{ count: 2 }],
    );
  });

  it('refuses a key reused for another amount, and any charge without a booking', async () => {
    const bookingId = await recordedBooking();
    const input = payment(bookingId, 'tok_visa');
    await runActivity(payments, 'ProcessPayment', input);
    const reused = await failureOf(
      runActivity(payments, 'ProcessPayment', { ...input, amount: { amountMinor: 1, currency: 'EUR' } }),
    );
    expect(reused).toMatchObject({ type: 'IDEMPOTENCY_KEY_REUSED', nonRetryable: true });

    const orphan = payment('0b7e2c4a-9d6f-4c1b-8a3e-5f2d1c0b9a87', 'tok_visa');
    expect(await failureOf(runActivity(payments, 'ProcessPayment', orphan))).toMatchObject({
      type: 'NOT_FOUND',
      nonRetryable: true,
    });
    expect(await ledgerCharges(orphan.idempotencyKey)).toHaveLength(0);
  });
});

describe('RefundPayment', () => {
  it('refunds up to the captured amount, once per key, and no further', async () => {
    const bookingId = await recordedBooking();
    const { transactionId } = await runActivity(payments, 'ProcessPayment', payment(bookingId, 'tok_visa'));
    const refund = (revision: string, amountMinor: number) => ({
      bookingId,
      transactionId,
      idempotencyKey: activityKey(bookingId, 'refund-payment', revision),
      amount: { amountMinor, currency: 'EUR' },
    });

    const partial = refund('change-2', 1000);
    const results = await Promise.all([1, 2, 3].map(() => runActivity(payments, 'RefundPayment', partial)));
    expect(new Set(results.map((result) => result.refundId)).size).toBe(1);
    expect(await runActivity(payments, 'RefundPayment', partial)).toEqual(results[0]);

    const tooMuch = await failureOf(runActivity(payments, 'RefundPayment', refund('cancelled', 1591)));
    expect(tooMuch).toMatchObject({ type: 'REFUND_REJECTED', nonRetryable: true });

    await runActivity(payments, 'RefundPayment', refund('cancelled-rest', 1590));
    const [charge] = await testBed
      .database<SimulatorChargeRow>(simulatorLedgerTables.charges)
      .where({ transaction_id: transactionId });
    expect(charge.refunded_minor).toBe(2590);
    const ledgerRefunds = await testBed
      .database<{ charge_id: string; amount_minor: number }>(simulatorLedgerTables.refunds)
      .where({ charge_id: charge.id });
    expect(ledgerRefunds.map((row) => row.amount_minor).sort()).toEqual([1000, 1590]);
    const bookingRefunds = await testBed
      .database<{ booking_id: string; amount_minor: number; status: string }>('refunds')
      .where({ booking_id: bookingId });
    expect(bookingRefunds.map((row) => [row.amount_minor, row.status]).sort()).toEqual([
      [1000, 'SUCCEEDED'],
      [1590, 'SUCCEEDED'],
    ]);
    expect((await failureOf(runActivity(payments, 'RefundPayment', refund('one-more', 1)))).type).toBe(
      'REFUND_REJECTED',
    );
  });

  it('refuses a transaction that is not a captured payment of the booking', async () => {
    const bookingId = await recordedBooking();
    const failure = await failureOf(
      runActivity(payments, 'RefundPayment', {
        bookingId,
        transactionId: 'ch_sim_unknown',
        idempotencyKey: activityKey(bookingId, 'refund-payment', 'cancelled'),
        amount: { amountMinor: 100, currency: 'EUR' },
      }),
    );
    expect(failure).toMatchObject({ type: 'NOT_FOUND', nonRetryable: true });
  });
});
