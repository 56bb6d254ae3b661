// The activity contract between the booking workflow and the workers: names, inputs and results (all plain data),
// and how a business outcome crosses. The workflow imports this module, so it loads nothing but domain types.
import { ApplicationFailure } from '@temporalio/common';
import type { BookingState, BookingStatus, Money, PaymentAction } from '../domain/booking';
import type { DomainError } from '../domain/errors';
import type { LegRange } from '../domain/segments';

/**
 * A business outcome (seat taken, card declined) as it crosses Temporal, raised by activities and the workflow
 * alike: non-retryable, typed by the error code, carrying the DomainError's data, read back with findDomainError.
 */
export function businessFailure(error: DomainError): ApplicationFailure {
  return ApplicationFailure.nonRetryable(error.message, error.code, error.toJSON());
}

export interface SeatRequest {
  passengerId: string;
  seatNumber: string;
  fareClass: string;
}

export interface ReserveSeatsInput {
  bookingId: string;
  tripId: string;
  seats: SeatRequest[];
  /** ISO 8601; the hold lapses on its own at this instant if the workflow never releases it. */
  holdExpiresAt: string;
  /**
   * The legs to hold, [from, to) (leg i runs from the route's stop i to stop i + 1); the whole route when absent,
   * as every reservation before segments. Legs of a seat the booking holds already are not held twice, so a
   * segment change reserves its new legs beside the old ones and ReleaseSeats then keeps only the new.
   */
  legs?: LegRange;
  /** Derived from the booking id and the step, so a retry finds its own earlier work. */
  idempotencyKey: string;
  /**
   * The booking's first snapshot (version 1), required on the creating reservation: seat allocations reference
   * the bookings row, so ReserveSeats records this snapshot and the holds in ONE transaction; a SEAT_UNAVAILABLE
   * then leaves neither a hold nor a booking row. Ignored once the row exists (seat changes may omit it); without
   * it and without a row, ReserveSeats fails non-retryable NOT_FOUND.
   */
  booking?: BookingState;
}

/** Turns the booking's HELD seats BOOKED; non-retryable HOLD_EXPIRED when it holds no seat any more. */
export interface ConfirmSeatsInput {
  bookingId: string;
  tripId: string;
  idempotencyKey: string;
}

export interface ReleaseSeatsInput {
  bookingId: string;
  tripId: string;
  /** The seats to release; all of the booking's active seats when absent. */
  seatNumbers?: string[];
  /** Legs to keep: the booking's allocations are cut down to these and released where they share none. */
  keepLegs?: LegRange;
  idempotencyKey: string;
}

/** Amounts of ProcessPayment and RefundPayment are positive: skip the call for a zero charge or refund. */
export interface ProcessPaymentInput {
  bookingId: string;
  idempotencyKey: string;
  amount: Money;
  /** A gateway token or payment method id (never a card number). */
  paymentToken: string;
  /**
   * The workflow can hand the customer a challenge and wait for its outcome: the answer may then be an open
   * payment. Without it a payment that cannot finish at once is declined, as before payments could stay open.
   */
  allowAction?: boolean;
}

export interface ProcessPaymentResult {
  transactionId: string;
  /** e.g. `visa •••• 4242`. */
  methodMasked: string;
  amount: Money;
}

/** A payment the processor left open: the customer must act (3-D Secure), or the processor is still deciding. */
export interface OpenPaymentResult {
  open: PaymentAction;
  amount: Money;
}

/** ProcessPayment's answer: captured, or (only with `allowAction`) open. A decline is its failure. */
export type ProcessPaymentAnswer = ProcessPaymentResult | OpenPaymentResult;

/** Open answers only for a request that opted in with `allowAction: true`, as the gateway port's ChargeAnswer. */
export type ProcessPaymentAnswerTo<Input extends ProcessPaymentInput> = Input extends { allowAction: true }
  ? ProcessPaymentAnswer
  : ProcessPaymentResult;

export function isOpenPayment(answer: ProcessPaymentAnswer): answer is OpenPaymentResult {
  return 'open' in answer;
}

/** An open payment's attempt, named by the key its ProcessPayment used, so its ledger row is that attempt's. */
export interface SettlePaymentInput {
  bookingId: string;
  /** The attempt's ProcessPayment key: the ledger row of its outcome is written under it, once. */
  idempotencyKey: string;
  intentId: string;
  amount: Money;
}

/** CancelPayment's input: the cancel has a key of its own. */
export interface CancelPaymentInput extends SettlePaymentInput {
  cancelKey: string;
}

/** Where an open payment stands at the processor, its outcome written to the ledger once it has one. */
export type SettlePaymentResult =
  | ({ outcome: 'APPROVED' } & ProcessPaymentResult)
  | { outcome: 'DECLINED'; reason: string }
  | { outcome: 'CANCELED' }
  | { outcome: 'OPEN'; open: PaymentAction };

/**
 * Refunds the processor failed and disputes, as its events told; and money that arrived after the hold, kept for a
 * booking held again or refunded in full.
 */
export type PaymentIncidentKind =
  'refund_failed' | 'dispute_created' | 'late_payment_confirmed' | 'late_payment_refunded';

/** What an operator is told about a booking's money (a log line and `bus_booking_payment_incidents_total`). */
export interface ReportPaymentIncidentInput {
  bookingId: string;
  kind: PaymentIncidentKind;
  /** The processor's refund, dispute or payment id. */
  reference: string;
  reason: string;
}

export interface RefundPaymentInput {
  bookingId: string;
  idempotencyKey: string;
  /** The charge to refund against. */
  transactionId: string;
  amount: Money;
}

export interface RefundPaymentResult {
  refundId: string;
  amount: Money;
}

/**
 * The parameters each template needs are listed in `notificationTemplateParameters` (./notification-templates):
 * amounts in minor units plus `currency`, instants as ISO 8601; a missing or unknown one is VALIDATION_FAILED.
 */
export type NotificationTemplate =
  | 'booking-confirmed'
  | 'booking-changed'
  | 'booking-cancelled'
  | 'booking-expired'
  | 'booking-no-show'
  | 'passengers-cancelled'
  | 'trip-cancelled';

export interface SendEmailNotificationInput {
  bookingId: string;
  idempotencyKey: string;
  template: NotificationTemplate;
  to: string;
  parameters: Record<string, string | number>;
}

export interface SendSmsNotificationInput {
  bookingId: string;
  idempotencyKey: string;
  template: NotificationTemplate;
  to: string;
  parameters: Record<string, string | number>;
}

/**
 * Every activity by its Temporal type name (the names operators see in the Web UI), with the task queue it runs on.
 * The workflow proxies each family on its own queue, so seats, payments and notifications scale apart.
 */
export interface SeatActivities {
  ReserveSeats: (input: ReserveSeatsInput) => Promise<void>;
  ConfirmSeats: (input: ConfirmSeatsInput) => Promise<void>;
  ReleaseSeats: (input: ReleaseSeatsInput) => Promise<void>;
}

export interface PaymentActivities {
  ProcessPayment: <Input extends ProcessPaymentInput>(input: Input) => Promise<ProcessPaymentAnswerTo<Input>>;
  RefundPayment: (input: RefundPaymentInput) => Promise<RefundPaymentResult>;
  /** Asks the processor where an open payment stands; records its outcome once it has one. */
  CheckPayment: (input: SettlePaymentInput) => Promise<SettlePaymentResult>;
  /** Cancels an open payment; answers APPROVED when the customer finished first (money that arrived late). */
  CancelPayment: (input: CancelPaymentInput) => Promise<SettlePaymentResult>;
  ReportPaymentIncident: (input: ReportPaymentIncidentInput) => Promise<void>;
}

export interface NotificationActivities {
  SendEmailNotification: (input: SendEmailNotificationInput) => Promise<void>;
  SendSMSNotification: (input: SendSmsNotificationInput) => Promise<void>;
}

/** Runs on the workflow queue: writes the booking read model that REST and gRPC read from. */
export interface ReadModelActivities {
  RecordBooking: (snapshot: BookingState) => Promise<void>;
}

/**
 * Runs on the workflow queue after a change is recorded: gives each passenger of a confirmed booking one valid
 * ticket for their seat and segment, revoking replaced ones, and revokes a cancelled or expired booking's.
 */
export interface TicketActivities {
  IssueTickets: (snapshot: BookingState) => Promise<void>;
}

export interface CancelTripBookingInput {
  tripId: string;
  bookingId: string;
  reason: string;
  /** The booking's workflow, and the update id that makes a retried activity join the update already sent. */
  bookingWorkflowId: string;
  updateId: string;
}

/** The booking workflow's update a trip's cancellation sends (defined as cancelForTripUpdate in workflows/shared). */
export const cancelForTripUpdateName = 'CancelForTrip';

/** The operator cancelled the booking's trip: sent by the trip's cancellation workflow, once per booking. */
export interface TripCancellationRequest {
  tripId: string;
  reason: string;
}

/** What the booking did about its trip's cancellation; a booking that had ended already changes nothing. */
export interface TripCancellationAnswer {
  outcome: 'CANCELLED' | 'ALREADY_ENDED';
  /** The booking's status afterwards; NOT_BOOKED for a request that never became a booking. */
  status: BookingStatus | 'NOT_BOOKED';
  refunded: Money;
}

export interface CancelTripBookingResult {
  outcome: 'CANCELLED' | 'ALREADY_ENDED';
  status: string;
  refundedMinor: number;
}

/** Runs on the workflow queue: the trip-cancellation workflow's scan of a trip and its per-booking cancel. */
export interface TripCancellationActivities {
  CountOpenTripBookings: (input: { tripId: string }) => Promise<number>;
  ListOpenTripBookings: (input: {
    tripId: string;
    afterBookingId?: string;
    limit: number;
  }) => Promise<string[]>;
  CancelTripBooking: (input: CancelTripBookingInput) => Promise<CancelTripBookingResult>;
}

export interface PaymentReconciliationInput {
  /** How far back the processor's payments and refunds are compared, from the activity's start. */
  lookbackSeconds: number;
}

/** One outcome the ledger lacked, sent to its booking's workflow as the lost webhook would have. */
export interface MendedPaymentOutcome {
  eventId: string;
  kind: string;
  bookingId: string;
  intentId?: string;
  refundId?: string;
  /** What became of it: `applied`, or `no_workflow` for a booking whose workflow has ended. */
  outcome: string;
}

export interface PaymentReconciliationResult {
  /** The start of the window compared (ISO 8601). */
  since: string;
  intentsCompared: number;
  refundsCompared: number;
  mended: MendedPaymentOutcome[];
}

/** Runs on the payments queue, beside the charges: it asks the processor too. */
export interface PaymentReconciliationActivities {
  ReconcilePayments: (input: PaymentReconciliationInput) => Promise<PaymentReconciliationResult>;
}

/** The endpoint and subject one partner webhook delivery workflow serves. */
export interface WebhookDeliveryTarget {
  endpointId: string;
  subjectId: string;
}

/** The subject's next pending delivery to the endpoint, in sequence order; or why the workflow has nothing to do. */
export type NextWebhookDeliveryResult =
  | { kind: 'delivery'; deliveryId: string }
  | { kind: 'none' }
  | { kind: 'stopped'; because: 'disabled' | 'deleted' | 'missing' };

export interface DeliverWebhookInput {
  deliveryId: string;
  /** Attempts already made in this round (0 for the first): a redelivery starts a new round. */
  roundAttempts: number;
  retryScheduleSeconds: number[];
}

/**
 * One attempt's outcome for the workflow: delivered; try again after `delayMs` (the schedule's next step, or the
 * endpoint's Retry-After); or the endpoint is disabled (it answered 410, the schedule ran out, or someone disabled or
 * deleted it) and its workflows stop. `settled`: the delivery was not pending any more (delivered meanwhile).
 */
export type DeliverWebhookResult =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; delayMs: number }
  | { outcome: 'endpoint_stopped'; because: string }
  | { outcome: 'settled' };

export interface PartnerWebhookActivities {
  NextWebhookDelivery: (target: WebhookDeliveryTarget) => Promise<NextWebhookDeliveryResult>;
  DeliverWebhook: (input: DeliverWebhookInput) => Promise<DeliverWebhookResult>;
}

export type BookingActivities = SeatActivities &
  PaymentActivities &
  NotificationActivities &
  ReadModelActivities &
  TicketActivities &
  TripCancellationActivities &
  PaymentReconciliationActivities &
  PartnerWebhookActivities;
