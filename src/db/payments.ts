// The payments and refunds tables: the booking's ledger of gateway outcomes, one row per idempotency key.
import type { Knex } from 'knex';

export interface PaymentRecord {
  bookingId: string;
  idempotencyKey: string;
  amountMinor: number;
  currency: string;
  status: 'APPROVED' | 'DECLINED';
  declineReason: string | null;
  gatewayTransactionId: string | null;
  /** Encrypted by the caller. */
  methodMasked: string | null;
}

/** Records a gateway outcome unless its key has a row already; true when this call wrote it. */
export async function recordPayment(database: Knex, payment: PaymentRecord): Promise<boolean> {
  const recorded: { id: string }[] = await database('payments')
    .insert({
      booking_id: payment.bookingId,
      idempotency_key: payment.idempotencyKey,
      amount_minor: payment.amountMinor,
      currency: payment.currency,
      status: payment.status,
      decline_reason: payment.declineReason,
      gateway_transaction_id: payment.gatewayTransactionId,
      method_masked: payment.methodMasked,
    })
    .onConflict('idempotency_key')
    .ignore()
    .returning('id');
  return recorded.length > 0;
}

/** The id of the booking's approved payment with this gateway transaction, if there is one. */
export async function approvedPaymentId(
  database: Knex,
  payment: { bookingId: string; transactionId: string },
): Promise<string | undefined> {
  const row: { id: string } | undefined = await database('payments')
    .where({
      booking_id: payment.bookingId,
      gateway_transaction_id: payment.transactionId,
      status: 'APPROVED',
    })
    .first('id');
  return row?.id;
}

export interface RefundRecord {
  bookingId: string;
  paymentId: string;
  idempotencyKey: string;
  amountMinor: number;
  currency: string;
  gatewayRefundId: string;
}

/** Records a refund the gateway made unless its key has a row already; true when this call wrote it. */
export async function recordRefund(database: Knex, refund: RefundRecord): Promise<boolean> {
  const recorded: { id: string }[] = await database('refunds')
    .insert({
      booking_id: refund.bookingId,
      payment_id: refund.paymentId,
      idempotency_key: refund.idempotencyKey,
      amount_minor: refund.amountMinor,
      currency: refund.currency,
      status: 'SUCCEEDED',
      gateway_refund_id: refund.gatewayRefundId,
    })
    .onConflict('idempotency_key')
    .ignore()
    .returning('id');
  return recorded.length > 0;
}
