// A card-processor simulator behind the PaymentGateway port, its ledger behind the ledger port (PostgreSQL in db/).
//
// Test tokens (the same list is in src/ports/payment-gateway.ts and the README):
//   tok_visa              approves, masked `visa •••• 4242`
//   tok_mastercard        approves, masked `mastercard •••• 4444`
//   tok_chargeDeclined    declines: card_declined
//   tok_insufficientFunds declines: insufficient_funds
//   tok_timeoutOnce       the first attempt per idempotency key takes the money but loses the answer
//                         (GatewayTimeoutError); the retry returns that same charge, approved `visa •••• 4242`
//   tok_unavailableOnce   the first attempt per idempotency key answers 503 before charging
//                         (GatewayUnavailableError); the retry approves, `visa •••• 4242`
//   anything else         declines: invalid_token
//
// Its charges end at once, so none is ever left open: `allowAction` changes nothing, `paymentIntent` answers the
// charge's outcome by its transaction id, and `cancelPayment` finds nothing to cancel and answers that outcome too.
import { randomBytes } from 'node:crypto';
import {
  assertIdempotencyKey,
  assertValidAmount,
  GatewayTimeoutError,
  GatewayUnavailableError,
  IdempotencyKeyConflictError,
  PaymentNotFoundError,
  RefundRejectedError,
  type ChargeRequest,
  type ChargeResult,
  type PaymentGateway,
  type PaymentState,
  type RecentPayments,
  type RefundRequest,
  type RefundResult,
} from '../ports/payment-gateway';
import type {
  LedgerCharge,
  LedgerRefund,
  PaymentSimulatorLedger,
  RefundDecision,
  TransientFailure,
} from '../ports/payment-simulator-ledger';

interface TokenBehaviour {
  readonly brand: string | null;
  readonly last4: string | null;
  readonly declineReason?: string;
  readonly failsOnceWith?: TransientFailure;
}

export const simulatorTestTokens: Readonly<Record<string, TokenBehaviour>> = {
  tok_visa: { brand: 'visa', last4: '4242' },
  tok_mastercard: { brand: 'mastercard', last4: '4444' },
  tok_chargeDeclined: { brand: 'visa', last4: '0002', declineReason: 'card_declined' },
  tok_insufficientFunds: { brand: 'visa', last4: '9995', declineReason: 'insufficient_funds' },
  tok_timeoutOnce: { brand: 'visa', last4: '4242', failsOnceWith: 'TIMEOUT' },
  tok_unavailableOnce: { brand: 'visa', last4: '4242', failsOnceWith: 'UNAVAILABLE' },
};

const unknownTokenBehaviour: TokenBehaviour = { brand: null, last4: null, declineReason: 'invalid_token' };

/** The activities' keys are `<booking id>:<step>:<n>`; the simulator keeps no booking id of its own. */
function bookingIdOfKey(idempotencyKey: string): string | undefined {
  const prefix = idempotencyKey.split(':', 1)[0];
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(prefix) ? prefix : undefined;
}

function generatedId(prefix: 'ch' | 're'): string {
  return `${prefix}_sim_${randomBytes(12).toString('hex')}`;
}

function chargeResult(charge: LedgerCharge): ChargeResult {
  if (charge.status === 'DECLINED') return { status: 'declined', reason: charge.declineReason ?? 'declined' };
  return {
    status: 'approved',
    transactionId: charge.transactionId,
    methodMasked: `${charge.cardBrand} •••• ${charge.cardLast4}`,
  };
}

function sameChargeRequest(charge: LedgerCharge, request: ChargeRequest): boolean {
  return (
    charge.amountMinor === request.amount.amountMinor &&
    charge.currency === request.amount.currency &&
    charge.paymentToken === request.paymentToken
  );
}

function replay(charge: LedgerCharge, request: ChargeRequest): ChargeResult {
  if (!sameChargeRequest(charge, request)) {
    throw new IdempotencyKeyConflictError('idempotency key already used for a different charge');
  }
  return chargeResult(charge);
}

/** The processor's refund rules, for the charge as locked and the key's earlier refund, if any. */
function refundDecision(
  request: RefundRequest,
  charge: LedgerCharge,
  existing: LedgerRefund | undefined,
): RefundDecision {
  if (existing) {
    const same =
      existing.chargeId === charge.id &&
      existing.amountMinor === request.amount.amountMinor &&
      existing.currency === request.amount.currency;
    if (!same) throw new IdempotencyKeyConflictError('idempotency key already used for a different refund');
    return { replay: existing.refundId };
  }
  if (charge.status !== 'APPROVED') throw new RefundRejectedError('a declined charge cannot be refunded');
  if (charge.currency !== request.amount.currency) {
    throw new RefundRejectedError(`the charge was in ${charge.currency}`);
  }
  const remaining = charge.amountMinor - charge.refundedMinor;
  if (request.amount.amountMinor > remaining) {
    throw new RefundRejectedError(
      `refund of ${request.amount.amountMinor} exceeds the ${remaining} left on the charge`,
    );
  }
  return {
    record: {
      refundId: generatedId('re'),
      amountMinor: request.amount.amountMinor,
      currency: request.amount.currency,
    },
  };
}

export function createPaymentGatewaySimulator(ledger: PaymentSimulatorLedger): PaymentGateway {
  async function chargeMadeWith(idempotencyKey: string): Promise<ChargeResult | undefined> {
    assertIdempotencyKey(idempotencyKey);
    const existing = await ledger.chargeByKey(idempotencyKey);
    return existing === undefined ? undefined : chargeResult(existing);
  }

  async function charge(request: ChargeRequest): Promise<ChargeResult> {
    assertIdempotencyKey(request.idempotencyKey);
    assertValidAmount(request.amount);
    const existing = await ledger.chargeByKey(request.idempotencyKey);
    if (existing) return replay(existing, request);

    const behaviour = simulatorTestTokens[request.paymentToken] ?? unknownTokenBehaviour;
    // The "fail once" tokens fail exactly the first call per key.
    if (
      behaviour.failsOnceWith === 'UNAVAILABLE' &&
      (await ledger.noteTransientFailure(request.idempotencyKey, 'UNAVAILABLE'))
    ) {
      throw new GatewayUnavailableError('payment gateway answered 503 Service Unavailable');
    }

    const inserted = await ledger.recordCharge({
      transactionId: generatedId('ch'),
      idempotencyKey: request.idempotencyKey,
      amountMinor: request.amount.amountMinor,
      currency: request.amount.currency,
      paymentToken: request.paymentToken,
      cardBrand: behaviour.brand,
      cardLast4: behaviour.last4,
      description: request.description,
      status: behaviour.declineReason === undefined ? 'APPROVED' : 'DECLINED',
      declineReason: behaviour.declineReason ?? null,
    });
    if (!inserted) {
      const winner = await ledger.chargeByKey(request.idempotencyKey);
      if (!winner) throw new GatewayUnavailableError('charge with this idempotency key is being processed');
      return replay(winner, request);
    }
    if (
      behaviour.failsOnceWith === 'TIMEOUT' &&
      (await ledger.noteTransientFailure(request.idempotencyKey, 'TIMEOUT'))
    ) {
      throw new GatewayTimeoutError('payment gateway did not answer in time');
    }
    return chargeResult(inserted);
  }

  async function refund(request: RefundRequest): Promise<RefundResult> {
    assertIdempotencyKey(request.idempotencyKey);
    assertValidAmount(request.amount);
    const refunded = await ledger.refund(request, (charge, existing) =>
      refundDecision(request, charge, existing),
    );
    if (refunded.outcome === 'no-charge') throw new RefundRejectedError('no charge with this transaction id');
    // One key used on two different charges at once: the loser's retry sees the winner's refund.
    if (refunded.outcome === 'key-taken') {
      throw new GatewayUnavailableError('a refund with this idempotency key is being processed');
    }
    return { refundId: refunded.refundId };
  }

  async function paymentIntent(intentId: string): Promise<PaymentState> {
    const found = await ledger.chargeByTransactionId(intentId);
    if (found === undefined) throw new PaymentNotFoundError(`no charge with transaction id ${intentId}`);
    return chargeResult(found);
  }

  async function cancelPayment(intentId: string, idempotencyKey: string): Promise<PaymentState> {
    assertIdempotencyKey(idempotencyKey);
    return paymentIntent(intentId);
  }

  /** Every simulated charge ends at once and every refund succeeds; keys begin with the booking id. */
  async function recentPayments(since: Date): Promise<RecentPayments> {
    const activity = await ledger.activitySince(since);
    return {
      intents: activity.charges.map((charge) => ({
        intentId: charge.transactionId,
        bookingId: bookingIdOfKey(charge.idempotencyKey),
        idempotencyKey: charge.idempotencyKey,
        status: charge.status === 'APPROVED' ? 'succeeded' : 'failed',
        amount: { amountMinor: charge.amountMinor, currency: charge.currency },
        ...(charge.declineReason === null ? {} : { failureReason: charge.declineReason }),
        createdAt: Math.floor(charge.createdAt.getTime() / 1000),
      })),
      refunds: activity.refunds.map((refund) => ({
        refundId: refund.refundId,
        intentId: refund.transactionId,
        bookingId: bookingIdOfKey(refund.idempotencyKey),
        status: 'succeeded',
        amount: { amountMinor: refund.amountMinor, currency: refund.currency },
        createdAt: Math.floor(refund.createdAt.getTime() / 1000),
      })),
    };
  }

  return { charge, chargeMadeWith, refund, paymentIntent, cancelPayment, recentPayments };
}
