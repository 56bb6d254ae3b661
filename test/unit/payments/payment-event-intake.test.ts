// The one path of the processor's events: recorded before anything else, applied once, the rest counted.
import { expect } from '@jest/globals';
import type { PaymentEvent } from '../../../src/domain/payment-events';
import { paymentEventSignalName } from '../../../src/domain/payment-events';
import {
  createPaymentEventIntake,
  type PaymentEventIntakeDependencies,
  type SettledOutcome,
} from '../../../src/payments/payment-event-intake';
import { paymentEventSignal } from '../../../src/workflows/shared';

const succeeded: PaymentEvent = {
  eventId: 'evt_1',
  type: 'payment_intent.succeeded',
  createdAt: 1_795_939_200,
  bookingId: 'b1',
  kind: 'intent_succeeded',
  intentId: 'pi_1',
  amount: { amountMinor: 2500, currency: 'EUR' },
};

function world(recorded: { outcome: SettledOutcome | undefined; claimed: boolean }) {
  const calls: string[] = [];
  const counted: string[] = [];
  let deliver: PaymentEventIntakeDependencies['deliver'] = () => Promise.resolve('applied');
  const intake = createPaymentEventIntake({
    record: (event, source) => {
      calls.push(`record ${event.eventId} ${source}`);
      return Promise.resolve(recorded);
    },
    settle: (eventId, outcome) => {
      calls.push(`settle ${eventId} ${outcome}`);
      return Promise.resolve();
    },
    release: (eventId) => {
      calls.push(`release ${eventId}`);
      return Promise.resolve();
    },
    deliver: (event) => {
      calls.push(`deliver ${event.eventId} to ${event.bookingId}`);
      return deliver(event);
    },
    count: (source, kind, outcome) => counted.push(`${source} ${kind} ${outcome}`),
    warn: (_details, message) => calls.push(`warn ${message}`),
  });
  return {
    intake,
    calls,
    counted,
    deliverWith(next: PaymentEventIntakeDependencies['deliver']) {
      deliver = next;
    },
  };
}

describe('the payment event intake', () => {
  it('records, then delivers, then marks applied', async () => {
    const { intake, calls, counted } = world({ outcome: undefined, claimed: true });
    await expect(intake(succeeded, 'webhook')).resolves.toBe('applied');
    expect(calls).toEqual(['record evt_1 webhook', 'deliver evt_1 to b1', 'settle evt_1 applied']);
    expect(counted).toEqual(['webhook intent_succeeded applied']);
  });

  it.each([
    ['dealt with before', { outcome: 'applied' as const, claimed: false }],
    ['being applied by another delivery', { outcome: undefined, claimed: false }],
  ])('leaves an event %s alone, as a duplicate', async (_name, recorded) => {
    const { intake, calls, counted } = world(recorded);
    await expect(intake(succeeded, 'reconciliation')).resolves.toBe('duplicate');
    expect(calls).toEqual(['record evt_1 reconciliation']);
    expect(counted).toEqual(['reconciliation intent_succeeded duplicate']);
  });

  it('ignores a kind nobody acts on, and names no booking it cannot', async () => {
    const ignored = world({ outcome: undefined, claimed: true });
    await expect(
      ignored.intake(
        { eventId: 'evt_2', type: 'customer.created', createdAt: 1, bookingId: 'b1', kind: 'ignored' },
        'webhook',
      ),
    ).resolves.toBe('ignored');
    expect(ignored.calls).toEqual(['record evt_2 webhook', 'settle evt_2 ignored']);

    const unnamed = world({ outcome: undefined, claimed: true });
    await expect(unnamed.intake({ ...succeeded, bookingId: undefined }, 'webhook')).resolves.toBe(
      'no_booking',
    );
    expect(unnamed.calls).toEqual([
      'record evt_1 webhook',
      'settle evt_1 no_booking',
      'warn a payment event names no booking; recorded, nothing applied',
    ]);
  });

  it('gives its claim back when the delivery fails, leaving the event unapplied for the next one', async () => {
    const failing = world({ outcome: undefined, claimed: true });
    failing.deliverWith(() => Promise.reject(new Error('Temporal unreachable')));
    await expect(failing.intake(succeeded, 'webhook')).rejects.toThrow('Temporal unreachable');
    expect(failing.calls).toEqual(['record evt_1 webhook', 'deliver evt_1 to b1', 'release evt_1']);
    expect(failing.counted).toEqual([]);
  });

  it("sends by the booking workflow's own signal name", () => {
    expect(paymentEventSignal.name).toBe(paymentEventSignalName);
  });
});
