// The payment-gateway port: what the payment activities need from a card processor (simulator, Stripe, Adyen).
import type { Money } from '../domain/booking';

/**
 * A charge. The idempotency key is the deduplication key a real processor offers (Stripe's `Idempotency-Key`,
 * Adyen's `idempotency-key`): a repeated call with the same key returns the first outcome and never takes
 * money twice.
 *
 * The simulator (src/adapters/payment-gateway-simulator.ts) accepts these test tokens:
 * - `tok_visa` approves, masked `visa •••• 4242`
 * - `tok_mastercard` approves, masked `mastercard •••• 4444`
 * - `tok_chargeDeclined` declines with `card_declined`
 * - `tok_insufficientFunds` declines with `insufficient_funds`
 * - `tok_timeoutOnce` approves, but the first attempt per idempotency key loses its response (GatewayTimeoutError)
 * - `tok_unavailableOnce` answers the first attempt per idempotency key with a 503 (GatewayUnavailableError)
 * - any other token declines with `invalid_token`
 */
export interface ChargeRequest {
  idempotencyKey: string;
  amount: Money;
  /** A token from the gateway's client-side tokenisation; card numbers never reach this service. */
  paymentToken: string;
  /** Shown on the customer's statement and in the gateway's dashboard; no personal data. */
  description: string;
  /** Kept with the processor's record of the payment (Stripe: the intent's metadata), so its events name it. */
  bookingId?: string;
  /**
   * The caller can hand the customer a challenge (3-D Secure) and wait for its outcome: the charge may then answer
   * `requires_action` or `processing`. Without it a payment that cannot finish at once is declined
   * (`authentication_required`), so a caller that only knows approved and declined never sees an open one.
   */
  allowAction?: boolean;
}

/** What the customer's client needs to finish an open payment: Stripe.js's `handleNextAction(clientSecret)`. */
export interface PaymentNextAction {
  /** The processor's kind of step, e.g. Stripe's `use_stripe_sdk` or `redirect_to_url`. */
  type: string;
  /** Where a redirect step sends the customer, when it is one. */
  redirectUrl?: string;
}

/** A payment the customer must still act on (a 3-D Secure challenge); its outcome comes later. */
export interface PaymentRequiresAction {
  status: 'requires_action';
  intentId: string;
  /** Lets the customer's client confirm the intent; never logged, never stored beyond the answer to the customer. */
  clientSecret: string;
  nextAction: PaymentNextAction;
}

/** The processor has the customer's confirmation and has not yet said approved or declined. */
export interface PaymentProcessing {
  status: 'processing';
  intentId: string;
}

export type ChargeResult =
  | { status: 'approved'; transactionId: string; methodMasked: string }
  | { status: 'declined'; reason: string };

/** A charge's answer when the request opted in with `allowAction`. */
export type OpenChargeResult = ChargeResult | PaymentRequiresAction | PaymentProcessing;

/** Approved or declined, or also open for a request that opted in with `allowAction: true`. */
export type ChargeAnswer<Request extends ChargeRequest> = Request extends { allowAction: true }
  ? OpenChargeResult
  : ChargeResult;

/** Where one payment attempt stands at the processor, as `paymentIntent` and `cancelPayment` answer it. */
export type PaymentState =
  ChargeResult | PaymentRequiresAction | PaymentProcessing | { status: 'canceled'; intentId: string };

export interface RefundRequest {
  idempotencyKey: string;
  /** The approved charge to refund against. */
  transactionId: string;
  amount: Money;
}

export interface RefundResult {
  refundId: string;
}

/** One payment attempt as the processor lists it, for comparing with what the service recorded. */
export interface ProcessorIntent {
  intentId: string;
  /** The booking its metadata names, when it names one. */
  bookingId: string | undefined;
  /** The charge request's idempotency key, when the processor kept it: the ledger's payments are keyed by it. */
  idempotencyKey: string | undefined;
  /** Ended (`succeeded`, `failed`: the attempt was refused, `canceled`) or still `open`. */
  status: 'succeeded' | 'failed' | 'canceled' | 'open';
  amount: Money;
  /** Why it failed, when it did. */
  failureReason?: string;
  /** When it was made, in seconds since the epoch. */
  createdAt: number;
}

/** One refund as the processor lists it. */
export interface ProcessorRefund {
  refundId: string;
  intentId: string | undefined;
  bookingId: string | undefined;
  status: 'succeeded' | 'failed' | 'pending';
  amount: Money;
  failureReason?: string;
  createdAt: number;
}

/** What the processor made since a moment: the reconciliation's view of the processor's side. */
export interface RecentPayments {
  intents: ProcessorIntent[];
  refunds: ProcessorRefund[];
}

export interface PaymentGateway {
  /** Approves or declines; throws GatewayUnavailableError (or its GatewayTimeoutError) when the outcome is unknown. */
  charge<Request extends ChargeRequest>(request: Request): Promise<ChargeAnswer<Request>>;
  /**
   * What an earlier charge with this key came to, without charging: undefined when none was made with it. Throws
   * GatewayUnavailableError when the processor cannot say.
   */
  chargeMadeWith(idempotencyKey: string): Promise<ChargeResult | undefined>;
  /**
   * Refunds part or all of a charge. Throws RefundRejectedError when the refund can never succeed (unknown or
   * declined charge, another currency, more than is left to refund), GatewayUnavailableError when it may succeed
   * later. Both methods throw IdempotencyKeyConflictError for a key reused with a different request.
   */
  refund(request: RefundRequest): Promise<RefundResult>;
  /**
   * The current state of one payment attempt, by the id an open answer carried (or an approved one's transaction
   * id). Throws PaymentNotFoundError for an id the processor does not know, GatewayUnavailableError when it cannot say.
   */
  paymentIntent(intentId: string): Promise<PaymentState>;
  /**
   * Cancels an open payment so it can no longer take money, and answers where it ended: `canceled`, or `approved`
   * when the customer finished it first (money that arrived late: the caller must keep the booking or refund it),
   * `declined` when it failed first, `processing` when it can no longer be cancelled and has not ended yet.
   * Cancelling twice answers `canceled` again. Throws PaymentNotFoundError for an unknown id.
   */
  cancelPayment(intentId: string, idempotencyKey: string): Promise<PaymentState>;
  /**
   * The payment attempts and refunds made at or after `since`, as the processor sees them now. Throws
   * GatewayUnavailableError when it cannot say.
   */
  recentPayments(since: Date): Promise<RecentPayments>;
}

/** The processor knows no payment with this id: a caller bug or another account's id, never retried. */
export class PaymentNotFoundError extends Error {
  override name = 'PaymentNotFoundError';
}

/** The gateway could not be reached or did not answer: retrying with the same idempotency key is safe. */
export class GatewayUnavailableError extends Error {
  override name = 'GatewayUnavailableError';
}

/** The request may have been processed, but the answer never came back; the same key tells on retry. */
export class GatewayTimeoutError extends GatewayUnavailableError {
  override name = 'GatewayTimeoutError';
}

/** A refund that no retry can make succeed. */
export class RefundRejectedError extends Error {
  override name = 'RefundRejectedError';
}

/** The same idempotency key was sent with a different request: a caller bug, never retried. */
export class IdempotencyKeyConflictError extends Error {
  override name = 'IdempotencyKeyConflictError';
}

/** What every adapter checks of a request before it reaches a processor: a caller's bug, never retried. */
export function assertValidAmount(amount: Money): void {
  if (!Number.isSafeInteger(amount.amountMinor) || amount.amountMinor <= 0) {
    throw new RangeError('amount must be a positive whole number of minor units');
  }
  if (!/^[A-Z]{3}$/.test(amount.currency)) throw new RangeError('currency must be an ISO 4217 code');
}

export function assertIdempotencyKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
    throw new RangeError('idempotencyKey must be 1 to 255 characters');
  }
}
