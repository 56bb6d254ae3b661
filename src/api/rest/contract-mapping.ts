// Maps between the REST contract's snake_case JSON and the application's camelCase types, in one place.
import type { TicketView, TripRevocationsView } from '../../application/tickets';
import type {
  BookingSegment,
  Money,
  PaymentAction,
  PriceBreakdown,
  SegmentStopTime,
} from '../../domain/booking';
import { minutesToIsoDuration } from '../../application/catalog';
import type {
  TripCancellationView,
  BookingView,
  RouteAvailabilityView,
  RouteView,
  StopView,
  TripAvailabilityView,
  UserView,
} from '../../application/interface';
import type { CreateBookingInput, PassengerInputData, UpdateBookingInput } from '../../domain/validation';
import { partyFareJson } from './fare-mapping';

type JsonObject = Record<string, unknown>;

function asObject(value: unknown): JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

/** Lists pass through as lists (element by element); anything else is left for the application to reject. */
function mapList(value: unknown, mapItem: (item: unknown) => unknown): unknown {
  return Array.isArray(value) ? value.map(mapItem) : value;
}

export function moneyJson(money: Money) {
  return { amount_minor: money.amountMinor, currency: money.currency };
}

function passengerInput(value: unknown): PassengerInputData {
  const passenger = asObject(value);
  return {
    firstName: passenger.first_name,
    lastName: passenger.last_name,
    email: passenger.email,
    phone: passenger.phone,
    seatNumber: passenger.seat_number,
    fareClass: passenger.fare_class,
    passengerType: passenger.passenger_type,
    birthDate: passenger.birth_date,
  };
}

/** Money as a request names it; anything else is left for the application to reject. */
function moneyInput(value: unknown): unknown {
  if (value === undefined || value === null) return value;
  const { amount_minor: amountMinor, currency } = asObject(value);
  return { amountMinor, currency };
}

export function createBookingInput(body: unknown): CreateBookingInput {
  const request = asObject(body);
  return {
    tripId: request.trip_id,
    passengers: mapList(request.passengers, passengerInput),
    contactEmail: request.contact_email,
    contactPhone: request.contact_phone,
    boardingStop: request.boarding_stop,
    alightingStop: request.alighting_stop,
    discountCode: request.discount_code,
    expectedTotal: moneyInput(request.expected_total),
  };
}

export function updateBookingInput(body: unknown): UpdateBookingInput {
  const request = asObject(body);
  return {
    seatChanges: mapList(request.seat_changes, (value) => {
      const change = asObject(value);
      return {
        passengerId: change.passenger_id,
        seatNumber: change.seat_number,
        fareClass: change.fare_class,
      };
    }),
    addPassengers: mapList(request.add_passengers, passengerInput),
    passengerUpdates: mapList(request.passenger_updates, (value) => {
      const update = asObject(value);
      return {
        passengerId: update.passenger_id,
        firstName: update.first_name,
        lastName: update.last_name,
        email: update.email,
        phone: update.phone,
      };
    }),
    boardingStop: request.boarding_stop,
    alightingStop: request.alighting_stop,
    expectedTotal: moneyInput(request.expected_total),
  };
}

export function cancelBookingInput(body: unknown): { reason?: unknown } {
  const request = asObject(body);
  return request.reason === undefined ? {} : { reason: request.reason };
}

export function cancelPassengersInput(body: unknown): {
  passengerIds?: unknown;
  quoteId?: unknown;
  reason?: unknown;
} {
  const request = asObject(body);
  return { passengerIds: request.passenger_ids, quoteId: request.quote_id, reason: request.reason };
}

export function cancelTripInput(body: unknown): { reason?: unknown } {
  return { reason: asObject(body).reason };
}

/** The contract's TripCancellation. */
export function tripCancellationJson(cancellation: TripCancellationView) {
  const { counts } = cancellation;
  return {
    trip_id: cancellation.tripId,
    reason: cancellation.reason,
    cancelled_at: cancellation.cancelledAt,
    status: cancellation.status,
    open_at_start: counts.openAtStart,
    cancelled: counts.cancelled,
    already_ended: counts.alreadyEnded,
    done: counts.done,
    failed: counts.failed,
    remaining: counts.remaining,
    failed_bookings: cancellation.failedBookings.map((failure) => ({
      booking_id: failure.bookingId,
      reason: failure.reason,
    })),
  };
}

export function confirmPaymentInput(body: unknown): { paymentToken?: unknown; paymentMethod?: unknown } {
  const { payment_token: paymentToken, payment_method: paymentMethod } = asObject(body);
  return { paymentToken, ...(paymentMethod === undefined ? {} : { paymentMethod }) };
}

/** The contract's PriceBreakdown: each passenger's fare with their type and discount, and the code applied. */
export function priceJson(price: PriceBreakdown) {
  return {
    lines: price.lines.map((line) => ({
      passenger_id: line.passengerId,
      seat_number: line.seatNumber,
      fare_class: line.fareClass,
      amount: moneyJson(line.amount),
      passenger_type: line.passengerType ?? null,
      discount: line.discount === undefined ? null : moneyJson(line.discount),
    })),
    total: moneyJson(price.total),
    discount:
      price.discount === undefined
        ? null
        : {
            code: price.discount.code,
            kind: price.discount.kind,
            value: price.discount.value,
            amount: moneyJson(price.discount.amount),
          },
  };
}

/** The contract's Booking: every nullable field present, `null` when it does not apply. */
export function bookingJson(booking: BookingView) {
  return {
    id: booking.id,
    customer_id: booking.customerId,
    trip_id: booking.tripId,
    route_id: booking.routeId,
    status: booking.status,
    passengers: booking.passengers.map((passenger) => ({
      id: passenger.id,
      first_name: passenger.firstName,
      last_name: passenger.lastName,
      email: passenger.email,
      phone: passenger.phone ?? null,
      seat_number: passenger.seatNumber,
      fare_class: passenger.fareClass,
      passenger_type: passenger.passengerType ?? null,
      birth_date: passenger.birthDate ?? null,
    })),
    contact_email: booking.contactEmail,
    contact_phone: booking.contactPhone ?? null,
    price: priceJson(booking.price),
    amount_paid: moneyJson(booking.amountPaid),
    amount_refunded: moneyJson(booking.amountRefunded),
    // Only a booking waiting for payment holds seats; the hold of any other booking is over.
    hold_expires_at: booking.status === 'PENDING_PAYMENT' ? booking.holdExpiresAt : null,
    payment: {
      status: booking.payment.status,
      method: booking.payment.method ?? null,
      last_attempt_at: booking.payment.lastAttemptAt ?? null,
      decline_reason: booking.payment.declineReason ?? null,
      action: booking.payment.action === undefined ? null : paymentActionJson(booking.payment.action),
    },
    departure_time: booking.departureTime,
    created_at: booking.createdAt,
    updated_at: booking.updatedAt,
    cancelled_at: booking.cancelledAt ?? null,
    cancellation_reason: booking.cancellationReason ?? null,
    version: booking.version,
    segment: booking.segment === undefined ? null : segmentJson(booking.segment),
    cancelled_passengers: (booking.cancelledPassengers ?? []).map((passenger) => ({
      passenger_id: passenger.passengerId,
      cancelled_at: passenger.cancelledAt,
      paid: moneyJson(passenger.paid),
      refund: moneyJson(passenger.refund),
    })),
  };
}

function segmentStopJson(stop: SegmentStopTime) {
  return { code: stop.code, name: stop.name, city: stop.city, time_zone: stop.timeZone };
}

function segmentJson(segment: Pick<BookingSegment, 'boardingStop' | 'alightingStop'>) {
  return {
    boarding_stop: segmentStopJson(segment.boardingStop),
    alighting_stop: segmentStopJson(segment.alightingStop),
    departure_time: segment.boardingStop.localTime,
    arrival_time: segment.alightingStop.localTime,
  };
}

/** The strong entity tag of a booking: its version in quotes. */
export function bookingEntityTag(booking: Pick<BookingView, 'version'>): string {
  return `"${booking.version}"`;
}

function stopJson(stop: StopView) {
  return {
    code: stop.code,
    name: stop.name,
    city: stop.city,
    country_code: stop.countryCode,
    time_zone: stop.timeZone,
  };
}

export function routeJson(route: RouteView) {
  return {
    id: route.id,
    code: route.code,
    origin: stopJson(route.origin),
    destination: stopJson(route.destination),
    intermediate_stops: route.intermediateStops.map(stopJson),
    operator_name: route.operatorName,
    distance_km: route.distanceKm,
    typical_duration: minutesToIsoDuration(route.typicalDurationMinutes),
    matched_stops: {
      boarding_stop: route.matchedStops.boardingStopCode,
      alighting_stop: route.matchedStops.alightingStopCode,
    },
  };
}

function tripAvailabilityJson(trip: TripAvailabilityView) {
  return {
    trip_id: trip.tripId,
    departure_time: trip.departureTime,
    arrival_time: trip.arrivalTime,
    seats_total: trip.seatsTotal,
    seats_free: trip.seatsFree,
    lowest_price: moneyJson(trip.lowestPrice),
    seat_map: trip.seatMap.map((seat) => ({
      seat_number: seat.seatNumber,
      fare_class: seat.fareClass,
      status: seat.status,
    })),
    ...(trip.partyFares === undefined ? {} : { party_fares: trip.partyFares.map(partyFareJson) }),
  };
}

export function routeAvailabilityJson(availability: RouteAvailabilityView) {
  return {
    route_id: availability.routeId,
    date: availability.date,
    trips: availability.trips.map(tripAvailabilityJson),
  };
}

export function userJson(user: UserView) {
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    phone: user.phone ?? null,
    roles: user.roles,
    created_at: user.createdAt,
  };
}

export function ticketJson(ticket: TicketView) {
  return {
    id: ticket.ticketId,
    booking_id: ticket.bookingId,
    passenger_id: ticket.passengerId,
    passenger_name: ticket.passengerName ?? null,
    trip_id: ticket.tripId,
    seat_number: ticket.seatNumber,
    segment: segmentJson(ticket),
    status: ticket.status,
    valid_from: ticket.validFrom,
    valid_until: ticket.validUntil,
    issued_at: ticket.issuedAt,
    revoked_at: ticket.revokedAt ?? null,
    revoked_reason: ticket.revokedReason ?? null,
    qr_payload: ticket.qrPayload ?? null,
  };
}

export function tripRevocationsJson(view: TripRevocationsView) {
  return {
    trip_id: view.tripId,
    revocations: view.revocations.map((revocation) => ({
      ticket_id: revocation.ticketId,
      revoked_at: revocation.revokedAt.toISOString(),
      reason: revocation.reason,
    })),
  };
}

/** An open payment as the contract's PaymentAction: what the customer's client needs to finish it. */
function paymentActionJson(action: PaymentAction) {
  return {
    status: action.status,
    intent_id: action.intentId,
    client_secret: action.clientSecret ?? null,
    next_action:
      action.nextActionType === undefined
        ? null
        : { type: action.nextActionType, redirect_url: action.redirectUrl ?? null },
  };
}
