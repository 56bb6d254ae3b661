// Stripe's webhooks in: the signature checked on the raw body by the SDK, the event turned into a PaymentEvent.
import Stripe from 'stripe';
import type { PaymentEvent } from '../domain/payment-events';

/** Stripe's own default and recommendation: an older signature is refused as a possible replay. */
export const webhookToleranceSeconds = 300;

/** The signature is missing, forged, made with another secret or too old: answer 400 and apply nothing. */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
}

export interface VerifyOptions {
  /** The clock a signature's age is measured on, in milliseconds since the epoch. */
  now?: () => number;
}

/**
 * The event, once its `Stripe-Signature` (`t=…,v1=…`, HMAC-SHA256 of `t.body`) matches `secret` and is at most
 * `webhookToleranceSeconds` old. The body must be the bytes as received: parsed and serialised again, it no longer
 * matches its signature.
 */
export function verifyStripeWebhook(
  rawBody: Buffer | string,
  signatureHeader: string | undefined,
  secret: string,
  options: VerifyOptions = {},
): Stripe.Event {
  if (signatureHeader === undefined || signatureHeader.trim() === '') {
    throw new WebhookSignatureError('no Stripe-Signature header');
  }
  try {
    return Stripe.webhooks.constructEvent(
      rawBody,
      signatureHeader,
      secret,
      webhookToleranceSeconds,
      undefined,
      options.now?.(),
    );
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw new WebhookSignatureError(error.message, { cause: error });
    }
    // A signed body that is not an event (not JSON, a thin v2 notification): no better than a forged one.
    throw new WebhookSignatureError(
      `not a Stripe event: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

type Fields = Record<string, unknown>;

function fields(value: unknown): Fields {
  return typeof value === 'object' && value !== null ? (value as Fields) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** An expandable field: an id, or the object carrying it. */
function idOf(value: unknown): string | undefined {
  return text(value) ?? text(fields(value).id);
}

function amountOf(object: Fields, field: string): { amountMinor: number; currency: string } {
  const amount = object[field];
  return {
    amountMinor: typeof amount === 'number' ? amount : 0,
    currency: (text(object.currency) ?? '').toUpperCase(),
  };
}

function bookingIdOf(object: Fields): string | undefined {
  return text(fields(object.metadata).booking_id);
}

/** Which of Stripe's events become which payment event; any other type is ignored. */
export function paymentEventOf(event: Stripe.Event): PaymentEvent {
  const object = fields(event.data.object);
  const identity = {
    eventId: event.id,
    type: event.type,
    createdAt: event.created,
    bookingId: bookingIdOf(object),
  };
  const objectId = text(object.id) ?? '';
  switch (event.type as string) {
    case 'payment_intent.succeeded':
      return {
        ...identity,
        kind: 'intent_succeeded',
        intentId: objectId,
        amount: amountOf(object, 'amount'),
      };
    case 'payment_intent.payment_failed': {
      const error = fields(object.last_payment_error);
      const reason = text(error.decline_code) ?? text(error.code) ?? 'declined';
      return { ...identity, kind: 'intent_failed', intentId: objectId, reason };
    }
    case 'payment_intent.canceled':
      return { ...identity, kind: 'intent_canceled', intentId: objectId };
    case 'payment_intent.requires_action':
      return { ...identity, kind: 'intent_requires_action', intentId: objectId };
    case 'charge.refunded':
      return {
        ...identity,
        kind: 'refund_succeeded',
        refundId: undefined,
        intentId: idOf(object.payment_intent),
        amount: amountOf(object, 'amount_refunded'),
        cumulative: true,
      };
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed': {
      const status = text(object.status);
      const refund = {
        refundId: objectId,
        intentId: idOf(object.payment_intent),
        amount: amountOf(object, 'amount'),
      };
      if (status === 'succeeded')
        return { ...identity, ...refund, kind: 'refund_succeeded', cumulative: false };
      if (status === 'failed' || status === 'canceled') {
        return {
          ...identity,
          ...refund,
          kind: 'refund_failed',
          reason: text(object.failure_reason) ?? status,
        };
      }
      // Pending or awaiting the customer: its end comes in a later event.
      return { ...identity, kind: 'ignored' };
    }
    case 'charge.dispute.created':
      return {
        ...identity,
        kind: 'dispute_created',
        disputeId: objectId,
        intentId: idOf(object.payment_intent),
        amount: amountOf(object, 'amount'),
        reason: text(object.reason) ?? 'unknown',
      };
    default:
      return { ...identity, kind: 'ignored' };
  }
}

/** Verification and mapping in one: what a webhook endpoint needs from a request's raw body and its header. */
export function stripeWebhookEvent(
  rawBody: Buffer | string,
  signatureHeader: string | undefined,
  secret: string,
  options: VerifyOptions = {},
): PaymentEvent {
  return paymentEventOf(verifyStripeWebhook(rawBody, signatureHeader, secret, options));
}
