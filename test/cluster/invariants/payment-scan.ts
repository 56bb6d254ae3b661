// The payment scan: localstripe's intents and refunds against the bookings and their ledger, after the chaos.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type Stripe from 'stripe';
import { bookingStateQuery, bookingWorkflowId } from '../../../src/workflows/shared';
import type { Violation } from './scan';

export const paymentInvariantNames = [
  'captured-without-booking-or-refund',
  'double-refund',
  'outcome-lost',
] as const;
export type PaymentInvariantName = (typeof paymentInvariantNames)[number];

export const paymentInvariantDescriptions: Record<PaymentInvariantName, string> = {
  'captured-without-booking-or-refund':
    "every succeeded intent's booking was confirmed (CONFIRMED, COMPLETED, or CANCELLED after its confirmation) or its amount is refunded in full, and the processor keeps no more for a booking than the booking accounts for",
  'double-refund':
    'no intent refunded more than its amount, no two refunds under one idempotency key, and the processor refunded no more for a booking than the booking records',
  'outcome-lost':
    "every intent's end is on its booking: no intent still open, a succeeded one in the ledger as APPROVED, a failed one as DECLINED, no booking showing an open payment whose intent has ended or whose booking ended, no CONFIRMED booking without a succeeded intent, the processor's refunds all recorded",
};

export interface PaymentScanReport {
  intentsByStatus: Record<string, number>;
  refunds: number;
  refundedMinor: number;
  results: { name: PaymentInvariantName; description: string; violations: Violation[] }[];
  violationCount: number;
}

interface IntentFacts {
  id: string;
  status: string;
  failed: boolean;
  amount: number;
  bookingId: string | undefined;
  idempotencyKey: string | undefined;
}

interface BookingFacts {
  id: string;
  status: string;
  amount_paid_minor: number;
  amount_refunded_minor: number;
  payment_action: { intentId?: string } | null;
}

/** Every page of a localstripe list (oldest first, as it lists). */
async function everything<Item extends { id: string }>(
  list: (startingAfter: string | undefined) => Promise<Stripe.ApiList<Item>>,
): Promise<Item[]> {
  const found: Item[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = await list(startingAfter);
    found.push(...page.data);
    const last = page.data.at(-1);
    if (!page.has_more || last === undefined) return found;
    startingAfter = last.id;
  }
}

const endedRefund = (refund: Stripe.Refund) => refund.status === 'failed' || refund.status === 'canceled';

export async function scanPayments(input: {
  stripe: Stripe;
  database: Knex;
  temporal: Client;
  /** Customers whose bookings were written straight to PostgreSQL, with no workflow and no payment. */
  ignoredCustomerIds?: readonly string[];
}): Promise<PaymentScanReport> {
  const { stripe, database, temporal } = input;
  const violations = new Map<PaymentInvariantName, Violation[]>(
    paymentInvariantNames.map((name) => [name, []]),
  );
  const add = (name: PaymentInvariantName, subject: string, detail: string) =>
    violations.get(name)?.push({ subject, detail });

  const rawIntents = await everything((startingAfter) =>
    stripe.paymentIntents.list({
      limit: 100,
      ...(startingAfter === undefined ? {} : { starting_after: startingAfter }),
    }),
  );
  const refunds = await everything((startingAfter) =>
    stripe.refunds.list({
      limit: 100,
      ...(startingAfter === undefined ? {} : { starting_after: startingAfter }),
    }),
  );
  const intents: IntentFacts[] = rawIntents.map((intent) => ({
    id: intent.id,
    status: intent.status,
    failed: intent.status === 'requires_payment_method' && intent.last_payment_error != null,
    amount: intent.amount,
    bookingId: intent.metadata?.booking_id,
    idempotencyKey: intent.metadata?.idempotency_key,
  }));
  const intentsById = new Map(intents.map((intent) => [intent.id, intent]));
  const intentOfCharge = new Map<string, string>();
  for (const intent of rawIntents) {
    const charge = (intent as { latest_charge?: string | { id: string } | null }).latest_charge;
    const chargeId = typeof charge === 'string' ? charge : charge?.id;
    if (chargeId !== undefined) intentOfCharge.set(chargeId, intent.id);
  }
  const refundIntent = (refund: Stripe.Refund): string | undefined => {
    const intent = refund.payment_intent;
    if (typeof intent === 'string') return intent;
    if (intent != null) return intent.id;
    const charge = typeof refund.charge === 'string' ? refund.charge : refund.charge?.id;
    return charge === undefined ? undefined : intentOfCharge.get(charge);
  };

  const bookings: BookingFacts[] = await database('bookings')
    .whereNotIn('customer_id', input.ignoredCustomerIds ?? [])
    .select('id', 'status', 'amount_paid_minor', 'amount_refunded_minor', 'payment_action');
  const bookingsById = new Map(bookings.map((booking) => [booking.id, booking]));
  const ledger: {
    booking_id: string;
    idempotency_key: string;
    status: string;
    gateway_transaction_id: string | null;
  }[] = await database('payments').select(
    'booking_id',
    'idempotency_key',
    'status',
    'gateway_transaction_id',
  );
  const approvedIntents = new Set(
    ledger.filter((row) => row.status === 'APPROVED').map((row) => row.gateway_transaction_id),
  );
  const declinedKeys = new Set(
    ledger.filter((row) => row.status !== 'APPROVED').map((row) => row.idempotency_key),
  );

  // Refunds per intent and per idempotency key, those that gave money back (a failed one gave nothing).
  const refundedByIntent = new Map<string, number>();
  const refundsByKey = new Map<string, string[]>();
  for (const refund of refunds.filter((candidate) => !endedRefund(candidate))) {
    const intentId = refundIntent(refund);
    if (intentId === undefined) {
      add('double-refund', refund.id, 'a refund of no intent the processor lists');
      continue;
    }
    refundedByIntent.set(intentId, (refundedByIntent.get(intentId) ?? 0) + refund.amount);
    const key = refund.metadata?.idempotency_key ?? `(no key) ${refund.id}`;
    refundsByKey.set(key, [...(refundsByKey.get(key) ?? []), refund.id]);
  }
  for (const [key, ids] of refundsByKey) {
    if (ids.length > 1) add('double-refund', key, `${ids.length} refunds under one key: ${ids.join(', ')}`);
  }
  for (const [intentId, refunded] of refundedByIntent) {
    const intent = intentsById.get(intentId);
    if (intent !== undefined && refunded > intent.amount) {
      add('double-refund', intentId, `refunded ${refunded} of a payment of ${intent.amount}`);
    }
  }

  // Per booking: what the processor took and gave back, against what the booking accounts for.
  const perBooking = new Map<string, { kept: number; refunded: number; succeeded: number }>();
  for (const intent of intents) {
    if (intent.status !== 'succeeded') continue;
    const refunded = refundedByIntent.get(intent.id) ?? 0;
    const bookingId = intent.bookingId ?? `(no booking) ${intent.id}`;
    const sums = perBooking.get(bookingId) ?? { kept: 0, refunded: 0, succeeded: 0 };
    sums.kept += intent.amount - refunded;
    sums.refunded += refunded;
    sums.succeeded += 1;
    perBooking.set(bookingId, sums);
  }

  const confirmedOnce = new Map<string, boolean>();
  async function wasConfirmed(booking: BookingFacts): Promise<boolean> {
    if (booking.status === 'CONFIRMED' || booking.status === 'COMPLETED') return true;
    if (booking.status !== 'CANCELLED') return false;
    if (!confirmedOnce.has(booking.id)) {
      const state = await temporal.workflow
        .getHandle(bookingWorkflowId(booking.id))
        .query(bookingStateQuery)
        .catch(() => undefined);
      confirmedOnce.set(booking.id, state?.confirmedAt !== undefined);
    }
    return confirmedOnce.get(booking.id) === true;
  }

  for (const intent of intents) {
    const booking = intent.bookingId === undefined ? undefined : bookingsById.get(intent.bookingId);
    const where = booking === undefined ? 'no booking' : `booking ${booking.id} ${booking.status}`;
    if (intent.status === 'succeeded') {
      const kept = intent.amount - (refundedByIntent.get(intent.id) ?? 0);
      if (kept > 0 && (booking === undefined || !(await wasConfirmed(booking)))) {
        add('captured-without-booking-or-refund', intent.id, `${kept} of ${intent.amount} kept; ${where}`);
      }
      if (!approvedIntents.has(intent.id)) {
        add('outcome-lost', intent.id, `succeeded, but no APPROVED payment in the ledger; ${where}`);
      }
    } else if (intent.failed) {
      if (intent.idempotencyKey === undefined || !declinedKeys.has(intent.idempotencyKey)) {
        add(
          'outcome-lost',
          intent.id,
          `failed and never cancelled, but no DECLINED payment in the ledger; ${where}`,
        );
      }
    } else if (intent.status !== 'canceled') {
      add('outcome-lost', intent.id, `still ${intent.status} at the processor; ${where}`);
    }
  }

  for (const booking of bookings) {
    const open = booking.payment_action?.intentId;
    if (open !== undefined) {
      const intent = intentsById.get(open);
      if (booking.status !== 'PENDING_PAYMENT') {
        add('outcome-lost', booking.id, `${booking.status} but shows the open payment ${open}`);
      } else if (
        intent === undefined ||
        intent.status === 'succeeded' ||
        intent.status === 'canceled' ||
        intent.failed
      ) {
        add(
          'outcome-lost',
          booking.id,
          `shows ${open} open, which is ${intent?.status ?? 'unknown'} at the processor`,
        );
      }
    }
    const sums = perBooking.get(booking.id) ?? { kept: 0, refunded: 0, succeeded: 0 };
    if ((booking.status === 'CONFIRMED' || booking.status === 'COMPLETED') && sums.succeeded === 0) {
      add('outcome-lost', booking.id, `${booking.status} without a succeeded intent`);
    }
    const accounted = booking.amount_paid_minor - booking.amount_refunded_minor;
    // An expired booking owes nothing, whatever its row says it took: the processor must have given it all back.
    const owed = booking.status === 'EXPIRED' ? 0 : accounted;
    const detail = `${booking.status}: processor kept ${sums.kept} and refunded ${sums.refunded}; the booking paid ${booking.amount_paid_minor}, refunded ${booking.amount_refunded_minor}`;
    if (sums.kept > owed) add('captured-without-booking-or-refund', booking.id, detail);
    if (sums.kept < owed) add('outcome-lost', booking.id, detail);
    if (sums.refunded > booking.amount_refunded_minor) add('double-refund', booking.id, detail);
    if (sums.refunded < booking.amount_refunded_minor) add('outcome-lost', booking.id, detail);
  }
  for (const [bookingId, sums] of perBooking) {
    if (!bookingsById.has(bookingId) && sums.kept > 0) {
      add(
        'captured-without-booking-or-refund',
        bookingId,
        `processor kept ${sums.kept} for a booking that does not exist`,
      );
    }
  }

  const intentsByStatus: Record<string, number> = {};
  for (const intent of intents) {
    const status = intent.failed ? 'failed' : intent.status;
    intentsByStatus[status] = (intentsByStatus[status] ?? 0) + 1;
  }
  const results = paymentInvariantNames.map((name) => ({
    name,
    description: paymentInvariantDescriptions[name],
    violations: violations.get(name) ?? [],
  }));
  return {
    intentsByStatus,
    refunds: refunds.length,
    refundedMinor: [...refundedByIntent.values()].reduce((sum, amount) => sum + amount, 0),
    results,
    violationCount: results.reduce((sum, result) => sum + result.violations.length, 0),
  };
}
