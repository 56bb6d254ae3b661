// Stripe's webhooks: verified on the raw body, recorded once by event id, then sent to the booking's workflow.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { markPaymentEventApplied, recordPaymentEvent, releasePaymentEventClaim } from '../db/payment-events';
import { validationFailed, type DomainError } from '../domain/errors';
import type { PaymentEvent } from '../domain/payment-events';
import type { WebhookMetrics } from '../observability/payment-metrics';
import {
  createPaymentEventIntake,
  type IntakeOutcome,
  type PaymentEventIntake,
} from '../payments/payment-event-intake';
import { paymentEventOf, verifyStripeWebhook, WebhookSignatureError } from '../payments/stripe-webhooks';
import { bookingWorkflowId, paymentEventSignal } from '../workflows/shared';
import { isWorkflowGone } from './temporal-outcomes';

export interface PaymentWebhookReceipt {
  eventId: string;
  outcome: IntakeOutcome;
}

export interface PaymentWebhookApplication {
  /**
   * Verifies, records and applies one delivery. Throws VALIDATION_FAILED (naming `Stripe-Signature`) for a body
   * whose signature does not hold, before anything is recorded; any other error leaves the event for the next
   * delivery.
   */
  receiveStripeEvent(
    rawBody: Buffer,
    signature: string | undefined,
    checkEvent?: (event: unknown) => void,
  ): Promise<PaymentWebhookReceipt>;
}

export interface PaymentWebhookDependencies {
  database: Knex;
  temporal: Client;
  /** STRIPE_WEBHOOK_SECRET; without it no delivery can be verified, so every one is refused. */
  webhookSecret: string | undefined;
  metrics: WebhookMetrics;
  logger: { warn(details: object, message: string): void };
  /** The clock signatures' age is measured on; the system's by default. */
  now?: () => number;
}

/** Our own words for each refusal: the SDK's can quote the body, which is not ours to echo. */
function signatureProblem(error: WebhookSignatureError): DomainError {
  const message = error.message.startsWith('no Stripe-Signature')
    ? 'is required'
    : error.message.startsWith('STRIPE_WEBHOOK_SECRET')
      ? 'cannot be verified: this service has no webhook signing secret (STRIPE_WEBHOOK_SECRET)'
      : /tolerance/i.test(error.message)
        ? 'is older than the 300 s tolerance: a replay, or a clock far off'
        : error.message.startsWith('not a Stripe event')
          ? 'covers a body that is not a Stripe event'
          : 'does not match the body with the endpoint signing secret';
  return validationFailed([{ field: 'Stripe-Signature', message }]);
}

/** The intake's delivery through a Temporal client: the booking's workflow gets the event as a signal. */
export function signalBookingWorkflow(
  temporal: Client,
): (event: PaymentEvent & { bookingId: string }) => Promise<'applied' | 'no_workflow'> {
  return async (event) => {
    try {
      await temporal.workflow.getHandle(bookingWorkflowId(event.bookingId)).signal(paymentEventSignal, event);
      return 'applied';
    } catch (error) {
      if (isWorkflowGone(error)) return 'no_workflow';
      throw error;
    }
  };
}

export function createPaymentWebhookApplication(
  dependencies: PaymentWebhookDependencies,
): PaymentWebhookApplication {
  const { database, metrics, logger } = dependencies;
  const intake: PaymentEventIntake = createPaymentEventIntake({
    record: (event, source) => recordPaymentEvent(database, event, source),
    settle: (eventId, outcome) => markPaymentEventApplied(database, eventId, outcome),
    release: (eventId) => releasePaymentEventClaim(database, eventId),
    deliver: signalBookingWorkflow(dependencies.temporal),
    count: (source, kind, outcome) => metrics.events.inc({ source, kind, outcome }),
    warn: (details, message) => logger.warn(details, message),
  });

  return {
    async receiveStripeEvent(rawBody, signature, checkEvent) {
      let event: PaymentEvent;
      try {
        if (dependencies.webhookSecret === undefined) {
          throw new WebhookSignatureError('STRIPE_WEBHOOK_SECRET is not set: nothing can be verified');
        }
        const verified = verifyStripeWebhook(rawBody, signature, dependencies.webhookSecret, {
          ...(dependencies.now === undefined ? {} : { now: dependencies.now }),
        });
        // Only once it is known to be Stripe's: its shape, as the document states it, before anything is kept.
        checkEvent?.(verified);
        event = paymentEventOf(verified);
      } catch (error) {
        if (!(error instanceof WebhookSignatureError)) throw error;
        metrics.webhookRefusals.inc({ reason: 'signature' });
        logger.warn({ reason: error.message }, 'a webhook delivery was refused: its signature does not hold');
        throw signatureProblem(error);
      }
      return { eventId: event.eventId, outcome: await intake(event, 'webhook') };
    },
  };
}
