// Prometheus metrics (prom-client): one registry per process, the API's request metrics and the business counters.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Money } from '../domain/booking';
import { createBackgroundFailures } from './background-failures';

/** Content type of the Prometheus text exposition format every /metrics answers in. */
export const metricsContentType = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * The registry a process serves on /metrics, with prom-client's process and Node.js metrics
 * (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `nodejs_*`). Build it once per process.
 */
export function createProcessMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

// ---- API: requests on both fronts ----

export const fronts = ['rest', 'grpc'] as const;
export type Front = (typeof fronts)[number];

export const refusalReasons = [
  'rate_limit_user',
  'rate_limit_address',
  'login_throttle',
  'open_hold_cap',
] as const;
export type RefusalReason = (typeof refusalReasons)[number];

/** Which refusals each front can give: rate limits and the login throttle exist on REST only. */
const refusalsByFront: Readonly<Record<Front, readonly RefusalReason[]>> = {
  rest: refusalReasons,
  grpc: ['open_hold_cap'],
};

export const tokenFailureReasons = [
  'missing',
  'malformed',
  'expired',
  'bad_signature',
  'wrong_audience',
  'wrong_issuer',
  'unknown_key',
  'other',
] as const;
export type TokenFailureReason = (typeof tokenFailureReasons)[number];

/** Seconds; from a fast read (a few ms) to the create that waits for its seats (up to the request timeout). */
const requestDurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface ApiMetrics {
  readonly registry: Registry;
  /** Labels: method, route (the router's template, or `unmatched`), status. */
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  readonly httpRequestsInFlight: Gauge;
  /** Labels: method (e.g. CreateBooking), code (e.g. OK, NOT_FOUND). */
  readonly grpcRequestDuration: Histogram<'method' | 'code'>;
  readonly grpcRequestsInFlight: Gauge;
  /** A request answered with the stored outcome of an earlier one (REST: a repeated Idempotency-Key). */
  readonly idempotentReplays: Counter<'front'>;
  readonly requestRefusals: Counter<'front' | 'reason'>;
  readonly tokenVerificationFailures: Counter<'reason'>;
  /** Failures of background work nobody waits for (observability/background-failures.ts). */
  readonly backgroundFailures: Counter<'task'>;
}

/** The API's metrics in `registry` (a fresh, unexported one when none is given, as tests compose the API). */
export function createApiMetrics(registry: Registry = new Registry()): ApiMetrics {
  const registers = [registry];
  const metrics: ApiMetrics = {
    registry,
    httpRequestDuration: new Histogram({
      name: 'bus_booking_http_request_duration_seconds',
      help: 'REST requests by method, route template and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: requestDurationBuckets,
      registers,
    }),
    httpRequestsInFlight: new Gauge({
      name: 'bus_booking_http_requests_in_flight',
      help: 'REST requests being served',
      registers,
    }),
    grpcRequestDuration: new Histogram({
      name: 'bus_booking_grpc_request_duration_seconds',
      help: 'BookingService calls by method and status code',
      labelNames: ['method', 'code'] as const,
      buckets: requestDurationBuckets,
      registers,
    }),
    grpcRequestsInFlight: new Gauge({
      name: 'bus_booking_grpc_requests_in_flight',
      help: 'BookingService calls being served',
      registers,
    }),
    idempotentReplays: new Counter({
      name: 'bus_booking_idempotent_replays_total',
      help: 'Requests answered with the stored outcome of an earlier request with the same idempotency key',
      labelNames: ['front'] as const,
      registers,
    }),
    requestRefusals: new Counter({
      name: 'bus_booking_request_refusals_total',
      help: 'Requests refused by a rate limit, the login throttle or the open-hold cap',
      labelNames: ['front', 'reason'] as const,
      registers,
    }),
    tokenVerificationFailures: new Counter({
      name: 'bus_booking_token_verification_failures_total',
      help: 'Access tokens refused, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    backgroundFailures: createBackgroundFailures(registry),
  };
  // Every series exists from the start at 0, so rate() and absent() work before the first occurrence.
  metrics.idempotentReplays.inc({ front: 'rest' }, 0);
  for (const front of fronts) {
    for (const reason of refusalsByFront[front]) metrics.requestRefusals.inc({ front, reason }, 0);
  }
  for (const reason of tokenFailureReasons) metrics.tokenVerificationFailures.inc({ reason }, 0);
  return metrics;
}

/**
 * 1 while the API hears PostgreSQL's notices of seat availability changes, and so may keep availability answers;
 * 0 while it does not, and reads every availability from PostgreSQL.
 */
export function registerAvailabilityChangesHeard(registry: Registry, hearing: () => boolean): void {
  new Gauge({
    name: 'bus_booking_availability_changes_heard',
    help: '1 while the API hears seat availability change notices and may keep availability answers, else 0',
    registers: [registry],
    collect() {
      this.set(hearing() ? 1 : 0);
    },
  });
}

// ---- Workers: business facts, counted where they happen ----

export const bookingTransitions = [
  'created',
  'not_booked',
  'confirmed',
  'changed',
  'cancelled',
  'expired',
  'completed',
] as const;
export type BookingTransition = (typeof bookingTransitions)[number];

export type PaymentOutcome = 'approved' | 'declined';
export type RefundOutcome = 'succeeded' | 'failed';
export type CompensationStep = 'release_seats' | 'refund_payment';
export type CompensationOutcome = 'succeeded' | 'failed';
export type NotificationChannel = 'email' | 'sms';
export const paymentIncidentKinds = [
  'refund_failed',
  'dispute_created',
  'late_payment_confirmed',
  'late_payment_refunded',
] as const;
export type PaymentIncidentKind = (typeof paymentIncidentKinds)[number];
export type NotificationOutcome = 'sent' | 'failed';

/** What the activities report; each call is one fact (a retry that finds its work done reports nothing). */
export interface BusinessMetrics {
  readonly registry: Registry;
  /** `reason` only for not_booked (seats_unavailable, ...). */
  bookingTransition(transition: BookingTransition, reason?: string): void;
  seatsHeld(count: number): void;
  seatsReleased(count: number): void;
  payment(outcome: PaymentOutcome): void;
  /** `amount` of a refund that succeeded. */
  refund(outcome: RefundOutcome, amount?: Money): void;
  compensation(step: CompensationStep, outcome: CompensationOutcome): void;
  notification(channel: NotificationChannel, outcome: NotificationOutcome): void;
  /** Something about a booking's money an operator must look at, or should know happened. */
  paymentIncident(kind: PaymentIncidentKind): void;
}

export interface BusinessMetricsOptions {
  /**
   * Counts PENDING_PAYMENT bookings whose hold expired more than the grace period ago, read at each scrape.
   * Without it the gauge is not registered.
   */
  overduePendingPayments?: () => Promise<number>;
  /** Hears why the gauge could not be read; the gauge is then left out of that scrape. */
  onCollectFailure?: (error: unknown) => void;
}

export function createBusinessMetrics(
  registry: Registry = new Registry(),
  options: BusinessMetricsOptions = {},
): BusinessMetrics {
  const registers = [registry];
  const transitions = new Counter({
    name: 'bus_booking_booking_transitions_total',
    help: 'Bookings by lifecycle transition; reason says why a request was not booked',
    labelNames: ['transition', 'reason'] as const,
    registers,
  });
  const seatsHeld = new Counter({
    name: 'bus_booking_seats_held_total',
    help: 'Seats newly held for bookings',
    registers,
  });
  const seatsReleased = new Counter({
    name: 'bus_booking_seats_released_total',
    help: 'Seats released (cancellations, expiries, changes, lapsed holds taken over)',
    registers,
  });
  const payments = new Counter({
    name: 'bus_booking_payments_total',
    help: 'Payment gateway results recorded, by outcome',
    labelNames: ['outcome'] as const,
    registers,
  });
  const refunds = new Counter({
    name: 'bus_booking_refunds_total',
    help: 'Refunds made (succeeded) and refund attempts that failed',
    labelNames: ['outcome'] as const,
    registers,
  });
  const refundedAmount = new Counter({
    name: 'bus_booking_refunded_amount_minor_total',
    help: 'Money refunded, in minor units of the currency',
    labelNames: ['currency'] as const,
    registers,
  });
  const compensations = new Counter({
    name: 'bus_booking_compensations_total',
    help: 'Saga compensation steps (seat releases, refunds) that did their work, and attempts that failed',
    labelNames: ['step', 'outcome'] as const,
    registers,
  });
  const notifications = new Counter({
    name: 'bus_booking_notifications_total',
    help: 'Notifications delivered to the provider, and delivery attempts that failed',
    labelNames: ['channel', 'outcome'] as const,
    registers,
  });
  const paymentIncidents = new Counter({
    name: 'bus_booking_payment_incidents_total',
    help: 'Refunds the processor failed, disputes, and payments that arrived after the hold (kept or refunded)',
    labelNames: ['kind'] as const,
    registers,
  });
  const { overduePendingPayments, onCollectFailure } = options;
  if (overduePendingPayments !== undefined) {
    new Gauge({
      name: 'bus_booking_pending_payment_overdue_bookings',
      help: 'Bookings in PENDING_PAYMENT whose hold expired more than BOOKING_LAPSED_HOLD_GRACE_SECONDS ago',
      registers,
      async collect() {
        try {
          this.set(await overduePendingPayments());
        } catch (error) {
          // No value rather than a stale or a zero one: the series disappears and absent() can tell.
          this.reset();
          this.remove();
          onCollectFailure?.(error);
        }
      },
    });
  }

  for (const transition of bookingTransitions) {
    if (transition !== 'not_booked') transitions.inc({ transition, reason: '' }, 0);
  }
  for (const outcome of ['approved', 'declined']) payments.inc({ outcome }, 0);
  for (const outcome of ['succeeded', 'failed']) refunds.inc({ outcome }, 0);
  for (const step of ['release_seats', 'refund_payment']) {
    for (const outcome of ['succeeded', 'failed']) compensations.inc({ step, outcome }, 0);
  }
  for (const channel of ['email', 'sms']) {
    for (const outcome of ['sent', 'failed']) notifications.inc({ channel, outcome }, 0);
  }
  for (const kind of paymentIncidentKinds) paymentIncidents.inc({ kind }, 0);

  return {
    registry,
    bookingTransition: (transition, reason = '') => transitions.inc({ transition, reason }),
    seatsHeld: (count) => {
      if (count > 0) seatsHeld.inc(count);
    },
    seatsReleased: (count) => {
      if (count > 0) seatsReleased.inc(count);
    },
    payment: (outcome) => payments.inc({ outcome }),
    refund: (outcome, amount) => {
      refunds.inc({ outcome });
      if (outcome === 'succeeded' && amount !== undefined) {
        refundedAmount.inc({ currency: amount.currency }, amount.amountMinor);
      }
    },
    compensation: (step, outcome) => compensations.inc({ step, outcome }),
    notification: (channel, outcome) => notifications.inc({ channel, outcome }),
    paymentIncident: (kind) => paymentIncidents.inc({ kind }),
  };
}
