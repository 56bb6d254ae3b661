// What the payment-event tests share: Stripe events signed as Stripe signs them, and the signals a workflow received.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import Stripe from 'stripe';
import type { PaymentEvent } from '../../src/domain/payment-events';
import { bookingWorkflowId } from '../../src/workflows/shared';

/** A signing secret of the suite's own, in Stripe's format. */
export function webhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64').replace(/[+/=]/g, 'x')}`;
}

export interface StripeEventOptions {
  id?: string;
  type: string;
  /** The event's object; `metadata.booking_id` names the booking. */
  object: Record<string, unknown>;
  /** Seconds since the epoch. */
  created?: number;
}

/** An event body as Stripe serialises it. */
export function stripeEventBody(options: StripeEventOptions): string {
  return JSON.stringify({
    id: options.id ?? `evt_test_${randomUUID().replace(/-/g, '')}`,
    object: 'event',
    api_version: '2017-08-15',
    created: options.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    type: options.type,
    data: { object: options.object },
  });
}

/** `Stripe-Signature` for the body, as Stripe makes it at `timestamp` (seconds; now by default). */
export function stripeSignature(body: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret,
    ...(timestamp === undefined ? {} : { timestamp }),
  });
}

export function intentObject(
  intentId: string,
  bookingId: string | undefined,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: intentId,
    object: 'payment_intent',
    amount: 2500,
    currency: 'eur',
    status: 'succeeded',
    metadata: bookingId === undefined ? {} : { booking_id: bookingId },
    ...overrides,
  };
}

/** The PaymentEvent signals the booking's workflow received, in the order Temporal recorded them. */
export async function paymentEventSignals(client: Client, bookingId: string): Promise<PaymentEvent[]> {
  const handle = client.workflow.getHandle(bookingWorkflowId(bookingId));
  // A signal that arrives while a workflow task runs is buffered, and reaches the history only when the task ends.
  const deadline = Date.now() + 10_000;
  while ((await handle.describe()).raw.pendingWorkflowTask && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const history = await handle.fetchHistory();
  const signals = (history.events ?? []).flatMap((event) => {
    const attributes = event.workflowExecutionSignaledEventAttributes;
    return attributes?.signalName === 'PaymentEvent' ? [attributes] : [];
  });
  return Promise.all(
    signals.map((attributes) =>
      decodeFromPayloadsAtIndex<PaymentEvent>(
        client.options.loadedDataConverter,
        0,
        attributes.input?.payloads,
      ),
    ),
  );
}
