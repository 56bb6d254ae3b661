// Stripe webhook verification (forged, stale, wrong secret refused) and each event type's payment event.
import Stripe from 'stripe';
import {
  WebhookSignatureError,
  stripeWebhookEvent,
  webhookToleranceSeconds,
} from '../../../src/payments/stripe-webhooks';

const secret = 'whsec_unitTestSecret0123456789';
const now = 1_800_000_000;
const clock = () => now * 1000;

function event(type: string, object: Record<string, unknown>, id = 'evt_1'): string {
  return JSON.stringify({
    id,
    object: 'event',
    type,
    created: now - 5,
    api_version: '2017-08-15',
    livemode: false,
    data: { object },
  });
}

function signed(payload: string, options: { timestamp?: number; secret?: string } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? secret,
    timestamp: options.timestamp ?? now,
  });
}

function received(payload: string, header = signed(payload)) {
  return stripeWebhookEvent(Buffer.from(payload, 'utf8'), header, secret, { now: clock });
}

const intent = {
  id: 'pi_123',
  object: 'payment_intent',
  amount: 2590,
  currency: 'eur',
  metadata: { booking_id: 'booking-1', idempotency_key: 'key-1' },
};
const identity = (type: string) => ({ eventId: 'evt_1', type, createdAt: now - 5 });

describe('Stripe webhook verification', () => {
  const payload = event('payment_intent.succeeded', intent);

  it('accepts the raw body with its signature', () => {
    expect(received(payload).kind).toBe('intent_succeeded');
  });

  it('refuses a forged signature', () => {
    const header = `t=${now},v1=${'0'.repeat(64)}`;
    expect(() => received(payload, header)).toThrow(WebhookSignatureError);
  });

  it('refuses a body changed after signing', () => {
    const header = signed(payload);
    const altered = payload.replace('2590', '1');
    expect(() => received(altered, header)).toThrow(WebhookSignatureError);
  });

  it('refuses a signature made with another secret', () => {
    expect(() => received(payload, signed(payload, { secret: 'whsec_someoneElse' }))).toThrow(
      WebhookSignatureError,
    );
  });

  it(`refuses a signature older than ${webhookToleranceSeconds} seconds, and takes one just within`, () => {
    const stale = signed(payload, { timestamp: now - webhookToleranceSeconds - 1 });
    expect(() => received(payload, stale)).toThrow(/Timestamp outside the tolerance zone/);
    const justWithin = signed(payload, { timestamp: now - webhookToleranceSeconds });
    expect(received(payload, justWithin).kind).toBe('intent_succeeded');
  });

  it('refuses a request without the header, or with one that is not a signature', () => {
    expect(() => stripeWebhookEvent(payload, undefined, secret, { now: clock })).toThrow(
      WebhookSignatureError,
    );
    expect(() => received(payload, 'nonsense')).toThrow(WebhookSignatureError);
  });

  it('refuses a signed body that is not JSON', () => {
    expect(() => received('not json')).toThrow(WebhookSignatureError);
  });
});

describe('Stripe events as payment events', () => {
  it('maps payment_intent.succeeded with its amount and booking', () => {
    expect(received(event('payment_intent.succeeded', intent))).toEqual({
      ...identity('payment_intent.succeeded'),
      kind: 'intent_succeeded',
      bookingId: 'booking-1',
      intentId: 'pi_123',
      amount: { amountMinor: 2590, currency: 'EUR' },
    });
  });

  it('maps payment_intent.payment_failed with the decline reason', () => {
    const failed = {
      ...intent,
      last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' },
    };
    expect(received(event('payment_intent.payment_failed', failed))).toEqual({
      ...identity('payment_intent.payment_failed'),
      kind: 'intent_failed',
      bookingId: 'booking-1',
      intentId: 'pi_123',
      reason: 'insufficient_funds',
    });
  });

  it('maps payment_intent.canceled and payment_intent.requires_action', () => {
    expect(received(event('payment_intent.canceled', intent))).toEqual({
      ...identity('payment_intent.canceled'),
      kind: 'intent_canceled',
      bookingId: 'booking-1',
      intentId: 'pi_123',
    });
    expect(received(event('payment_intent.requires_action', intent))).toEqual({
      ...identity('payment_intent.requires_action'),
      kind: 'intent_requires_action',
      bookingId: 'booking-1',
      intentId: 'pi_123',
    });
  });

  it("maps charge.refunded to the charge's refunded total", () => {
    const charge = {
      id: 'ch_1',
      object: 'charge',
      payment_intent: 'pi_123',
      amount: 2590,
      amount_refunded: 1000,
      currency: 'eur',
      metadata: { booking_id: 'booking-1' },
    };
    expect(received(event('charge.refunded', charge))).toEqual({
      ...identity('charge.refunded'),
      kind: 'refund_succeeded',
      bookingId: 'booking-1',
      refundId: undefined,
      intentId: 'pi_123',
      amount: { amountMinor: 1000, currency: 'EUR' },
      cumulative: true,
    });
  });

  it('maps refund.updated by the refund status: succeeded, failed, or still pending (ignored)', () => {
    const refund = {
      id: 're_1',
      object: 'refund',
      payment_intent: 'pi_123',
      amount: 500,
      currency: 'eur',
      metadata: { booking_id: 'booking-1' },
    };
    expect(received(event('refund.updated', { ...refund, status: 'succeeded' }))).toEqual({
      ...identity('refund.updated'),
      kind: 'refund_succeeded',
      bookingId: 'booking-1',
      refundId: 're_1',
      intentId: 'pi_123',
      amount: { amountMinor: 500, currency: 'EUR' },
      cumulative: false,
    });
    expect(
      received(
        event('refund.updated', { ...refund, status: 'failed', failure_reason: 'expired_or_canceled_card' }),
      ),
    ).toEqual({
      ...identity('refund.updated'),
      kind: 'refund_failed',
      bookingId: 'booking-1',
      refundId: 're_1',
      intentId: 'pi_123',
      amount: { amountMinor: 500, currency: 'EUR' },
      reason: 'expired_or_canceled_card',
    });
    expect(received(event('refund.updated', { ...refund, status: 'pending' }))).toEqual({
      ...identity('refund.updated'),
      kind: 'ignored',
      bookingId: 'booking-1',
    });
  });

  it('maps charge.dispute.created with its intent, amount and reason', () => {
    const dispute = {
      id: 'dp_1',
      object: 'dispute',
      charge: 'ch_1',
      payment_intent: 'pi_123',
      amount: 2590,
      currency: 'eur',
      reason: 'fraudulent',
      metadata: {},
    };
    expect(received(event('charge.dispute.created', dispute))).toEqual({
      ...identity('charge.dispute.created'),
      kind: 'dispute_created',
      bookingId: undefined,
      disputeId: 'dp_1',
      intentId: 'pi_123',
      amount: { amountMinor: 2590, currency: 'EUR' },
      reason: 'fraudulent',
    });
  });

  it('ignores a type it does not act on, once verified', () => {
    expect(received(event('customer.created', { id: 'cus_1', object: 'customer', metadata: {} }))).toEqual({
      ...identity('customer.created'),
      kind: 'ignored',
      bookingId: undefined,
    });
  });
});
