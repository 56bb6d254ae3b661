// Money moving shows in the booking: attempts listed, amounts paid and refunded, refunds taken newest charge first.
import { DomainError } from '../../../src/domain/errors';
import {
  CapturedPayments,
  declinedPaymentChanges,
  declineReasonOf,
  withApprovedPayment,
  withRefund,
} from '../../../src/workflows/payment-records';
import { bookingState, confirmedState, euros } from '../../support/booking-states';

const attemptedAt = '2026-11-01T09:05:00.000Z';

test('an approved charge adds to the amount paid, lists the attempt and shows the method', () => {
  const paid = withApprovedPayment(bookingState(), {
    attemptNumber: 1,
    attemptedAt,
    amount: euros(5000),
    method: 'visa •••• 4242',
  });

  expect(paid.amountPaid).toEqual(euros(5000));
  expect(paid.payment).toEqual({ status: 'CAPTURED', method: 'visa •••• 4242', lastAttemptAt: attemptedAt });
  expect(paid.paymentAttempts).toEqual([
    { attemptNumber: 1, attemptedAt, outcome: 'APPROVED', amount: euros(5000), method: 'visa •••• 4242' },
  ]);
});

test('a decline moves no money and lists the attempt with its reason', () => {
  const changes = declinedPaymentChanges(bookingState(), {
    attemptNumber: 1,
    attemptedAt,
    amount: euros(5000),
    declineReason: 'insufficient funds',
  });

  expect(changes).toEqual({
    payment: { status: 'DECLINED', lastAttemptAt: attemptedAt, declineReason: 'insufficient funds' },
    paymentAttempts: [
      {
        attemptNumber: 1,
        attemptedAt,
        outcome: 'DECLINED',
        amount: euros(5000),
        declineReason: 'insufficient funds',
      },
    ],
  });
  const paidThenDeclined = declinedPaymentChanges(confirmedState(), {
    attemptNumber: 2,
    attemptedAt,
    amount: euros(500),
    declineReason: 'card expired',
  });
  expect(paidThenDeclined.payment.status).toBe('CAPTURED');
});

test("a decline's reason is the gateway's when it gave one", () => {
  const withReason = new DomainError('PAYMENT_DECLINED', 'The payment was declined', {
    details: { declineReason: 'insufficient funds' },
  });
  expect(declineReasonOf(withReason)).toBe('insufficient funds');
  expect(declineReasonOf(new DomainError('PAYMENT_DECLINED', 'The payment was declined'))).toBe(
    'The payment was declined',
  );
});

test('refunds add up to a partly, then fully, refunded payment', () => {
  const partly = withRefund(confirmedState(), euros(2000));
  expect(partly.amountRefunded).toEqual(euros(2000));
  expect(partly.payment).toEqual({ status: 'PARTIALLY_REFUNDED', method: 'visa •••• 4242' });
  expect(withRefund(partly, euros(3000)).payment.status).toBe('REFUNDED');
});

describe('CapturedPayments', () => {
  function recordingGateway() {
    const refunds: { refundNumber: number; transactionId: string; amountMinor: number }[] = [];
    let charges = 0;
    const steps = {
      processPayment: (_attemptNumber: number, amount: { amountMinor: number; currency: string }) => {
        charges += 1;
        return Promise.resolve({ transactionId: `txn-${charges}`, methodMasked: 'visa •••• 4242', amount });
      },
      refundPayment: (
        refundNumber: number,
        portion: { transactionId: string; amount: { amountMinor: number; currency: string } },
      ) => {
        refunds.push({
          refundNumber,
          transactionId: portion.transactionId,
          amountMinor: portion.amount.amountMinor,
        });
        return Promise.resolve({ refundId: `refund-${refundNumber}`, amount: portion.amount });
      },
    };
    return { payments: new CapturedPayments(steps), refunds };
  }

  test('remembers the token of the last approved charge', async () => {
    const { payments } = recordingGateway();
    expect(payments.paymentToken).toBeUndefined();
    await payments.charge(1, euros(5000), 'tok_visa');
    expect(payments.paymentToken).toBe('tok_visa');
  });

  test('refunds newest charge first, numbers every refund, and never gives back a charge twice', async () => {
    const { payments, refunds } = recordingGateway();
    await payments.charge(1, euros(5000), 'tok_visa');
    await payments.charge(2, euros(1500), 'tok_visa');
    const reported: number[] = [];

    await payments.refund(euros(500), (amount) => reported.push(amount.amountMinor));
    await payments.refund(euros(9000), (amount) => reported.push(amount.amountMinor));

    expect(refunds).toEqual([
      { refundNumber: 1, transactionId: 'txn-2', amountMinor: 500 },
      { refundNumber: 2, transactionId: 'txn-2', amountMinor: 1000 },
      { refundNumber: 3, transactionId: 'txn-1', amountMinor: 5000 },
    ]);
    expect(reported).toEqual([500, 1000, 5000]);
  });
});
