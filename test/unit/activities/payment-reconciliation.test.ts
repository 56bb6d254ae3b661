// What the reconciliation calls lost: outcomes of this service's bookings that neither an event nor the ledger holds.
import { expect } from '@jest/globals';
import { lostOutcomes, reconciliationEventId } from '../../../src/activities/payment-reconciliation';
import type { PaymentLedgerFacts } from '../../../src/db/payment-events';
import type { PaymentEventKind } from '../../../src/domain/payment-events';
import type { ProcessorIntent, ProcessorRefund } from '../../../src/ports/payment-gateway';

const euros = { amountMinor: 2500, currency: 'EUR' };
const now = 1_795_939_200;

function intent(id: string, status: ProcessorIntent['status'], bookingId = 'pending'): ProcessorIntent {
  return {
    intentId: id,
    bookingId,
    idempotencyKey: `${bookingId}:process-payment:${id}`,
    status,
    amount: euros,
    createdAt: now,
  };
}

function refund(id: string, status: ProcessorRefund['status']): ProcessorRefund {
  return { refundId: id, intentId: 'pi_paid', bookingId: 'confirmed', status, amount: euros, createdAt: now };
}

function facts(overrides: Partial<PaymentLedgerFacts> = {}): PaymentLedgerFacts {
  return {
    intentEventKinds: new Map<string, Set<PaymentEventKind>>(),
    refundEventKinds: new Map<string, Set<PaymentEventKind>>(),
    approvedIntents: new Set<string>(),
    paymentStatusesByKey: new Map(),
    refundStatuses: new Map(),
    bookingStatuses: new Map([
      ['pending', 'PENDING_PAYMENT'],
      ['confirmed', 'CONFIRMED'],
    ]),
    ...overrides,
  };
}

const ids = (events: { eventId: string }[]) => events.map((event) => event.eventId);

describe('lost payment outcomes', () => {
  it('are the ended intents and refunds of known bookings that nothing recorded', () => {
    const lost = lostOutcomes(
      {
        intents: [
          intent('pi_ok', 'succeeded'),
          intent('pi_no', 'failed'),
          intent('pi_gone', 'canceled'),
          intent('pi_open', 'open'),
          intent('pi_foreign', 'succeeded', 'not-ours'),
          { ...intent('pi_unnamed', 'succeeded'), bookingId: undefined },
        ],
        refunds: [refund('re_ok', 'succeeded'), refund('re_no', 'failed'), refund('re_wait', 'pending')],
      },
      facts(),
      now,
    );
    expect(ids(lost)).toEqual([
      reconciliationEventId('pi_ok', 'succeeded'),
      reconciliationEventId('pi_no', 'failed'),
      reconciliationEventId('pi_gone', 'canceled'),
      reconciliationEventId('re_ok', 'succeeded'),
      reconciliationEventId('re_no', 'failed'),
    ]);
  });

  it('leave out what an event, the payments or the refunds already hold', () => {
    const lost = lostOutcomes(
      {
        intents: [
          intent('pi_heard', 'succeeded'),
          intent('pi_charged', 'succeeded'),
          intent('pi_keyed', 'failed'),
        ],
        refunds: [refund('re_made', 'succeeded'), refund('re_heard', 'failed')],
      },
      facts({
        intentEventKinds: new Map([['pi_heard', new Set<PaymentEventKind>(['intent_succeeded'])]]),
        approvedIntents: new Set(['pi_charged']),
        paymentStatusesByKey: new Map([['pending:process-payment:pi_keyed', 'DECLINED' as const]]),
        refundStatuses: new Map([['re_made', 'SUCCEEDED' as const]]),
        refundEventKinds: new Map([['re_heard', new Set<PaymentEventKind>(['refund_failed'])]]),
      }),
      now,
    );
    expect(lost).toEqual([]);
  });

  it("send money taken whatever the booking's state, a failure only while it still waits for payment", () => {
    const lost = lostOutcomes(
      {
        intents: [intent('pi_late', 'succeeded', 'confirmed'), intent('pi_stale', 'failed', 'confirmed')],
        refunds: [],
      },
      facts(),
      now,
    );
    expect(lost).toEqual([
      {
        eventId: 'reconcile:pi_late:succeeded',
        type: 'payment_intent.succeeded',
        kind: 'intent_succeeded',
        createdAt: now,
        bookingId: 'confirmed',
        intentId: 'pi_late',
        amount: euros,
      },
    ]);
  });
});
