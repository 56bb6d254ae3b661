// What the fronts (REST and gRPC) may ask of the application layer; every rule lives behind these calls.
import type { SegmentRequest } from '../domain/segments';
import type { Actor } from '../domain/actor';
import type { BookingView } from '../db/booking-read-model';
import type { PageRequest } from '../db/paging';
import type { PassengerType } from '../domain/passenger-types';
import type { CatalogRoute, CatalogStop } from '../db/route-search';
import type { BookingStatus, FareClass, Money } from '../domain/booking';
import type { Role } from '../domain/roles';
import type { CreateBookingInput, UpdateBookingInput } from '../domain/validation';

import type { AnswerTiming, CommandOptions } from './command-options';
import type { TripCancellationApplication, TripCancellationView } from './trip-cancellations';

export type { BookingView, CommandOptions, PageRequest, TripCancellationView };

export interface Page<T> {
  items: T[];
  /** Opaque; absent on the last page. */
  nextPageToken?: string;
}

export interface CreateBookingOptions extends AnswerTiming {
  /**
   * The id the booking gets, chosen by the front's idempotency mechanism (the REST key store's reservation, or
   * derived from gRPC's request_id): a create naming a booking id already made joins it and answers its outcome;
   * one naming it with another body fails IDEMPOTENCY_KEY_REUSED. A fresh id when absent.
   */
  bookingId?: string;
}

/** Bookings, and the operator's cancellation of a whole trip with every booking on it. */
export interface BookingApplication extends TripCancellationApplication {
  /**
   * Resolves once the seats are held (PENDING_PAYMENT), or throws SEAT_UNAVAILABLE with nothing held, or
   * RATE_LIMITED when the customer's open holds are at the cap. When the answer is due (the configured create
   * answer timeout, or `answerBy`) before the seats are held, throws BOOKING_PROCESSING naming the booking id:
   * the booking goes on, and getBooking tells its outcome.
   */
  createBooking(
    actor: Actor,
    input: CreateBookingInput,
    options?: CreateBookingOptions,
  ): Promise<BookingView>;
  /**
   * The booking; BOOKING_PROCESSING while its create is still holding the seats, and the error the create ended
   * with (e.g. SEAT_UNAVAILABLE) when it ended without a booking.
   */
  getBooking(actor: Actor, bookingId: string): Promise<BookingView>;
  listBookings(actor: Actor, request: PageRequest & { status?: BookingStatus }): Promise<Page<BookingView>>;
  /**
   * Payments, changes and cancellations answer by their answer time (like creates) with what was done: the
   * booking, a refusal, or BOOKING_PROCESSING naming the command when the workflow took it and is still at work;
   * UNAVAILABLE only when nothing was sent. A payment or change of a booking whose trip was cancelled is refused.
   */
  updateBooking(
    actor: Actor,
    bookingId: string,
    input: UpdateBookingInput,
    options?: CommandOptions & { expectedVersion?: number },
  ): Promise<BookingView>;
  cancelBooking(
    actor: Actor,
    bookingId: string,
    input: { reason?: unknown },
    options?: CommandOptions,
  ): Promise<BookingView>;
  /**
   * Cancels some passengers of the booking (BOOKING_PROCESSING and the answer time as cancelBooking); cancelling
   * the last ones cancels the booking. A `quoteId` names a refund quote to refund exactly: NOT_FOUND when unknown,
   * QUOTE_INVALID when it is another booking's or passengers' or the booking changed since, QUOTE_EXPIRED after it.
   */
  cancelPassengers(
    actor: Actor,
    bookingId: string,
    input: { passengerIds?: unknown; quoteId?: unknown; reason?: unknown },
    options?: CommandOptions,
  ): Promise<BookingView>;
  confirmPayment(
    actor: Actor,
    bookingId: string,
    input: { paymentToken?: unknown; paymentMethod?: unknown },
    options?: ConfirmPaymentOptions,
  ): Promise<BookingView>;
}

export interface ConfirmPaymentOptions extends AnswerTiming {
  /**
   * Names the payment attempt (chosen like CreateBookingOptions.bookingId): a repeat with the same attempt id
   * answers the first attempt's outcome, whatever its payment token, and never charges again.
   */
  attemptId?: string;
}

/** A stop and a route as the catalogue lists them. */
export type StopView = CatalogStop;
export type RouteView = CatalogRoute;

export interface SeatMapEntryView {
  seatNumber: string;
  fareClass: FareClass;
  status: 'FREE' | 'TAKEN';
}

/** A fare class of a trip on the segment read: its price and its free seats. */
export interface FareClassAvailabilityView {
  fareClass: string;
  price: Money;
  seatsFree: number;
}

/** What one passenger type of a party pays in a fare class. */
export interface PartyFareLineView {
  passengerType: string;
  count: number;
  unitPrice: Money;
  amount: Money;
}

/** A party's price in one fare class with free seats for all of it that takes one. */
export interface PartyFareView {
  fareClass: string;
  seatsFree: number;
  total: Money;
  lines: PartyFareLineView[];
}

export interface TripAvailabilityView {
  tripId: string;
  departureTime: string;
  arrivalTime: string;
  seatsTotal: number;
  seatsFree: number;
  lowestPrice: Money;
  seatMap: SeatMapEntryView[];
  /** Every fare class of the trip with its segment price, what a party is priced from; not an answer field. */
  fareClasses: FareClassAvailabilityView[];
  /** Only when a party was asked for. */
  partyFares?: PartyFareView[];
}

export interface RouteAvailabilityView {
  routeId: string;
  /** Local calendar date at the route's origin, `YYYY-MM-DD`. */
  date: string;
  /** Legs of the segment read, for prices per segment; not an answer field. */
  legCount: number;
  trips: TripAvailabilityView[];
}

export interface CatalogApplication {
  listRoutes(
    request: PageRequest & { origin?: string; destination?: string; date?: string },
  ): Promise<Page<RouteView>>;
  /** Seats free on every leg of the segment (the whole route when it names no stop), its prices and times. */
  getRouteAvailability(
    routeId: string,
    date: string,
    segment?: SegmentRequest,
    /** A party such as `ADULT:2,CHILD:1`: each trip then carries its prices, and trips without room are left out. */
    passengers?: string,
  ): Promise<RouteAvailabilityView>;
  /** The route's passenger types (the default set when it has none); NOT_FOUND for an unknown route. */
  listPassengerTypes(routeId: string): Promise<readonly PassengerType[]>;
}

export interface UserView {
  id: string;
  email: string;
  displayName: string;
  phone?: string;
  roles: Role[];
  createdAt: string;
}

export interface UserApplication {
  /** `me` names the caller; customers read only themselves, agents and admins anyone. */
  getUser(actor: Actor, userId: string): Promise<UserView>;
}
