// Partner webhook deliveries as the worker makes them, per endpoint: attempts, outcomes, latency and disabled endpoints.
import { Counter, Histogram, Registry } from 'prom-client';

export type WebhookAttemptOutcome = 'delivered' | 'failed' | 'gone' | 'refused';

export interface PartnerWebhookMetrics {
  readonly registry: Registry;
  /** Labels: endpoint (its id), outcome. */
  readonly attempts: Counter<'endpoint' | 'outcome'>;
  /** From the change that made the event to its delivery, per endpoint. */
  readonly deliveryLatency: Histogram<'endpoint'>;
  /** Endpoints this worker disabled; label reason (gone: a 410; exhausted: the retry schedule ran out). */
  readonly endpointsDisabled: Counter<'reason'>;
}

export function createPartnerWebhookMetrics(registry: Registry = new Registry()): PartnerWebhookMetrics {
  const endpointsDisabled = new Counter({
    name: 'bus_booking_webhook_endpoints_disabled_total',
    help: 'Partner webhook endpoints disabled by a delivery: reason gone (the endpoint answered 410) or exhausted (the retry schedule ran out)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['gone', 'exhausted']) endpointsDisabled.inc({ reason }, 0);
  return {
    registry,
    attempts: new Counter({
      name: 'bus_booking_webhook_attempts_total',
      help: 'Attempts to deliver a partner webhook, by endpoint id and outcome (delivered, failed, gone, refused by the outbound guard)',
      labelNames: ['endpoint', 'outcome'] as const,
      registers: [registry],
    }),
    deliveryLatency: new Histogram({
      name: 'bus_booking_webhook_delivery_latency_seconds',
      help: 'From the change an event states to its delivery (2xx) at a partner endpoint, by endpoint id',
      labelNames: ['endpoint'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 86400],
      registers: [registry],
    }),
    endpointsDisabled,
  };
}

/** The API's sweep: events whose delivery workflows it woke because the process that recorded them could not. */
export function createPartnerEventSweepCounter(registry: Registry = new Registry()): Counter {
  return new Counter({
    name: 'bus_booking_webhook_swept_events_total',
    help: 'Partner events whose delivery workflows the sweep woke, because the process that recorded them stopped before it could',
    registers: [registry],
  });
}
