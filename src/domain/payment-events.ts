// What a card processor tells about payments after the fact (its webhooks), as plain values a workflow can receive.
import type { Money } from './booking';

interface EventIdentity {
  /** The processor's event id: the same event delivered twice carries the same one. */
  eventId: string;
  /** The processor's event type as sent, e.g. `payment_intent.succeeded`. */
  type: string;
  /** When the processor made the event (seconds since the epoch): events may arrive out of this order. */
  createdAt: number;
  /** The booking the payment's metadata names, when it names one. */
  bookingId: string | undefined;
}

export type PaymentEvent =
  | (EventIdentity & { kind: 'intent_succeeded'; intentId: string; amount: Money })
  | (EventIdentity & { kind: 'intent_failed'; intentId: string; reason: string })
  | (EventIdentity & { kind: 'intent_canceled'; intentId: string })
  | (EventIdentity & { kind: 'intent_requires_action'; intentId: string })
  /**
   * From a refund's own event, its id and amount; from `charge.refunded`, no refund id and the charge's whole
   * refunded amount so far (`cumulative`).
   */
  | (EventIdentity & {
      kind: 'refund_succeeded';
      refundId: string | undefined;
      intentId: string | undefined;
      amount: Money;
      cumulative: boolean;
    })
  | (EventIdentity & {
      kind: 'refund_failed';
      refundId: string;
      intentId: string | undefined;
      amount: Money;
      reason: string;
    })
  | (EventIdentity & {
      kind: 'dispute_created';
      disputeId: string;
      intentId: string | undefined;
      amount: Money;
      reason: string;
    })
  /** A type nobody here acts on: answered as received, then left alone. */
  | (EventIdentity & { kind: 'ignored' });

export type PaymentEventKind = PaymentEvent['kind'];

/** The booking workflow's signal that carries a PaymentEvent, by name, for senders that load no workflow code. */
export const paymentEventSignalName = 'PaymentEvent';
