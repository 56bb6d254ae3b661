// The processor's events as they came in (webhooks in the API, the reconciliation in the worker), counted.
import { Counter, Registry } from 'prom-client';

export type PaymentEventSourceLabel = 'webhook' | 'reconciliation';
export type WebhookRefusalReason = 'signature' | 'too_large';

/** The kinds and outcomes whose series exist at 0 from the start, so the alerts' increase() sees the first one. */
const alertedKinds = ['refund_failed', 'dispute_created'] as const;
const mendedKinds = [
  'intent_succeeded',
  'intent_failed',
  'intent_canceled',
  'refund_succeeded',
  'refund_failed',
];

export interface PaymentEventMetrics {
  readonly registry: Registry;
  /** Labels: source, kind (the PaymentEvent's), outcome (applied, duplicate, ignored, no_booking, no_workflow). */
  readonly events: Counter<'source' | 'kind' | 'outcome'>;
}

function eventsCounter(registry: Registry, source: PaymentEventSourceLabel): PaymentEventMetrics['events'] {
  const events = new Counter({
    name: 'bus_booking_payment_events_total',
    help: "The card processor's events by source (webhook, reconciliation), kind and what became of them",
    labelNames: ['source', 'kind', 'outcome'] as const,
    registers: [registry],
  });
  for (const kind of alertedKinds) events.inc({ source, kind, outcome: 'applied' }, 0);
  if (source === 'reconciliation') {
    for (const kind of mendedKinds) events.inc({ source, kind, outcome: 'applied' }, 0);
  }
  return events;
}

export interface WebhookMetrics extends PaymentEventMetrics {
  /** Deliveries answered 400 before anything was recorded; label reason. */
  readonly webhookRefusals: Counter<'reason'>;
}

/** The API's: `bus_booking_payment_events_total{source="webhook"}` and the refusals. */
export function createWebhookMetrics(registry: Registry = new Registry()): WebhookMetrics {
  const webhookRefusals = new Counter({
    name: 'bus_booking_payment_webhook_refusals_total',
    help: 'Webhook deliveries refused before anything was recorded: a missing, forged or stale signature, too large a body',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['signature', 'too_large']) webhookRefusals.inc({ reason }, 0);
  return { registry, events: eventsCounter(registry, 'webhook'), webhookRefusals };
}

export interface ReconciliationMetrics extends PaymentEventMetrics {
  /** Reconciliation passes that compared the processor's side with the ledger to the end. */
  readonly passes: Counter;
}

/** The worker's: the outcomes the reconciliation mended, and its passes. */
export function createReconciliationMetrics(registry: Registry = new Registry()): ReconciliationMetrics {
  const passes = new Counter({
    name: 'bus_booking_payment_reconciliation_passes_total',
    help: "Reconciliation passes that compared the processor's recent payments with the ledger",
    registers: [registry],
  });
  return { registry, events: eventsCounter(registry, 'reconciliation'), passes };
}
