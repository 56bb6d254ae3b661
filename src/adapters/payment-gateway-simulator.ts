// A card-processor simulator behind the PaymentGateway port, with a real ledger in PostgreSQL (schema payment_simulator).
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
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Money } from '../domain/booking';
import {
  GatewayTimeoutError,
  GatewayUnavailableError,
  IdempotencyKeyConflictError,
  RefundRejectedError,
  type ChargeRequest,
  type ChargeResult,
  type PaymentGateway,
  type RefundRequest,
  type RefundResult,
} from '../ports/payment-gateway';

/** Where the simulator keeps its ledger; tests and operators read these tables to audit money movements. */
export const simulatorLedgerTables = {
  charges: 'payment_simulator.charges',
  refunds: 'payment_simulator.refunds',
  transientFailures: 'payment_simulator.transient_failures',
} as const;

type TransientFailure = 'TIMEOUT' | 'UNAVAILABLE';

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

/** A row of the simulator's ledger of charges (bigint amounts read as numbers by the pool's parser). */
export interface ChargeRow {
  id: string;
  transaction_id: string;
  idempotency_key: string;
  amount_minor: number;
  currency: string;
  payment_token: string;
  card_brand: string | null;
  card_last4: string | null;
  description: string;
  status: 'APPROVED' | 'DECLINED';
  decline_reason: string | null;
  refunded_minor: number;
}

interface RefundRow {
  refund_id: string;
  idempotency_key: string;
  charge_id: string;
  amount_minor: number;
  currency: string;
}

const UNIQUE_VIOLATION = '23505';

function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === UNIQUE_VIOLATION
  );
}

function generatedId(prefix: 'ch' | 're'): string {
  return `${prefix}_sim_${randomBytes(12).toString('hex')}`;
}

function assertValidAmount(amount: Money): void {
  if (!Number.isSafeInteger(amount.amountMinor) || amount.amountMinor <= 0) {
    throw new RangeError('amount must be a positive whole number of minor units');
  }
  if (!/^[A-Z]{3}$/.test(amount.currency)) throw new RangeError('currency must be an ISO 4217 code');
}

function assertIdempotencyKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
    throw new RangeError('idempotencyKey must be 1 to 255 characters');
  }
}

function chargeResult(row: ChargeRow): ChargeResult {
  if (row.status === 'DECLINED') return { status: 'declined', reason: row.decline_reason ?? 'declined' };
  return {
    status: 'approved',
    transactionId: row.transaction_id,
    methodMasked: `${row.card_brand} •••• ${row.card_last4}`,
  };
}

function sameChargeRequest(row: ChargeRow, request: ChargeRequest): boolean {
  return (
    row.amount_minor === request.amount.amountMinor &&
    row.currency === request.amount.currency &&
    row.payment_token === request.paymentToken
  );
}

export function createPaymentGatewaySimulator(database: Knex): PaymentGateway {
  const charges = () => database<ChargeRow>(simulatorLedgerTables.charges);

  /** True only for the first caller per key: the "fail once" tokens fail exactly that call. */
  async function firstAttempt(idempotencyKey: string, failure: TransientFailure): Promise<boolean> {
    const inserted = await database(simulatorLedgerTables.transientFailures)
      .insert({ idempotency_key: idempotencyKey, failure })
      .onConflict('idempotency_key')
      .ignore()
      .returning('idempotency_key');
    return inserted.length > 0;
  }

  function replay(row: ChargeRow, request: ChargeRequest): ChargeResult {
    if (!sameChargeRequest(row, request)) {
      throw new IdempotencyKeyConflictError('idempotency key already used for a different charge');
    }
    return chargeResult(row);
  }

  async function charge(request: ChargeRequest): Promise<ChargeResult> {
    assertIdempotencyKey(request.idempotencyKey);
    assertValidAmount(request.amount);
    const existing: ChargeRow | undefined = await charges()
      .where({ idempotency_key: request.idempotencyKey })
      .first();
    if (existing) return replay(existing, request);

    const behaviour = simulatorTestTokens[request.paymentToken] ?? unknownTokenBehaviour;
    if (
      behaviour.failsOnceWith === 'UNAVAILABLE' &&
      (await firstAttempt(request.idempotencyKey, 'UNAVAILABLE'))
    ) {
      throw new GatewayUnavailableError('payment gateway answered 503 Service Unavailable');
    }

    // ON CONFLICT DO NOTHING waits for a concurrent insert of the same key and then yields to it.
    const [inserted]: ChargeRow[] = await charges()
      .insert({
        transaction_id: generatedId('ch'),
        idempotency_key: request.idempotencyKey,
        amount_minor: request.amount.amountMinor,
        currency: request.amount.currency,
        payment_token: request.paymentToken,
        card_brand: behaviour.brand,
        card_last4: behaviour.last4,
        description: request.description,
        status: behaviour.declineReason === undefined ? 'APPROVED' : 'DECLINED',
        decline_reason: behaviour.declineReason ?? null,
      })
      .onConflict('idempotency_key')
      .ignore()
      .returning('*');
    if (!inserted) {
      const winner: ChargeRow | undefined = await charges()
        .where({ idempotency_key: request.idempotencyKey })
        .first();
      if (!winner) throw new GatewayUnavailableError('charge with this idempotency key is being processed');
      return replay(winner, request);
    }
    if (behaviour.failsOnceWith === 'TIMEOUT' && (await firstAttempt(request.idempotencyKey, 'TIMEOUT'))) {
      throw new GatewayTimeoutError('payment gateway did not answer in time');
    }
    return chargeResult(inserted);
  }

  async function refundInTransaction(
    transaction: Knex.Transaction,
    request: RefundRequest,
  ): Promise<RefundResult> {
    // Locking the charge first serialises every refund of it, including concurrent retries of one key.
    const chargeRow = await transaction<ChargeRow>(simulatorLedgerTables.charges)
      .where({ transaction_id: request.transactionId })
      .forUpdate()
      .first();
    if (!chargeRow) throw new RefundRejectedError('no charge with this transaction id');

    const existing = await transaction<RefundRow>(simulatorLedgerTables.refunds)
      .where({ idempotency_key: request.idempotencyKey })
      .first();
    if (existing) {
      const same =
        existing.charge_id === chargeRow.id &&
        existing.amount_minor === request.amount.amountMinor &&
        existing.currency === request.amount.currency;
      if (!same) throw new IdempotencyKeyConflictError('idempotency key already used for a different refund');
      return { refundId: existing.refund_id };
    }

    if (chargeRow.status !== 'APPROVED')
      throw new RefundRejectedError('a declined charge cannot be refunded');
    if (chargeRow.currency !== request.amount.currency) {
      throw new RefundRejectedError(`the charge was in ${chargeRow.currency}`);
    }
    const remaining = chargeRow.amount_minor - chargeRow.refunded_minor;
    if (request.amount.amountMinor > remaining) {
      throw new RefundRejectedError(
        `refund of ${request.amount.amountMinor} exceeds the ${remaining} left on the charge`,
      );
    }
    const refundId = generatedId('re');
    await transaction(simulatorLedgerTables.refunds).insert({
      refund_id: refundId,
      idempotency_key: request.idempotencyKey,
      charge_id: chargeRow.id,
      amount_minor: request.amount.amountMinor,
      currency: request.amount.currency,
    });
    await transaction(simulatorLedgerTables.charges)
      .where({ id: chargeRow.id })
      .increment('refunded_minor', request.amount.amountMinor);
    return { refundId };
  }

  async function refund(request: RefundRequest): Promise<RefundResult> {
    assertIdempotencyKey(request.idempotencyKey);
    assertValidAmount(request.amount);
    try {
      return await database.transaction((transaction) => refundInTransaction(transaction, request));
    } catch (error) {
      // One key used on two different charges at once: the loser's retry sees the winner's refund.
      if (isUniqueViolation(error)) {
        throw new GatewayUnavailableError('a refund with this idempotency key is being processed');
      }
      throw error;
    }
  }

  return { charge, refund };
}
