// The events partners hear by webhook: their types and payloads, and which of them a booking snapshot states.
import type { BookingState, Money, Passenger } from './booking';
import { validationFailed } from './errors';

/** Every event type a partner can subscribe to, in the order the contract lists them. */
export const partnerEventTypes = [
  'booking.confirmed',
  'booking.changed',
  'booking.cancelled',
  'booking.expired',
  'trip.cancelled',
  'passenger.boarded',
  'passenger.no_show',
  'refund.failed',
  'payment.action_required',
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'payment.disputed',
] as const;
export type PartnerEventType = (typeof partnerEventTypes)[number];

export function isPartnerEventType(value: string): value is PartnerEventType {
  return (partnerEventTypes as readonly string[]).includes(value);
}

/** Money as every contract writes it: integer minor units and an ISO 4217 code. */
export interface EventMoney {
  amount_minor: number;
  currency: string;
}

export interface EventPassenger {
  passenger_id: string;
  /** Empty for a passenger who takes no seat (an infant on a lap). */
  seat_number: string;
  fare_class: string;
  passenger_type?: string;
}

/** What every booking event carries, so a partner acts without calling back. */
export interface BookingEventBase {
  booking_id: string;
  trip_id: string;
  route_id: string;
  /** Grows by one with every event of this booking: a receiver applies them in this order and skips ones it has. */
  sequence: number;
  status: string;
  departure_time: string;
  boarding_stop?: string;
  alighting_stop?: string;
  passengers: EventPassenger[];
  total_price: EventMoney;
  amount_paid: EventMoney;
  amount_refunded: EventMoney;
}

/**
 * An event as recorded before it has its sequence: its type, the fact it states (`key`, unique per subject, so a
 * snapshot written again never records it twice) and its own fields.
 */
export interface PartnerEventDraft {
  type: PartnerEventType;
  key: string;
  occurredAt: string;
  fields: Record<string, unknown>;
}

/** A draft with its subject and sequence: the payload a partner receives as `data`. */
export function eventData(
  subject: Omit<BookingEventBase, 'sequence'> | Record<string, unknown>,
  sequence: number,
  draft: PartnerEventDraft,
): Record<string, unknown> {
  return { ...subject, sequence, ...draft.fields };
}

function money(value: Money): EventMoney {
  return { amount_minor: value.amountMinor, currency: value.currency };
}

function passengerOf(passenger: Passenger): EventPassenger {
  return {
    passenger_id: passenger.id,
    seat_number: passenger.seatNumber,
    fare_class: passenger.fareClass,
    ...(passenger.passengerType === undefined ? {} : { passenger_type: passenger.passengerType }),
  };
}

/** The booking's part of every one of its events, as it stands in this snapshot. No personal data. */
export function bookingEventBase(booking: BookingState): Omit<BookingEventBase, 'sequence'> {
  return {
    booking_id: booking.id,
    trip_id: booking.tripId,
    route_id: booking.routeId,
    status: booking.status,
    departure_time: booking.departureTime,
    ...(booking.segment
      ? { boarding_stop: booking.segment.boardingStopCode, alighting_stop: booking.segment.alightingStopCode }
      : {}),
    passengers: booking.passengers.map(passengerOf),
    total_price: money(booking.price.total),
    amount_paid: money(booking.amountPaid),
    amount_refunded: money(booking.amountRefunded),
  };
}

/** What a booking.changed compares: a change a partner must hear of moves a seat, a passenger, the stops or the price. */
export function itineraryOf(booking: BookingState): string {
  return JSON.stringify([
    booking.passengers.map((passenger) => [passenger.id, passenger.seatNumber, passenger.fareClass]),
    booking.segment?.boardingStopCode ?? null,
    booking.segment?.alightingStopCode ?? null,
    booking.price.total.amountMinor,
  ]);
}

/**
 * Every fact this snapshot states that a partner hears of, in the order they happened, each keyed so that writing
 * the same snapshot (or a later one) again states it once. `lastItinerary` is the itinerary of the booking's latest
 * confirmed or changed event, if any: a confirmed booking whose itinerary differs from it has changed.
 */
export function bookingEventDrafts(booking: BookingState, lastItinerary?: string): PartnerEventDraft[] {
  const drafts: PartnerEventDraft[] = [];
  for (const attempt of booking.paymentAttempts) {
    drafts.push(
      attempt.outcome === 'APPROVED'
        ? {
            type: 'payment.succeeded',
            key: `payment.succeeded:${attempt.attemptNumber}`,
            occurredAt: attempt.attemptedAt,
            fields: {
              attempt_number: attempt.attemptNumber,
              amount: money(attempt.amount),
              ...(attempt.method ? { method: attempt.method } : {}),
            },
          }
        : {
            type: 'payment.failed',
            key: `payment.failed:${attempt.attemptNumber}`,
            occurredAt: attempt.attemptedAt,
            fields: {
              attempt_number: attempt.attemptNumber,
              amount: money(attempt.amount),
              reason: attempt.declineReason ?? 'declined',
            },
          },
    );
  }
  const action = booking.payment.action;
  if (action?.status === 'REQUIRES_ACTION') {
    drafts.push({
      type: 'payment.action_required',
      key: `payment.action_required:${action.intentId}`,
      occurredAt: booking.payment.lastAttemptAt ?? booking.updatedAt,
      fields: {
        intent_id: action.intentId,
        ...(action.nextActionType ? { next_action_type: action.nextActionType } : {}),
      },
    });
  }
  const confirmedAt = booking.confirmedAt;
  if (confirmedAt !== undefined) {
    drafts.push({
      type: 'booking.confirmed',
      key: 'booking.confirmed',
      occurredAt: confirmedAt,
      fields: { confirmed_at: confirmedAt },
    });
    const itinerary = itineraryOf(booking);
    if (lastItinerary !== undefined && lastItinerary !== itinerary && booking.status === 'CONFIRMED') {
      drafts.push({
        type: 'booking.changed',
        key: `booking.changed:${booking.version}`,
        occurredAt: booking.updatedAt,
        fields: { version: booking.version },
      });
    }
  }
  for (const boarding of booking.boardings ?? []) {
    drafts.push({
      type: 'passenger.boarded',
      key: `passenger.boarded:${boarding.passengerId}`,
      occurredAt: boarding.boardedAt,
      fields: {
        passenger_id: boarding.passengerId,
        seat_number: seatOf(booking, boarding.passengerId),
        stop_code: boarding.stopCode,
        boarded_at: boarding.boardedAt,
      },
    });
  }
  const noShowsAt = booking.noShowsRecordedAt;
  if (noShowsAt !== undefined) {
    const aboard = new Set((booking.boardings ?? []).map((boarding) => boarding.passengerId));
    for (const passenger of booking.passengers.filter((candidate) => !aboard.has(candidate.id))) {
      drafts.push({
        type: 'passenger.no_show',
        key: `passenger.no_show:${passenger.id}`,
        occurredAt: noShowsAt,
        fields: { passenger_id: passenger.id, seat_number: passenger.seatNumber, recorded_at: noShowsAt },
      });
    }
  }
  if (booking.amountRefunded.amountMinor > 0) {
    drafts.push({
      type: 'payment.refunded',
      key: `payment.refunded:${booking.amountRefunded.amountMinor}`,
      occurredAt: booking.cancelledAt ?? booking.updatedAt,
      fields: { total_refunded: money(booking.amountRefunded) },
    });
  }
  for (const incident of booking.paymentIncidents ?? []) {
    const refundFailed = incident.kind === 'REFUND_FAILED';
    drafts.push({
      type: refundFailed ? 'refund.failed' : 'payment.disputed',
      key: `${refundFailed ? 'refund.failed' : 'payment.disputed'}:${incident.eventId}`,
      occurredAt: incident.recordedAt,
      fields: {
        [refundFailed ? 'refund_id' : 'dispute_id']: incident.reference,
        amount: money(incident.amount),
        reason: incident.reason,
      },
    });
  }
  if (booking.status === 'CANCELLED') {
    const cancelledAt = booking.cancelledAt ?? booking.updatedAt;
    drafts.push({
      type: 'booking.cancelled',
      key: 'booking.cancelled',
      occurredAt: cancelledAt,
      fields: {
        reason: booking.cancellationReason ?? 'cancelled',
        refund: money(booking.amountRefunded),
        cancelled_at: cancelledAt,
      },
    });
  }
  if (booking.status === 'EXPIRED') {
    drafts.push({
      type: 'booking.expired',
      key: 'booking.expired',
      occurredAt: booking.updatedAt,
      fields: { expired_at: booking.updatedAt },
    });
  }
  // A stable sort: facts of one instant keep the order above (money before the state it leads to).
  return drafts
    .map((draft, index) => ({ draft, index }))
    .sort((a, b) => Date.parse(a.draft.occurredAt) - Date.parse(b.draft.occurredAt) || a.index - b.index)
    .map(({ draft }) => draft);
}

function seatOf(booking: BookingState, passengerId: string): string | undefined {
  return booking.passengers.find((passenger) => passenger.id === passengerId)?.seatNumber;
}

/** The facts of a trip cancellation a partner hears of: one event, once. */
export function tripCancelledDraft(cancellation: {
  reason: string;
  cancelledAt: string;
  bookingsAffected: number;
}): PartnerEventDraft {
  return {
    type: 'trip.cancelled',
    key: 'trip.cancelled',
    occurredAt: cancellation.cancelledAt,
    fields: {
      reason: cancellation.reason,
      cancelled_at: cancellation.cancelledAt,
      bookings_affected: cancellation.bookingsAffected,
    },
  };
}

// ---- Endpoints: what a partner registers ----

/** What a subscription may name: https by default; http only where the deployment allows it (development). */
export function validateEndpointUrl(raw: unknown, options: { allowHttp: boolean }): string {
  const invalid = (message: string) => validationFailed([{ field: 'url', message }]);
  if (typeof raw !== 'string' || !URL.canParse(raw)) throw invalid('must be an absolute URL');
  const url = new URL(raw);
  const schemes = options.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw invalid(options.allowHttp ? 'must be an http or https URL' : 'must be an https URL');
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') {
    throw invalid('must carry no credentials and no fragment');
  }
  if (raw.length > 2048) throw invalid('must be at most 2048 characters');
  return url.toString();
}

/** The event types a subscription names: at least one, each known; answered in the contract's order. */
export function validateEventTypes(raw: unknown): PartnerEventType[] {
  const invalid = (message: string) => validationFailed([{ field: 'event_types', message }]);
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every((value) => typeof value === 'string')) {
    throw invalid('must list at least one event type');
  }
  const unknown = raw.filter((value) => !isPartnerEventType(value));
  if (unknown.length > 0) {
    throw invalid(`unknown event type(s) ${unknown.join(', ')}; known: ${partnerEventTypes.join(', ')}`);
  }
  return partnerEventTypes.filter((type) => raw.includes(type));
}
