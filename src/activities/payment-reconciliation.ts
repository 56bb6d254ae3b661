// The reconciliation's pass: the processor's recent payments and refunds against the ledger, lost outcomes applied.
import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import {
  markPaymentEventApplied,
  paymentLedgerFacts,
  recordPaymentEvent,
  releasePaymentEventClaim,
  type PaymentLedgerFacts,
} from '../db/payment-events';
import { paymentEventSignalName, type PaymentEvent } from '../domain/payment-events';
import { createReconciliationMetrics, type ReconciliationMetrics } from '../observability/payment-metrics';
import { createPaymentEventIntake } from '../payments/payment-event-intake';
import type {
  PaymentGateway,
  ProcessorIntent,
  ProcessorRefund,
  RecentPayments,
} from '../ports/payment-gateway';
import type {
  MendedPaymentOutcome,
  PaymentReconciliationActivities,
  PaymentReconciliationResult,
} from './interface';

/** The booking workflow's id (workflows/shared.ts, which activities do not import). */
const bookingWorkflowIdOf = (bookingId: string): string => `booking-${bookingId}`;

/** A stable id per outcome: the same lost outcome found by two passes is one event, recorded and applied once. */
export function reconciliationEventId(objectId: string, status: string): string {
  return `reconcile:${objectId}:${status}`;
}

function intentEvent(intent: ProcessorIntent, bookingId: string, now: number): PaymentEvent | undefined {
  const identity = { bookingId, createdAt: now, intentId: intent.intentId };
  switch (intent.status) {
    case 'succeeded':
      return {
        ...identity,
        eventId: reconciliationEventId(intent.intentId, 'succeeded'),
        type: 'payment_intent.succeeded',
        kind: 'intent_succeeded',
        amount: intent.amount,
      };
    case 'failed':
      return {
        ...identity,
        eventId: reconciliationEventId(intent.intentId, 'failed'),
        type: 'payment_intent.payment_failed',
        kind: 'intent_failed',
        reason: intent.failureReason ?? 'declined',
      };
    case 'canceled':
      return {
        ...identity,
        eventId: reconciliationEventId(intent.intentId, 'canceled'),
        type: 'payment_intent.canceled',
        kind: 'intent_canceled',
      };
    default:
      return undefined;
  }
}

function refundEvent(refund: ProcessorRefund, bookingId: string, now: number): PaymentEvent | undefined {
  const identity = {
    bookingId,
    createdAt: now,
    refundId: refund.refundId,
    intentId: refund.intentId,
    amount: refund.amount,
    type: 'refund.updated',
  };
  if (refund.status === 'succeeded') {
    return {
      ...identity,
      eventId: reconciliationEventId(refund.refundId, 'succeeded'),
      kind: 'refund_succeeded',
      cumulative: false,
    };
  }
  if (refund.status === 'failed') {
    return {
      ...identity,
      eventId: reconciliationEventId(refund.refundId, 'failed'),
      kind: 'refund_failed',
      reason: refund.failureReason ?? 'failed',
    };
  }
  return undefined;
}

/** The ledger knows the intent's end: an event of that kind came, or the booking's payments record it. */
function intentKnown(intent: ProcessorIntent, event: PaymentEvent, facts: PaymentLedgerFacts): boolean {
  if (facts.intentEventKinds.get(intent.intentId)?.has(event.kind) === true) return true;
  const keyed =
    intent.idempotencyKey === undefined ? undefined : facts.paymentStatusesByKey.get(intent.idempotencyKey);
  if (event.kind === 'intent_succeeded') {
    return facts.approvedIntents.has(intent.intentId) || keyed === 'APPROVED';
  }
  return keyed === 'DECLINED' || keyed === 'FAILED';
}

function refundKnown(refund: ProcessorRefund, event: PaymentEvent, facts: PaymentLedgerFacts): boolean {
  if (facts.refundEventKinds.get(refund.refundId)?.has(event.kind) === true) return true;
  const recorded = facts.refundStatuses.get(refund.refundId);
  return event.kind === 'refund_succeeded' ? recorded === 'SUCCEEDED' : recorded === 'FAILED';
}

/**
 * The outcomes a lost webhook left out of the ledger, as the events that would have brought them. Only bookings
 * this service has are compared; an intent's failure or cancellation matters only while its booking still waits
 * for its payment, while money taken or a refund's end matters whatever the booking's state (the workflow decides).
 */
export function lostOutcomes(recent: RecentPayments, facts: PaymentLedgerFacts, now: number): PaymentEvent[] {
  const lost: PaymentEvent[] = [];
  for (const intent of recent.intents) {
    const status = intent.bookingId === undefined ? undefined : facts.bookingStatuses.get(intent.bookingId);
    if (intent.bookingId === undefined || status === undefined) continue;
    const event = intentEvent(intent, intent.bookingId, now);
    if (event === undefined || intentKnown(intent, event, facts)) continue;
    if (event.kind !== 'intent_succeeded' && status !== 'PENDING_PAYMENT') continue;
    lost.push(event);
  }
  for (const refund of recent.refunds) {
    if (refund.bookingId === undefined || !facts.bookingStatuses.has(refund.bookingId)) continue;
    const event = refundEvent(refund, refund.bookingId, now);
    if (event === undefined || refundKnown(refund, event, facts)) continue;
    lost.push(event);
  }
  return lost;
}

export interface PaymentReconciliationDependencies {
  database: Knex;
  paymentGateway: PaymentGateway;
  /** Where what it mends is counted; an unexported registry's when absent. */
  reconciliationMetrics?: ReconciliationMetrics;
}

function definedIds(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined))];
}

export function createPaymentReconciliationActivities(
  dependencies: PaymentReconciliationDependencies,
): PaymentReconciliationActivities {
  const { database, paymentGateway } = dependencies;
  const metrics = dependencies.reconciliationMetrics ?? createReconciliationMetrics();

  async function ReconcilePayments(input: { lookbackSeconds: number }): Promise<PaymentReconciliationResult> {
    const context = Context.current();
    const since = new Date(Date.now() - input.lookbackSeconds * 1000);
    const recent = await paymentGateway.recentPayments(since);
    const facts = await paymentLedgerFacts(database, {
      intentIds: definedIds(recent.intents.map((intent) => intent.intentId)),
      paymentKeys: definedIds(recent.intents.map((intent) => intent.idempotencyKey)),
      refundIds: definedIds(recent.refunds.map((refund) => refund.refundId)),
      bookingIds: definedIds([
        ...recent.intents.map((intent) => intent.bookingId),
        ...recent.refunds.map((refund) => refund.bookingId),
      ]),
    });
    // Through the webhooks' own path: recorded once under its stable id, then signalled.
    const intake = createPaymentEventIntake({
      record: (event, source) => recordPaymentEvent(database, event, source),
      settle: (eventId, outcome) => markPaymentEventApplied(database, eventId, outcome),
      release: (eventId) => releasePaymentEventClaim(database, eventId),
      async deliver(event) {
        try {
          await context.client.workflow
            .getHandle(bookingWorkflowIdOf(event.bookingId))
            .signal(paymentEventSignalName, event);
          return 'applied';
        } catch (error) {
          if (error instanceof WorkflowNotFoundError) return 'no_workflow';
          throw error;
        }
      },
      count: (source, kind, outcome) => metrics.events.inc({ source, kind, outcome }),
      warn: (details, message) => {
        log.warn(message, details);
      },
    });

    const mended: MendedPaymentOutcome[] = [];
    for (const event of lostOutcomes(recent, facts, Math.floor(Date.now() / 1000))) {
      const outcome = await intake(event, 'reconciliation');
      if (outcome === 'duplicate') continue;
      const found: MendedPaymentOutcome = {
        eventId: event.eventId,
        kind: event.kind,
        bookingId: event.bookingId!,
        ...('intentId' in event && event.intentId !== undefined ? { intentId: event.intentId } : {}),
        ...('refundId' in event && event.refundId !== undefined ? { refundId: event.refundId } : {}),
        outcome,
      };
      log.warn('a payment outcome no webhook brought was found and sent to its booking', {
        ...found,
      });
      mended.push(found);
    }
    metrics.passes.inc();
    log.info('payment reconciliation pass', {
      since: since.toISOString(),
      intents: recent.intents.length,
      refunds: recent.refunds.length,
      mended: mended.length,
    });
    return {
      since: since.toISOString(),
      intentsCompared: recent.intents.length,
      refundsCompared: recent.refunds.length,
      mended,
    };
  }

  return { ReconcilePayments };
}
