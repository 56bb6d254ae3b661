// The payment simulator's ledger port: where the simulated card processor keeps its charges and refunds.

/** A charge as the ledger keeps it, approved or declined. */
export interface LedgerCharge {
  id: string;
  transactionId: string;
  idempotencyKey: string;
  amountMinor: number;
  currency: string;
  paymentToken: string;
  cardBrand: string | null;
  cardLast4: string | null;
  description: string;
  status: 'APPROVED' | 'DECLINED';
  declineReason: string | null;
  refundedMinor: number;
}

export type NewLedgerCharge = Omit<LedgerCharge, 'id' | 'refundedMinor'>;

export interface LedgerRefund {
  refundId: string;
  idempotencyKey: string;
  chargeId: string;
  amountMinor: number;
  currency: string;
}

/** What a refund request comes to: the refund its key made before, or a new one to record. */
export type RefundDecision =
  { replay: string } | { record: { refundId: string; amountMinor: number; currency: string } };

export type LedgerRefundOutcome =
  | { outcome: 'refunded'; refundId: string }
  /** No charge has the transaction id. */
  | { outcome: 'no-charge' }
  /** A concurrent refund of another charge took the idempotency key first. */
  | { outcome: 'key-taken' };

/** What the ledger recorded since a moment: each charge and refund with when it was made. */
export interface LedgerActivity {
  charges: (LedgerCharge & { createdAt: Date })[];
  refunds: (LedgerRefund & { transactionId: string; createdAt: Date })[];
}

export type TransientFailure = 'TIMEOUT' | 'UNAVAILABLE';

export interface PaymentSimulatorLedger {
  chargeByKey(idempotencyKey: string): Promise<LedgerCharge | undefined>;
  chargeByTransactionId(transactionId: string): Promise<LedgerCharge | undefined>;
  /** Records a new charge; undefined when its key has one already (a concurrent one is waited for first). */
  recordCharge(charge: NewLedgerCharge): Promise<LedgerCharge | undefined>;
  /** Notes a transient failure under the key; true only for the first caller per key. */
  noteTransientFailure(idempotencyKey: string, failure: TransientFailure): Promise<boolean>;
  /**
   * In one transaction, under the charge's lock (which serialises every refund of it, concurrent retries of one
   * key included): reads the refund of the key and does what `decide` says. `decide` throws to refuse; nothing is
   * written then.
   */
  refund(
    request: { transactionId: string; idempotencyKey: string },
    decide: (charge: LedgerCharge, existing: LedgerRefund | undefined) => RefundDecision,
  ): Promise<LedgerRefundOutcome>;
  /** The charges and refunds recorded at or after `since`. */
  activitySince(since: Date): Promise<LedgerActivity>;
}
