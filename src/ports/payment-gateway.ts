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
}

export type ChargeResult =
  | { status: 'approved'; transactionId: string; methodMasked: string }
  | { status: 'declined'; reason: string };

export interface RefundRequest {
  idempotencyKey: string;
  /** The approved charge to refund against. */
  transactionId: string;
  amount: Money;
}

export interface RefundResult {
  refundId: string;
}

export interface PaymentGateway {
  /** Approves or declines; throws GatewayUnavailableError (or its GatewayTimeoutError) when the outcome is unknown. */
  charge(request: ChargeRequest): Promise<ChargeResult>;
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
