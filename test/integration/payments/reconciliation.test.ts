// The payment reconciliation against localstripe: outcomes no webhook brought are found, sent once, and not again.
import { randomUUID } from 'node:crypto';
import { createStripePaymentGateway } from '../../../src/adapters/stripe-payment-gateway';
import type { PaymentReconciliationResult } from '../../../src/activities/interface';
import { reconciliationEventId } from '../../../src/activities/payment-reconciliation';
import { readPaymentEvent } from '../../../src/db/payment-events';
import type { Actor } from '../../../src/domain/actor';
import type { PaymentGateway } from '../../../src/ports/payment-gateway';
import { ensurePaymentReconciliationSchedule } from '../../../src/worker/payment-reconciliation-schedule';
import { paymentReconciliationWorkflowType } from '../../../src/workflows/payment-reconciliation-shared';
import { localstripeKey } from '../../support/localstripe';
import { paymentEventSignals, webhookSecret } from '../../support/payment-events';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';
import { eventuallyFound } from '../../support/outcomes';

jest.setTimeout(90_000);

const localstripeUrl = process.env.LOCALSTRIPE_URL ?? '';
const euros = (amountMinor: number) => ({ amountMinor, currency: 'EUR' });

let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let gateway: PaymentGateway;

beforeAll(async () => {
  if (!localstripeUrl) throw new Error('LOCALSTRIPE_URL is not set: the integration global setup starts it');
  saga = await startSagaEnvironment({
    environment: {
      BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100',
      PAYMENT_GATEWAY: 'stripe',
      STRIPE_SECRET_KEY: localstripeKey,
      STRIPE_API_URL: localstripeUrl,
      STRIPE_WEBHOOK_SECRET: webhookSecret(),
    },
  });
  trip = await createTrip(saga.database, { seatCount: 16 });
  customer = await createCustomer(saga.database, saga.cipher);
  gateway = createStripePaymentGateway({ secretKey: localstripeKey, apiUrl: localstripeUrl });
});

afterAll(async () => {
  await saga?.stop();
});

async function pendingBooking(seat: string): Promise<string> {
  return (await saga.application.createBooking(customer, bookingRequest(trip, [seat]))).id;
}

/** One pass, as the schedule starts it, on this file's own queues. */
function reconcile(): Promise<PaymentReconciliationResult> {
  return saga.client.workflow.execute(paymentReconciliationWorkflowType, {
    taskQueue: saga.taskQueueNames.bookings,
    workflowId: `payment-reconciliation-test-${randomUUID()}`,
    args: [{ lookbackSeconds: 600, taskQueues: saga.taskQueueNames }],
  });
}

function mendedFor(result: PaymentReconciliationResult, bookingId: string) {
  return result.mended.filter((mended) => mended.bookingId === bookingId);
}

describe('payment reconciliation', () => {
  it('finds a succeeded intent, a failed one and a refund whose webhooks never came, and sends each once', async () => {
    const paid = await pendingBooking('1A');
    const declined = await pendingBooking('1B');
    // Charged at the processor as the payment step would, but its outcome never reached the ledger: no webhook
    // endpoint is registered for this file, and the booking's own payment step never ran.
    const charge = await gateway.charge({
      idempotencyKey: `${paid}:reconciliation-test:1`,
      amount: euros(2500),
      paymentToken: 'pm_card_visa',
      description: 'Bus booking reconciliation test',
      bookingId: paid,
    });
    if (charge.status !== 'approved') throw new Error(`expected an approval, got ${charge.status}`);
    const refund = await gateway.refund({
      idempotencyKey: `${paid}:reconciliation-test-refund:1`,
      transactionId: charge.transactionId,
      amount: euros(500),
    });
    const refusal = await gateway.charge({
      idempotencyKey: `${declined}:reconciliation-test:1`,
      amount: euros(2500),
      paymentToken: 'pm_card_chargeCustomerFail',
      description: 'Bus booking reconciliation test',
      bookingId: declined,
    });
    expect(refusal).toMatchObject({ status: 'declined' });
    const failedIntent = (await gateway.recentPayments(new Date(Date.now() - 60_000))).intents.find(
      (intent) => intent.bookingId === declined,
    );
    expect(failedIntent).toMatchObject({ status: 'failed' });

    const first = await reconcile();

    expect(first.intentsCompared).toBeGreaterThanOrEqual(2);
    expect(first.refundsCompared).toBeGreaterThanOrEqual(1);
    expect(mendedFor(first, paid)).toEqual([
      {
        eventId: reconciliationEventId(charge.transactionId, 'succeeded'),
        kind: 'intent_succeeded',
        bookingId: paid,
        intentId: charge.transactionId,
        outcome: 'applied',
      },
      {
        eventId: reconciliationEventId(refund.refundId, 'succeeded'),
        kind: 'refund_succeeded',
        bookingId: paid,
        intentId: charge.transactionId,
        refundId: refund.refundId,
        outcome: 'applied',
      },
    ]);
    expect(mendedFor(first, declined)).toEqual([
      {
        eventId: reconciliationEventId(failedIntent!.intentId, 'failed'),
        kind: 'intent_failed',
        bookingId: declined,
        intentId: failedIntent!.intentId,
        outcome: 'applied',
      },
    ]);
    expect(await paymentEventSignals(saga.client, paid)).toEqual([
      expect.objectContaining({
        eventId: reconciliationEventId(charge.transactionId, 'succeeded'),
        type: 'payment_intent.succeeded',
        kind: 'intent_succeeded',
        intentId: charge.transactionId,
        amount: euros(2500),
      }),
      expect.objectContaining({
        kind: 'refund_succeeded',
        refundId: refund.refundId,
        amount: euros(500),
        cumulative: false,
      }),
    ]);
    expect(await paymentEventSignals(saga.client, declined)).toEqual([
      expect.objectContaining({ kind: 'intent_failed', intentId: failedIntent!.intentId }),
    ]);
    expect(
      await readPaymentEvent(saga.database, reconciliationEventId(charge.transactionId, 'succeeded')),
    ).toMatchObject({ source: 'reconciliation', outcome: 'applied', bookingId: paid });

    const second = await reconcile();

    expect(mendedFor(second, paid)).toEqual([]);
    expect(mendedFor(second, declined)).toEqual([]);
    expect(await paymentEventSignals(saga.client, paid)).toHaveLength(2);
    expect(await paymentEventSignals(saga.client, declined)).toHaveLength(1);
  });

  it('leaves alone an outcome a webhook already brought', async () => {
    const bookingId = await pendingBooking('2A');
    const charge = await gateway.charge({
      idempotencyKey: `${bookingId}:reconciliation-test:1`,
      amount: euros(2500),
      paymentToken: 'pm_card_visa',
      description: 'Bus booking reconciliation test',
      bookingId,
    });
    if (charge.status !== 'approved') throw new Error(`expected an approval, got ${charge.status}`);
    // As the webhook endpoint records it.
    await saga.database('payment_events').insert({
      event_id: `evt_${randomUUID().replace(/-/g, '')}`,
      source: 'webhook',
      type: 'payment_intent.succeeded',
      kind: 'intent_succeeded',
      booking_id: bookingId,
      intent_id: charge.transactionId,
      event: JSON.stringify({}),
      created_at: new Date(),
      claimed_until: new Date(),
      outcome: 'applied',
      applied_at: new Date(),
    });

    const pass = await reconcile();

    expect(mendedFor(pass, bookingId)).toEqual([]);
    expect(await paymentEventSignals(saga.client, bookingId)).toEqual([]);
  });

  it('is a schedule, created once and brought up to date, whose run returns what it mended', async () => {
    const scheduleId = `payment-reconciliation-test-${randomUUID()}`;
    const options = {
      connection: saga.client.connection,
      config: saga.config,
      taskQueueNames: saga.taskQueueNames,
      scheduleId,
    };
    const handle = saga.client.schedule.getHandle(scheduleId);
    try {
      expect(await ensurePaymentReconciliationSchedule(options)).toEqual({ scheduleId, created: true });
      expect(await ensurePaymentReconciliationSchedule(options)).toEqual({ scheduleId, created: false });

      const described = await handle.describe();
      expect(described.spec.intervals).toMatchObject([
        { every: saga.config.paymentReconciliation.intervalMinutes * 60_000 },
      ]);
      expect(described.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: paymentReconciliationWorkflowType,
        taskQueue: saga.taskQueueNames.bookings,
      });
      expect(described.policies.overlap).toBe('SKIP');

      await handle.trigger();
      const action = await eventuallyFound(
        async () => (await handle.describe()).info.recentActions[0],
        20_000,
      );
      const result = await saga.client.workflow
        .getHandle<() => Promise<PaymentReconciliationResult>>(
          action.action.workflow.workflowId,
          action.action.workflow.firstExecutionRunId,
        )
        .result();
      expect(result).toEqual({
        since: expect.any(String) as unknown,
        intentsCompared: expect.any(Number) as unknown,
        refundsCompared: expect.any(Number) as unknown,
        mended: expect.any(Array) as unknown,
      });
    } finally {
      await handle.delete().catch(() => undefined);
    }
  });
});
