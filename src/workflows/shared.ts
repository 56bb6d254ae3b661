// Definitions shared by the booking workflow and its callers: search attributes, ids, updates, query, start summary.
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  BookingState,
  FareClass,
  FarePrices,
  PassengerInput,
  RefundRule,
  Timestamp,
} from '../domain/booking';
import type { BoardingRequest } from '../domain/boarding';
import type { DiscountTerms } from '../domain/booking-price';
import type { PassengerType } from '../domain/passenger-types';
import type { PaymentEvent } from '../domain/payment-events';
import type { RefundQuote } from '../domain/refund-quotes';
import {
  cancelForTripUpdateName,
  type TripCancellationAnswer,
  type TripCancellationRequest,
} from '../activities/interface';
import { idempotencyKeyReused, type DomainErrorData } from '../domain/errors';
import { seatNumberList } from '../domain/seat-layout';
import type { BookingSegment, SegmentChangeTerms } from '../domain/segments';
import type { TaskQueueNames } from '../domain/task-queues';
import type { CancelBookingCommand, ConfirmPaymentCommand, UpdateBookingInput } from '../domain/validation';

/** Search attributes operators filter on in the Temporal Web UI (`BookingStatus='CONFIRMED'`). */
export const searchAttributes = {
  bookingStatus: defineSearchAttributeKey('BookingStatus', SearchAttributeType.KEYWORD),
  routeId: defineSearchAttributeKey('RouteId', SearchAttributeType.KEYWORD),
  tripId: defineSearchAttributeKey('TripId', SearchAttributeType.KEYWORD),
  customerId: defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD),
  departureTime: defineSearchAttributeKey('DepartureTime', SearchAttributeType.DATETIME),
  /** Stop codes of the booking's segment: "every booking boarding at HAJ today" with DepartureTime. */
  boardingStop: defineSearchAttributeKey('BoardingStop', SearchAttributeType.KEYWORD),
  alightingStop: defineSearchAttributeKey('AlightingStop', SearchAttributeType.KEYWORD),
} as const;

export const allSearchAttributes = Object.values(searchAttributes);

/** One workflow per booking, found by id from the booking id alone. */
export function bookingWorkflowId(bookingId: string): string {
  return `booking-${bookingId}`;
}

/** The workflow function's registered name, for callers that start it without importing workflow code. */
export const bookingWorkflowType = 'bookingWorkflow';

/** The workflow list's line for a booking (its static summary, set at start): tells bookings apart at a glance. */
export function bookingSummary(input: {
  tripId: string;
  departureTime: string;
  passengers: readonly { seatNumber: string }[];
}): string {
  return `Booking of seats ${seatNumberList(input.passengers)} on trip ${input.tripId} departing ${input.departureTime}`;
}

/** Durations the workflow needs, computed by the application layer from Config so tests can shorten them. */
export interface BookingTimings {
  holdDurationMs: number;
  changeCutoffMs: number;
  activityStartToCloseMs: number;
  /** First retry delay of a transiently failing activity; later retries back off exponentially. */
  activityRetryInitialIntervalMs: number;
  activityRetryMaximumIntervalMs: number;
  /** Boarding grace past the departure from the boarding stop; absent in bookings started before boarding. */
  noShowGraceMs?: number;
}

/** Everything a booking workflow needs to run without reading the database itself. */
export interface BookingWorkflowInput {
  bookingId: string;
  customerId: string;
  tripId: string;
  routeId: string;
  departureTime: Timestamp;
  /** IANA time zone of the boarding stop: customers read departure times in it. */
  originTimeZone: string;
  /**
   * The stops the passengers board and alight at, the legs between them held for every seat. `departureTime` is
   * then the departure from the boarding stop. Bookings started before segments hold the whole route.
   */
  segment?: BookingSegment;
  /** Arrival at the alighting stop: the booking completes then. The departure time when absent. */
  arrivalTime?: Timestamp;
  passengers: PassengerInput[];
  /**
   * One id per passenger, in order, chosen with the booking id by the caller. A lost first workflow task may have
   * stored the passengers already, and its retry may draw random numbers in another order (another update came
   * with it), so the ids must come from the history. Bookings started before this field drew them at opening.
   */
  passengerIds?: string[];
  contactEmail: string;
  contactPhone?: string;
  /** The trip's price per fare class when the booking was made. */
  farePrices: FarePrices;
  /** Seat number → fare class of the bus layout: a seat outside it, or of another class, is refused. */
  seatClasses: Record<string, FareClass>;
  refundRule: RefundRule;
  /**
   * The route's passenger types when the booking was made: the create priced with them, and a partial cancellation
   * keeps their companion rules. Absent on bookings made before types (all adults; the default set for those rules).
   */
  passengerTypes?: PassengerType[];
  /** Legs of the booked segment, for passenger types priced per segment. */
  legCount?: number;
  /** The discount code the booking redeems, its terms as they were when it was made. */
  discount?: DiscountTerms;
  maxPassengers: number;
  timings: BookingTimings;
  /** Where the activities run; the standard `taskQueues` (domain/task-queues) when absent. */
  taskQueues?: TaskQueueNames;
}

/** How a booking workflow ended: a booking that ran its course, or a request that never became a booking. */
export type BookingWorkflowResult =
  { outcome: 'BOOKING_ENDED'; booking: BookingState } | { outcome: 'NOT_BOOKED'; error: DomainErrorData };

/** The create as the application admitted it: its fingerprint tells a retry from another request. */
export interface CreateBookingRequest {
  requestFingerprint: string;
}

/** Commands arrive validated by the application layer; the workflow checks them against the booking only. */
export type ConfirmPaymentRequest = ConfirmPaymentCommand;

export interface UpdateBookingRequest {
  /** Checked in the update's validator: what a change may name depends on the booking's passengers. */
  changes: UpdateBookingInput;
  /** The version the caller last saw (ETag / expected_version); a stale one answers VERSION_MISMATCH. */
  expectedVersion?: number;
  /** Present when `changes` names a new boarding or alighting stop: the new segment, its prices and times. */
  segmentChange?: SegmentChangeTerms;
}

export type CancelBookingRequest = CancelBookingCommand;

/** Some passengers leave the booking; the application validated the ids and any quote's expiry. */
export interface CancelPassengersRequest {
  passengerIds: string[];
  reason?: string;
  /** A refund quote the application found usable: the cancellation refunds exactly its total. */
  quote?: RefundQuote;
}

/** A scanned ticket's passenger boarding at a stop; the application checked the ticket itself. */
export type RecordBoardingRequest = BoardingRequest;

/** Sent with the start (update-with-start): answers once the seats are held, or fails with SEAT_UNAVAILABLE. */
export const createBookingUpdate = defineUpdate<BookingState, [CreateBookingRequest]>('CreateBooking');
export const confirmPaymentUpdate = defineUpdate<BookingState, [ConfirmPaymentRequest]>('ConfirmPayment');
export const updateBookingUpdate = defineUpdate<BookingState, [UpdateBookingRequest]>('UpdateBooking');
export const cancelBookingUpdate = defineUpdate<BookingState, [CancelBookingRequest]>('CancelBooking');
export const recordBoardingUpdate = defineUpdate<BookingState, [RecordBoardingRequest]>('RecordBoarding');
export const cancelPassengersUpdate = defineUpdate<BookingState, [CancelPassengersRequest]>(
  'CancelPassengers',
);
/**
 * A cancel that came while the booking was still being created (it had no row yet). A signal, not an update:
 * Temporal records it even while no worker runs the workflow, or with the workflow's start, and the workflow
 * applies it as soon as the seats are held.
 */
export const requestCancellationSignal = defineSignal<[CancelBookingRequest]>('RequestCancellation');
/**
 * Cancels the booking because its trip was cancelled, refunding everything captured. Accepted in any state, even
 * while the seats are still being held (it then waits for them): answering an ended booking is a no-op, so a
 * retried or repeated call never cancels or refunds twice.
 */
export const cancelForTripUpdate = defineUpdate<TripCancellationAnswer, [TripCancellationRequest]>(
  cancelForTripUpdateName,
);
export type { TripCancellationAnswer, TripCancellationRequest };
/**
 * What the card processor said about the booking's payments after the fact (a verified webhook, or the
 * reconciliation finding an outcome no webhook brought). A signal: the processor's event is recorded once by its
 * id before it is sent, Temporal keeps it while no worker runs, and the workflow ignores an event id it has seen.
 */
export const paymentEventSignal = defineSignal<[PaymentEvent]>('PaymentEvent');
export type { PaymentEvent };
/** The booking as the workflow holds it right now (before the read model catches up). */
export const bookingStateQuery = defineQuery<BookingState | undefined>('BookingState');

/**
 * Memo field holding a keyed hash (the cipher's blind index) of the validated create command: a booking id
 * named again with another body is told apart from a retry without writing the passengers' details into Temporal.
 */
export const createRequestMemoKey = 'createRequestFingerprint';

/**
 * The create update's check against the fingerprint the workflow was started with (its memo): a booking id
 * started by one request refuses another request's create, IDEMPOTENCY_KEY_REUSED, never joins it.
 */
export function assertSameCreateRequest(started: unknown, request: CreateBookingRequest | undefined): void {
  if (typeof started === 'string' && request !== undefined && request.requestFingerprint !== started) {
    throw idempotencyKeyReused();
  }
}

/** Search attribute values for a booking; set at start and upserted on every transition. */
export function bookingSearchAttributes(
  booking: Pick<BookingState, 'status' | 'routeId' | 'tripId' | 'customerId' | 'departureTime' | 'segment'>,
): SearchAttributePair[] {
  // Bookings made before segments set no stops: their histories replay with the attributes they were given.
  const segment = booking.segment;
  return [
    { key: searchAttributes.bookingStatus, value: booking.status },
    { key: searchAttributes.routeId, value: booking.routeId },
    { key: searchAttributes.tripId, value: booking.tripId },
    { key: searchAttributes.customerId, value: booking.customerId },
    { key: searchAttributes.departureTime, value: new Date(booking.departureTime) },
    ...(segment === undefined
      ? []
      : [
          { key: searchAttributes.boardingStop, value: segment.boardingStopCode },
          { key: searchAttributes.alightingStop, value: segment.alightingStopCode },
        ]),
  ];
}
