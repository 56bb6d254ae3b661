// Maps BookingView onto the proto Booking and proto enums onto domain values; checks what every request carries.
import type { TicketView } from '../../application/tickets';
import { TicketStatus, type Ticket } from '../../generated/com/example/bookings/v1/ticket';
import type { BookingView, TripCancellationView } from '../../application/interface';
import type { SegmentStopTime } from '../../domain/booking';
import type {
  BookingStatus,
  Money,
  PaymentAction as DomainPaymentAction,
  PaymentStatus,
  PaymentSummary as DomainPaymentSummary,
  Timestamp,
} from '../../domain/booking';
import {
  Booking,
  BookingStatus as BookingStatusMessage,
  PaymentActionStatus,
  PaymentStatus as PaymentStatusMessage,
  type PaymentAction,
  TripCancellationStatus,
  type PaymentSummary,
  type TripCancellation,
} from '../../generated/com/example/bookings/v1/booking';
import type { Money as MoneyMessage } from '../../generated/com/example/common/v1/money';
import { validationFailed } from '../../domain/errors';
import { fieldMessages, isIdempotencyKey, nulCharacterViolations } from '../../domain/validation';

const bookingStatusMessages: Readonly<Record<BookingStatus, BookingStatusMessage>> = {
  PENDING_PAYMENT: BookingStatusMessage.BOOKING_STATUS_PENDING_PAYMENT,
  CONFIRMED: BookingStatusMessage.BOOKING_STATUS_CONFIRMED,
  CANCELLED: BookingStatusMessage.BOOKING_STATUS_CANCELLED,
  EXPIRED: BookingStatusMessage.BOOKING_STATUS_EXPIRED,
  COMPLETED: BookingStatusMessage.BOOKING_STATUS_COMPLETED,
};

const paymentStatusMessages: Readonly<Record<PaymentStatus, PaymentStatusMessage>> = {
  NONE: PaymentStatusMessage.PAYMENT_STATUS_NONE,
  DECLINED: PaymentStatusMessage.PAYMENT_STATUS_DECLINED,
  CAPTURED: PaymentStatusMessage.PAYMENT_STATUS_CAPTURED,
  PARTIALLY_REFUNDED: PaymentStatusMessage.PAYMENT_STATUS_PARTIALLY_REFUNDED,
  REFUNDED: PaymentStatusMessage.PAYMENT_STATUS_REFUNDED,
};

/**
 * The domain status a ListBookings filter names: undefined for BOOKING_STATUS_UNSPECIFIED ("any"), null for a
 * number that is no known status (the caller reports it as a bad field).
 */
export function bookingStatusFilter(status: BookingStatusMessage): BookingStatus | undefined | null {
  if (status === BookingStatusMessage.BOOKING_STATUS_UNSPECIFIED) return undefined;
  const entry = Object.entries(bookingStatusMessages).find(([, message]) => message === status);
  return entry ? (entry[0] as BookingStatus) : null;
}

/** The proto field name of a generated property (`firstName` → `first_name`), as errors name fields. */
function protoFieldName(property: string): string {
  return property.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * Refuses what no BookingService request may carry, whatever its method: U+0000 in any string (the rule REST
 * applies to every string it takes), and a `request_id` that REST would refuse as an Idempotency-Key. Fields
 * are named as in the proto (`passengers[0].first_name`); the error is INVALID_ARGUMENT with BadRequest.
 */
export function assertWellFormedRequest(request: object): void {
  const violations = nulCharacterViolations(request, '', protoFieldName);
  const { requestId } = request as { requestId?: unknown };
  const requestIdNamed = violations.some((violation) => violation.field === 'request_id');
  if (typeof requestId === 'string' && requestId !== '' && !isIdempotencyKey(requestId) && !requestIdNamed) {
    violations.push({
      field: 'request_id',
      message: fieldMessages.idempotencyKey,
    });
  }
  if (violations.length > 0) throw validationFailed(violations);
}

function toMoney(money: Money): MoneyMessage {
  return { amountMinor: money.amountMinor, currency: money.currency };
}

function toDate(timestamp: Timestamp): Date {
  return new Date(timestamp);
}

const paymentActionStatuses: Readonly<Record<DomainPaymentAction['status'], PaymentActionStatus>> = {
  REQUIRES_ACTION: PaymentActionStatus.PAYMENT_ACTION_STATUS_REQUIRES_ACTION,
  PROCESSING: PaymentActionStatus.PAYMENT_ACTION_STATUS_PROCESSING,
};

function toPaymentAction(action: DomainPaymentAction): PaymentAction {
  return {
    status: paymentActionStatuses[action.status],
    intentId: action.intentId,
    clientSecret: action.clientSecret ?? '',
    nextAction:
      action.nextActionType === undefined
        ? undefined
        : { type: action.nextActionType, redirectUrl: action.redirectUrl ?? '' },
  };
}

function toPaymentSummary(payment: DomainPaymentSummary): PaymentSummary {
  return {
    status: paymentStatusMessages[payment.status],
    method: payment.method ?? '',
    lastAttemptAt: payment.lastAttemptAt === undefined ? undefined : toDate(payment.lastAttemptAt),
    declineReason: payment.declineReason ?? '',
    action: payment.action === undefined ? undefined : toPaymentAction(payment.action),
  };
}

/**
 * The proto Booking for a view. Absent optional text becomes '' (proto3 strings have no presence), and
 * `hold_expires_at` is set only while the booking is pending payment, as the contract says.
 */
export function toBookingMessage(view: BookingView): Booking {
  return {
    id: view.id,
    customerId: view.customerId,
    tripId: view.tripId,
    routeId: view.routeId,
    status: bookingStatusMessages[view.status],
    passengers: view.passengers.map((passenger) => ({
      id: passenger.id,
      firstName: passenger.firstName,
      lastName: passenger.lastName,
      email: passenger.email,
      phone: passenger.phone ?? '',
      seatNumber: passenger.seatNumber,
      fareClass: passenger.fareClass,
      passengerType: passenger.passengerType ?? '',
      birthDate: passenger.birthDate ?? '',
    })),
    contactEmail: view.contactEmail,
    contactPhone: view.contactPhone ?? '',
    price: {
      lines: view.price.lines.map((line) => ({
        passengerId: line.passengerId,
        seatNumber: line.seatNumber,
        fareClass: line.fareClass,
        amount: toMoney(line.amount),
        passengerType: line.passengerType ?? '',
        discount: line.discount === undefined ? undefined : toMoney(line.discount),
      })),
      total: toMoney(view.price.total),
      discount:
        view.price.discount === undefined
          ? undefined
          : {
              code: view.price.discount.code,
              kind: view.price.discount.kind,
              value: view.price.discount.value,
              amount: toMoney(view.price.discount.amount),
            },
    },
    amountPaid: toMoney(view.amountPaid),
    amountRefunded: toMoney(view.amountRefunded),
    holdExpiresAt: view.status === 'PENDING_PAYMENT' ? toDate(view.holdExpiresAt) : undefined,
    payment: toPaymentSummary(view.payment),
    departureTime: toDate(view.departureTime),
    createdAt: toDate(view.createdAt),
    updatedAt: toDate(view.updatedAt),
    cancelledAt: view.cancelledAt === undefined ? undefined : toDate(view.cancelledAt),
    cancellationReason: view.cancellationReason ?? '',
    version: view.version,
    segment:
      view.segment === undefined
        ? undefined
        : {
            boardingStop: segmentStop(view.segment.boardingStop),
            alightingStop: segmentStop(view.segment.alightingStop),
            departureTime: view.segment.boardingStop.localTime,
            arrivalTime: view.segment.alightingStop.localTime,
          },
    cancelledPassengers: (view.cancelledPassengers ?? []).map((passenger) => ({
      passengerId: passenger.passengerId,
      cancelledAt: toDate(passenger.cancelledAt),
      paid: toMoney(passenger.paid),
      refund: toMoney(passenger.refund),
    })),
  };
}

function segmentStop(stop: SegmentStopTime) {
  return { code: stop.code, name: stop.name, city: stop.city, timeZone: stop.timeZone };
}

export function toTicketMessage(ticket: TicketView): Ticket {
  return {
    id: ticket.ticketId,
    bookingId: ticket.bookingId,
    passengerId: ticket.passengerId,
    passengerName: ticket.passengerName,
    tripId: ticket.tripId,
    seatNumber: ticket.seatNumber,
    segment: {
      boardingStop: segmentStop(ticket.boardingStop),
      alightingStop: segmentStop(ticket.alightingStop),
      departureTime: ticket.boardingStop.localTime,
      arrivalTime: ticket.alightingStop.localTime,
    },
    status: ticket.status === 'VALID' ? TicketStatus.TICKET_STATUS_VALID : TicketStatus.TICKET_STATUS_REVOKED,
    validFrom: toDate(ticket.validFrom),
    validUntil: toDate(ticket.validUntil),
    issuedAt: toDate(ticket.issuedAt),
    revokedAt: ticket.revokedAt === undefined ? undefined : toDate(ticket.revokedAt),
    revokedReason: ticket.revokedReason,
    qrPayload: ticket.qrPayload,
  };
}

/** The proto TripCancellation for a view. */
export function toTripCancellationMessage(view: TripCancellationView): TripCancellation {
  const { counts } = view;
  return {
    tripId: view.tripId,
    reason: view.reason,
    cancelledAt: new Date(view.cancelledAt),
    status:
      view.status === 'FINISHED'
        ? TripCancellationStatus.TRIP_CANCELLATION_STATUS_FINISHED
        : TripCancellationStatus.TRIP_CANCELLATION_STATUS_RUNNING,
    openAtStart: counts.openAtStart,
    cancelled: counts.cancelled,
    alreadyEnded: counts.alreadyEnded,
    done: counts.done,
    failed: counts.failed,
    remaining: counts.remaining,
    failedBookings: view.failedBookings.map((failure) => ({
      bookingId: failure.bookingId,
      reason: failure.reason,
    })),
  };
}
