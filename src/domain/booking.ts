// Booking data shapes: plain JSON-safe values the workflow keeps in its state and both fronts render.

export const bookingStatuses = ['PENDING_PAYMENT', 'CONFIRMED', 'CANCELLED', 'EXPIRED', 'COMPLETED'] as const;
export type BookingStatus = (typeof bookingStatuses)[number];

export const fareClasses = ['STANDARD', 'PREMIUM'] as const;
export type FareClass = (typeof fareClasses)[number];

export const paymentStatuses = ['NONE', 'DECLINED', 'CAPTURED', 'PARTIALLY_REFUNDED', 'REFUNDED'] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

/** What a caller asks of a booking; names the action in BOOKING_STATE_CONFLICT errors. */
export type BookingAction = 'confirm-payment' | 'cancel' | 'update' | 'expire' | 'complete' | 'board';

/** RFC 3339 instant as produced by `Date.prototype.toISOString()` (UTC). Strings survive JSON unchanged. */
export type Timestamp = string;

/** Integer minor units (cents) in one ISO 4217 currency. */
export interface Money {
  readonly amountMinor: number;
  readonly currency: string;
}

export interface PassengerInput {
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone?: string;
  /** Empty for a passenger whose type takes no seat (an infant on a lap). */
  readonly seatNumber: string;
  readonly fareClass: FareClass;
  /** The route's passenger type (ADULT, CHILD…); absent on passengers booked before types, who travel as adults. */
  readonly passengerType?: string;
  /** `YYYY-MM-DD`, for types with an age range: the age is checked on the day of travel. */
  readonly birthDate?: string;
}

export interface Passenger extends PassengerInput {
  readonly id: string;
}

export interface PriceLine {
  readonly passengerId: string;
  /** Empty for a passenger who takes no seat (an infant on a lap). */
  readonly seatNumber: string;
  readonly fareClass: FareClass;
  /** What this passenger pays: after the discount, when there is one. */
  readonly amount: Money;
  /** The passenger type the fare was priced for; absent on a passenger priced as before types (an adult). */
  readonly passengerType?: string;
  /** The part of this passenger's fare the discount code took off (`amount` is what is left). */
  readonly discount?: Money;
}

/** A discount code as a price applies it: the code's terms and what it took off the whole booking. */
export interface AppliedDiscount {
  readonly code: string;
  readonly kind: 'amount' | 'percent';
  /** Minor units for `amount`, whole percent for `percent`. */
  readonly value: number;
  readonly amount: Money;
}

export interface PriceBreakdown {
  readonly lines: readonly PriceLine[];
  /** The sum of the lines' amounts. */
  readonly total: Money;
  readonly discount?: AppliedDiscount;
}

/** The trip's price per fare class; a class missing here is not sold on that trip. */
export type FarePrices = Readonly<Partial<Record<FareClass, Money>>>;

/**
 * One tier of a refund rule: a cancellation at least `minimumNoticeMs` before departure gets
 * `refundPercent` of the net amount paid back.
 */
export interface RefundTier {
  readonly minimumNoticeMs: number;
  readonly refundPercent: number;
}

/**
 * A fare's refund rule. Tiers are checked from the longest notice down; the first that matches wins and
 * no match refunds nothing. At or after departure `afterDepartureRefundPercent` applies instead.
 */
export interface RefundRule {
  readonly name: string;
  readonly tiers: readonly RefundTier[];
  readonly afterDepartureRefundPercent: number;
  /** Share of a no-show passenger's fare given back; absent means nothing, as under the standard rule. */
  readonly noShowRefundPercent?: number;
}

/**
 * A payment the processor has not finished (payment as a conversation): the customer's challenge (3-D Secure) or
 * the processor still deciding. The booking stays PENDING_PAYMENT while it is open; its outcome comes later.
 */
export interface PaymentAction {
  readonly status: 'REQUIRES_ACTION' | 'PROCESSING';
  /** The processor's id of the attempt (Stripe's PaymentIntent). */
  readonly intentId: string;
  /** The processor's kind of next step, e.g. Stripe's `use_stripe_sdk` or `redirect_to_url`. */
  readonly nextActionType?: string;
  readonly redirectUrl?: string;
  /**
   * What the customer's client confirms the attempt with. Only in the answer to the payment request: never kept in
   * the booking the read model stores.
   */
  readonly clientSecret?: string;
}

/** Something about the booking's money an operator must look at: a refund the processor failed, a dispute. */
export interface PaymentIncident {
  readonly kind: 'REFUND_FAILED' | 'DISPUTE_CREATED';
  /** The processor's event that told of it. */
  readonly eventId: string;
  /** The processor's refund or dispute id. */
  readonly reference: string;
  readonly amount: Money;
  readonly reason: string;
  readonly recordedAt: Timestamp;
}

export interface PaymentSummary {
  readonly status: PaymentStatus;
  /** Present while a payment is open at the processor. */
  readonly action?: PaymentAction;
  /** Masked, e.g. `visa •••• 4242`; never a card number. */
  readonly method?: string;
  readonly lastAttemptAt?: Timestamp;
  readonly declineReason?: string;
}

export interface PaymentAttempt {
  readonly attemptNumber: number;
  readonly attemptedAt: Timestamp;
  readonly outcome: 'APPROVED' | 'DECLINED';
  readonly amount: Money;
  readonly method?: string;
  readonly declineReason?: string;
}

/** Everything the booking workflow tracks; also the source of the Booking resource. */
export interface BookingState {
  readonly id: string;
  readonly customerId: string;
  readonly tripId: string;
  readonly routeId: string;
  readonly status: BookingStatus;
  readonly passengers: readonly Passenger[];
  readonly contactEmail: string;
  readonly contactPhone?: string;
  readonly price: PriceBreakdown;
  readonly amountPaid: Money;
  readonly amountRefunded: Money;
  readonly holdExpiresAt: Timestamp;
  readonly payment: PaymentSummary;
  readonly paymentAttempts: readonly PaymentAttempt[];
  /** Refunds the processor failed and disputes, as its events told them; absent until the first. */
  readonly paymentIncidents?: readonly PaymentIncident[];
  /** Snapshot of the fare's rule when the booking was made: later fare changes do not alter its terms. */
  readonly refundRule: RefundRule;
  /** Departure from the boarding stop (the trip's departure for a whole-route booking). */
  readonly departureTime: Timestamp;
  /** Where the passengers board and alight, with local times; absent on bookings made before segments. */
  readonly segment?: BookingSegment;
  /** Starts at 1 and grows with every accepted change; the REST ETag and gRPC expected_version. */
  readonly version: number;
  readonly createdAt: Timestamp;
  readonly updatedAt: Timestamp;
  readonly confirmedAt?: Timestamp;
  readonly cancelledAt?: Timestamp;
  readonly cancellationReason?: string;
  /** Passengers who boarded, in scan order; absent until the first boarding. */
  readonly boardings?: readonly Boarding[];
  /** When the passengers not aboard by the end of the boarding grace period became no-shows. */
  readonly noShowsRecordedAt?: Timestamp;
  /** Passengers cancelled out of the booking while it went on, in cancellation order; absent until the first. */
  readonly cancelledPassengers?: readonly CancelledPassenger[];
}

/** A passenger cancelled out of a booking that goes on: what they had paid and what of it came back. */
export interface CancelledPassenger {
  readonly passengerId: string;
  readonly cancelledAt: Timestamp;
  readonly paid: Money;
  readonly refund: Money;
}

/** One passenger's boarding, as the workflow records it: when, at which stop, by whom and from which device. */
export interface Boarding {
  readonly passengerId: string;
  readonly boardedAt: Timestamp;
  readonly stopCode: string;
  /** The user (driver, agent) who scanned the ticket. */
  readonly actorId: string;
  /** The scanning device, when it names itself. */
  readonly deviceId?: string;
}

// ---- Segments: the rules are in segments.ts ----

/**
 * Where the passengers board and alight, as positions in the route's stop list (0 is the origin). Leg `i` runs
 * from stop `i` to stop `i + 1`; the segment covers the half-open leg range [boardingPosition, alightingPosition).
 */
export interface SegmentPositions {
  readonly boardingPosition: number;
  readonly alightingPosition: number;
}

/** A half-open range of legs [from, to) as the seat inventory stores it. */
export interface LegRange {
  readonly from: number;
  readonly to: number;
}

/** A segment as the booking keeps it: stop codes and positions, JSON-safe for workflow state. */
export interface Segment extends SegmentPositions {
  readonly boardingStopCode: string;
  readonly alightingStopCode: string;
}

/** A stop as a booking answer shows it, with the local time the bus is there. */
export interface SegmentStopTime {
  readonly code: string;
  readonly name: string;
  readonly city: string;
  readonly timeZone: string;
  /** RFC 3339 with the stop's own UTC offset. */
  readonly localTime: string;
}

/** The segment a booking keeps and shows: its stops with their local times, and the legs it holds. */
export interface BookingSegment extends Segment {
  readonly boardingStop: SegmentStopTime;
  readonly alightingStop: SegmentStopTime;
}
