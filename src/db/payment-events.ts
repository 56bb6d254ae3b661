// The processor's events as received (table payment_events), and the ledger facts the reconciliation compares with.
import type { Knex } from 'knex';
import type { BookingStatus } from '../domain/booking';
import type { PaymentEvent, PaymentEventKind } from '../domain/payment-events';

export type PaymentEventSource = 'webhook' | 'reconciliation';
/** How a recorded event was dealt with; no outcome (and no applied_at) while it has not been yet. */
export type PaymentEventOutcome = 'applied' | 'ignored' | 'no_booking' | 'no_workflow';

export interface RecordedPaymentEvent {
  /** How many deliveries of the event (this one included) have come. */
  deliveries: number;
  /** Set once the event was dealt with: a later delivery then changes nothing. */
  outcome: PaymentEventOutcome | undefined;
  /** This delivery holds the lease to apply it: no other delivery is applying it now. */
  claimed: boolean;
}

/** Long enough for one signal to Temporal and its retries; a delivery that died holding it frees it then. */
export const paymentEventLeaseSeconds = 60;

function intentIdOf(event: PaymentEvent): string | null {
  return 'intentId' in event && event.intentId !== undefined ? event.intentId : null;
}

function refundIdOf(event: PaymentEvent): string | null {
  return 'refundId' in event && event.refundId !== undefined ? event.refundId : null;
}

/**
 * Records the event unless its id has a row already, counts the delivery either way, and takes the lease to apply
 * it when it is not applied and nobody holds the lease. Two deliveries at once serialise on the id: one inserts
 * (and holds the lease), the other sees the row and the lease in force. A lease taken here ends at this
 * statement's `now()` plus the lease, which is how the statement tells its own from another's.
 */
export async function recordPaymentEvent(
  database: Knex,
  event: PaymentEvent,
  source: PaymentEventSource,
): Promise<RecordedPaymentEvent> {
  const { rows } = await database.raw<{
    rows: { outcome: PaymentEventOutcome | null; deliveries: number; claimed: boolean }[];
  }>(
    `INSERT INTO payment_events
       (event_id, source, type, kind, booking_id, intent_id, refund_id, event, created_at, claimed_until)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, now() + make_interval(secs => ?))
     ON CONFLICT (event_id) DO UPDATE SET
       deliveries = payment_events.deliveries + 1,
       claimed_until = CASE
         WHEN payment_events.applied_at IS NULL AND payment_events.claimed_until <= now()
           THEN now() + make_interval(secs => ?)
         ELSE payment_events.claimed_until END
     RETURNING outcome, deliveries,
       applied_at IS NULL AND claimed_until = now() + make_interval(secs => ?) AS claimed`,
    [
      event.eventId,
      source,
      event.type,
      event.kind,
      event.bookingId ?? null,
      intentIdOf(event),
      refundIdOf(event),
      JSON.stringify(event),
      new Date(event.createdAt * 1000),
      paymentEventLeaseSeconds,
      paymentEventLeaseSeconds,
      paymentEventLeaseSeconds,
    ],
  );
  const [row] = rows;
  return { deliveries: row.deliveries, outcome: row.outcome ?? undefined, claimed: row.claimed };
}

/** Gives the lease up early (the apply failed), so the next delivery need not wait for it to run out. */
export async function releasePaymentEventClaim(database: Knex, eventId: string): Promise<void> {
  await database('payment_events')
    .where({ event_id: eventId })
    .whereNull('applied_at')
    .update({ claimed_until: database.fn.now() });
}

/** Marks the event dealt with, unless an earlier delivery did (its outcome stays). */
export async function markPaymentEventApplied(
  database: Knex,
  eventId: string,
  outcome: PaymentEventOutcome,
): Promise<void> {
  await database('payment_events')
    .where({ event_id: eventId })
    .whereNull('applied_at')
    .update({ outcome, applied_at: database.fn.now() });
}

export interface StoredPaymentEvent {
  eventId: string;
  source: PaymentEventSource;
  kind: PaymentEventKind;
  bookingId: string | null;
  deliveries: number;
  outcome: PaymentEventOutcome | null;
  appliedAt: Date | null;
}

/** One recorded event, for operators and tests. */
export async function readPaymentEvent(
  database: Knex,
  eventId: string,
): Promise<StoredPaymentEvent | undefined> {
  const row:
    | {
        event_id: string;
        source: PaymentEventSource;
        kind: PaymentEventKind;
        booking_id: string | null;
        deliveries: number;
        outcome: PaymentEventOutcome | null;
        applied_at: Date | null;
      }
    | undefined = await database('payment_events')
    .where({ event_id: eventId })
    .first('event_id', 'source', 'kind', 'booking_id', 'deliveries', 'outcome', 'applied_at');
  return row === undefined
    ? undefined
    : {
        eventId: row.event_id,
        source: row.source,
        kind: row.kind,
        bookingId: row.booking_id,
        deliveries: row.deliveries,
        outcome: row.outcome,
        appliedAt: row.applied_at,
      };
}

/** What the service knows about some of the processor's intents and refunds, for the reconciliation. */
export interface PaymentLedgerFacts {
  /** The kinds of event recorded per intent (from a webhook or an earlier reconciliation). */
  intentEventKinds: Map<string, Set<PaymentEventKind>>;
  refundEventKinds: Map<string, Set<PaymentEventKind>>;
  /** Intents the bookings' payments list as approved, by their transaction id. */
  approvedIntents: Set<string>;
  /** The status of the bookings' payments, by their idempotency key. */
  paymentStatusesByKey: Map<string, 'APPROVED' | 'DECLINED' | 'FAILED'>;
  /** Refunds the bookings' refunds list, with their status. */
  refundStatuses: Map<string, 'SUCCEEDED' | 'FAILED'>;
  /** The read model's status of each booking named that exists. */
  bookingStatuses: Map<string, BookingStatus>;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function kindsBy(rows: { id: string; kind: PaymentEventKind }[]): Map<string, Set<PaymentEventKind>> {
  const kinds = new Map<string, Set<PaymentEventKind>>();
  for (const { id, kind } of rows) {
    const known = kinds.get(id) ?? new Set<PaymentEventKind>();
    known.add(kind);
    kinds.set(id, known);
  }
  return kinds;
}

/** Six indexed lookups, each for the given ids only. */
export async function paymentLedgerFacts(
  database: Knex,
  ids: { intentIds: string[]; paymentKeys: string[]; refundIds: string[]; bookingIds: string[] },
): Promise<PaymentLedgerFacts> {
  const bookingIds = ids.bookingIds.filter((id) => uuidPattern.test(id));
  const [intentEvents, refundEvents, approved, keyed, refunds, bookings] = await Promise.all([
    ids.intentIds.length === 0
      ? []
      : database('payment_events')
          .whereIn('intent_id', ids.intentIds)
          .select<{ id: string; kind: PaymentEventKind }[]>('intent_id as id', 'kind'),
    ids.refundIds.length === 0
      ? []
      : database('payment_events')
          .whereIn('refund_id', ids.refundIds)
          .select<{ id: string; kind: PaymentEventKind }[]>('refund_id as id', 'kind'),
    ids.intentIds.length === 0
      ? []
      : database('payments')
          .whereIn('gateway_transaction_id', ids.intentIds)
          .where({ status: 'APPROVED' })
          .select<{ gateway_transaction_id: string }[]>('gateway_transaction_id'),
    ids.paymentKeys.length === 0
      ? []
      : database('payments')
          .whereIn('idempotency_key', ids.paymentKeys)
          .select<{ idempotency_key: string; status: 'APPROVED' | 'DECLINED' | 'FAILED' }[]>(
            'idempotency_key',
            'status',
          ),
    ids.refundIds.length === 0
      ? []
      : database('refunds')
          .whereIn('gateway_refund_id', ids.refundIds)
          .select<{ gateway_refund_id: string; status: 'SUCCEEDED' | 'FAILED' }[]>(
            'gateway_refund_id',
            'status',
          ),
    bookingIds.length === 0
      ? []
      : database('bookings')
          .whereIn('id', bookingIds)
          .select<{ id: string; status: BookingStatus }[]>('id', 'status'),
  ]);
  return {
    intentEventKinds: kindsBy(intentEvents),
    refundEventKinds: kindsBy(refundEvents),
    approvedIntents: new Set(approved.map((row) => row.gateway_transaction_id)),
    paymentStatusesByKey: new Map(keyed.map((row) => [row.idempotency_key, row.status])),
    refundStatuses: new Map(refunds.map((row) => [row.gateway_refund_id, row.status])),
    bookingStatuses: new Map(bookings.map((row) => [row.id, row.status])),
  };
}
