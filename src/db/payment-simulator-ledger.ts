// The payment simulator's ledger in PostgreSQL (schema payment_simulator), behind the simulator's ledger port.
import type { Knex } from 'knex';
import type {
  LedgerActivity,
  LedgerCharge,
  LedgerRefund,
  LedgerRefundOutcome,
  NewLedgerCharge,
  PaymentSimulatorLedger,
  RefundDecision,
  TransientFailure,
} from '../ports/payment-simulator-ledger';
import { isPostgresError, postgresErrorCodes } from './postgres-errors';

/** Where the simulator keeps its ledger; tests and operators read these tables to audit money movements. */
export const simulatorLedgerTables = {
  charges: 'payment_simulator.charges',
  refunds: 'payment_simulator.refunds',
  transientFailures: 'payment_simulator.transient_failures',
} as const;

/** A row of the ledger's charges (bigint amounts read as numbers by the pool's parser). */
export interface LedgerChargeRow {
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

interface LedgerRefundRow {
  refund_id: string;
  idempotency_key: string;
  charge_id: string;
  amount_minor: number;
  currency: string;
}

function chargeOf(row: LedgerChargeRow): LedgerCharge {
  return {
    id: row.id,
    transactionId: row.transaction_id,
    idempotencyKey: row.idempotency_key,
    amountMinor: row.amount_minor,
    currency: row.currency,
    paymentToken: row.payment_token,
    cardBrand: row.card_brand,
    cardLast4: row.card_last4,
    description: row.description,
    status: row.status,
    declineReason: row.decline_reason,
    refundedMinor: row.refunded_minor,
  };
}

function refundOf(row: LedgerRefundRow): LedgerRefund {
  return {
    refundId: row.refund_id,
    idempotencyKey: row.idempotency_key,
    chargeId: row.charge_id,
    amountMinor: row.amount_minor,
    currency: row.currency,
  };
}

export function createPaymentSimulatorLedger(database: Knex): PaymentSimulatorLedger {
  const charges = () => database<LedgerChargeRow>(simulatorLedgerTables.charges);

  async function chargeByKey(idempotencyKey: string): Promise<LedgerCharge | undefined> {
    const row: LedgerChargeRow | undefined = await charges()
      .where({ idempotency_key: idempotencyKey })
      .first();
    return row === undefined ? undefined : chargeOf(row);
  }

  async function chargeByTransactionId(transactionId: string): Promise<LedgerCharge | undefined> {
    const row: LedgerChargeRow | undefined = await charges().where({ transaction_id: transactionId }).first();
    return row === undefined ? undefined : chargeOf(row);
  }

  async function recordCharge(charge: NewLedgerCharge): Promise<LedgerCharge | undefined> {
    // ON CONFLICT DO NOTHING waits for a concurrent insert of the same key and then yields to it.
    const [inserted]: LedgerChargeRow[] = await charges()
      .insert({
        transaction_id: charge.transactionId,
        idempotency_key: charge.idempotencyKey,
        amount_minor: charge.amountMinor,
        currency: charge.currency,
        payment_token: charge.paymentToken,
        card_brand: charge.cardBrand,
        card_last4: charge.cardLast4,
        description: charge.description,
        status: charge.status,
        decline_reason: charge.declineReason,
      })
      .onConflict('idempotency_key')
      .ignore()
      .returning('*');
    return inserted === undefined ? undefined : chargeOf(inserted);
  }

  async function noteTransientFailure(idempotencyKey: string, failure: TransientFailure): Promise<boolean> {
    const inserted = await database(simulatorLedgerTables.transientFailures)
      .insert({ idempotency_key: idempotencyKey, failure })
      .onConflict('idempotency_key')
      .ignore()
      .returning('idempotency_key');
    return inserted.length > 0;
  }

  async function refundInTransaction(
    transaction: Knex.Transaction,
    request: { transactionId: string; idempotencyKey: string },
    decide: (charge: LedgerCharge, existing: LedgerRefund | undefined) => RefundDecision,
  ): Promise<LedgerRefundOutcome> {
    const chargeRow = await transaction<LedgerChargeRow>(simulatorLedgerTables.charges)
      .where({ transaction_id: request.transactionId })
      .forUpdate()
      .first();
    if (!chargeRow) return { outcome: 'no-charge' };
    const existing = await transaction<LedgerRefundRow>(simulatorLedgerTables.refunds)
      .where({ idempotency_key: request.idempotencyKey })
      .first();
    const decision = decide(chargeOf(chargeRow), existing === undefined ? undefined : refundOf(existing));
    if ('replay' in decision) return { outcome: 'refunded', refundId: decision.replay };
    const { refundId, amountMinor, currency } = decision.record;
    await transaction(simulatorLedgerTables.refunds).insert({
      refund_id: refundId,
      idempotency_key: request.idempotencyKey,
      charge_id: chargeRow.id,
      amount_minor: amountMinor,
      currency,
    });
    await transaction(simulatorLedgerTables.charges)
      .where({ id: chargeRow.id })
      .increment('refunded_minor', amountMinor);
    return { outcome: 'refunded', refundId };
  }

  async function refund(
    request: { transactionId: string; idempotencyKey: string },
    decide: (charge: LedgerCharge, existing: LedgerRefund | undefined) => RefundDecision,
  ): Promise<LedgerRefundOutcome> {
    try {
      return await database.transaction((transaction) => refundInTransaction(transaction, request, decide));
    } catch (error) {
      if (isPostgresError(error, postgresErrorCodes.uniqueViolation)) return { outcome: 'key-taken' };
      throw error;
    }
  }

  async function activitySince(since: Date): Promise<LedgerActivity> {
    const [chargeRows, refundRows] = await Promise.all([
      charges()
        .where('created_at', '>=', since)
        .orderBy('created_at')
        .select<(LedgerChargeRow & { created_at: Date })[]>('*'),
      database<LedgerRefundRow>(`${simulatorLedgerTables.refunds} as refunds`)
        .join(`${simulatorLedgerTables.charges} as charges`, 'charges.id', 'refunds.charge_id')
        .where('refunds.created_at', '>=', since)
        .orderBy('refunds.created_at')
        .select<(LedgerRefundRow & { transaction_id: string; created_at: Date })[]>(
          'refunds.refund_id',
          'refunds.idempotency_key',
          'refunds.charge_id',
          'refunds.amount_minor',
          'refunds.currency',
          'refunds.created_at',
          'charges.transaction_id',
        ),
    ]);
    return {
      charges: chargeRows.map((row) => ({ ...chargeOf(row), createdAt: row.created_at })),
      refunds: refundRows.map((row) => ({
        ...refundOf(row),
        transactionId: row.transaction_id,
        createdAt: row.created_at,
      })),
    };
  }

  return { chargeByKey, chargeByTransactionId, recordCharge, noteTransientFailure, refund, activitySince };
}
