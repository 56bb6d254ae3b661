// The booking lifecycle as data, which the booking workflow follows, and the guards its update validators call.
import type { BookingAction, BookingState, BookingStatus, Timestamp } from './booking';
import { bookingStateConflict, holdExpired } from './errors';
import { addDuration, hourMs, timestampMs } from './time';

export const initialStatus: BookingStatus = 'PENDING_PAYMENT';

export const lifecycleEvents = [
  'PAYMENT_APPROVED',
  'PAYMENT_DECLINED',
  'HOLD_TIMER_FIRED',
  'CANCEL_REQUESTED',
  'UPDATE_REQUESTED',
  'DEPARTURE_PASSED',
  'PASSENGER_BOARDED',
  'BOARDING_CLOSED',
  'PASSENGERS_CANCELLED',
] as const;
export type LifecycleEvent = (typeof lifecycleEvents)[number];

/** The lifecycle table: status → event → next status. An event missing from a row is forbidden there. */
export const lifecycleTransitions: Readonly<
  Record<BookingStatus, Readonly<Partial<Record<LifecycleEvent, BookingStatus>>>>
> = {
  PENDING_PAYMENT: {
    PAYMENT_APPROVED: 'CONFIRMED',
    PAYMENT_DECLINED: 'PENDING_PAYMENT',
    HOLD_TIMER_FIRED: 'EXPIRED',
    CANCEL_REQUESTED: 'CANCELLED',
    UPDATE_REQUESTED: 'PENDING_PAYMENT',
    PASSENGERS_CANCELLED: 'PENDING_PAYMENT',
  },
  CONFIRMED: {
    CANCEL_REQUESTED: 'CANCELLED',
    UPDATE_REQUESTED: 'CONFIRMED',
    DEPARTURE_PASSED: 'COMPLETED',
    PASSENGER_BOARDED: 'CONFIRMED',
    BOARDING_CLOSED: 'CONFIRMED',
    PASSENGERS_CANCELLED: 'CONFIRMED',
  },
  CANCELLED: {},
  EXPIRED: {},
  COMPLETED: {},
};

const eventActions: Readonly<Record<LifecycleEvent, BookingAction>> = {
  PAYMENT_APPROVED: 'confirm-payment',
  PAYMENT_DECLINED: 'confirm-payment',
  HOLD_TIMER_FIRED: 'expire',
  CANCEL_REQUESTED: 'cancel',
  UPDATE_REQUESTED: 'update',
  DEPARTURE_PASSED: 'complete',
  PASSENGER_BOARDED: 'board',
  BOARDING_CLOSED: 'board',
  PASSENGERS_CANCELLED: 'cancel',
};

export const terminalStatuses: readonly BookingStatus[] = ['CANCELLED', 'EXPIRED', 'COMPLETED'];

export function isTerminal(status: BookingStatus): boolean {
  return terminalStatuses.includes(status);
}

export function isEventAllowed(status: BookingStatus, event: LifecycleEvent): boolean {
  return lifecycleTransitions[status][event] !== undefined;
}

export function allowedEvents(status: BookingStatus): LifecycleEvent[] {
  return lifecycleEvents.filter((event) => isEventAllowed(status, event));
}

/** The status after `event`, or BOOKING_STATE_CONFLICT when the table forbids it. */
export function nextStatus(status: BookingStatus, event: LifecycleEvent): BookingStatus {
  const next = lifecycleTransitions[status][event];
  if (next === undefined) throw bookingStateConflict(status, eventActions[event]);
  return next;
}

export const defaultChangeCutoffMs = hourMs;

/** Changes are accepted strictly before this instant. */
export function changeDeadline(departureTime: Timestamp, cutoffMs: number = defaultChangeCutoffMs): Date {
  return new Date(timestampMs(departureTime) - cutoffMs);
}

/**
 * When the seat hold of a booking opened at `openedAt` lapses: after the hold duration, but never after departure,
 * so an unpaid booking lapses, and gives its seats back, by the time the bus leaves.
 */
export function holdExpiryFor(openedAt: Date, holdDurationMs: number, departureTime: Timestamp): Timestamp {
  const holdEnds = addDuration(openedAt, holdDurationMs);
  // Workflow histories recorded the departure timestamp exactly as given when it won; keep returning it unchanged.
  return timestampMs(holdEnds) <= timestampMs(departureTime) ? holdEnds : departureTime;
}

/** The hold covers instants strictly before `holdExpiresAt`; the expiry timer fires at that instant. */
export function isHoldExpired(state: Pick<BookingState, 'holdExpiresAt'>, now: Date): boolean {
  return now.getTime() >= timestampMs(state.holdExpiresAt);
}

export function hasDeparted(state: Pick<BookingState, 'departureTime'>, now: Date): boolean {
  return now.getTime() >= timestampMs(state.departureTime);
}

type GuardedState = Pick<BookingState, 'status' | 'holdExpiresAt' | 'departureTime'>;

/**
 * Payment is accepted only while the hold lasts. An EXPIRED booking, or a pending one whose timer has not
 * fired yet, answers HOLD_EXPIRED: the caller needs a new booking, not a different request.
 */
export function assertCanConfirmPayment(state: GuardedState, now: Date): void {
  if (state.status === 'EXPIRED') throw holdExpired(state.holdExpiresAt);
  if (!isEventAllowed(state.status, 'PAYMENT_APPROVED')) {
    throw bookingStateConflict(state.status, 'confirm-payment');
  }
  if (isHoldExpired(state, now)) throw holdExpired(state.holdExpiresAt);
  if (hasDeparted(state, now))
    throw bookingStateConflict(state.status, 'confirm-payment', 'the trip has departed');
}

/**
 * A pending booking can be cancelled at any time (even with a lapsed hold: releasing is harmless); a
 * confirmed one until departure, after which it completes instead.
 */
export function assertCanCancel(state: GuardedState, now: Date): void {
  if (!isEventAllowed(state.status, 'CANCEL_REQUESTED')) throw bookingStateConflict(state.status, 'cancel');
  if (state.status === 'CONFIRMED' && hasDeparted(state, now)) {
    throw bookingStateConflict(state.status, 'cancel', 'the trip has departed');
  }
}

/** Changes need a live hold (when pending) and must come before the change cutoff. */
export function assertCanUpdate(
  state: GuardedState,
  now: Date,
  cutoffMs: number = defaultChangeCutoffMs,
): void {
  if (state.status === 'EXPIRED') throw holdExpired(state.holdExpiresAt);
  if (!isEventAllowed(state.status, 'UPDATE_REQUESTED')) throw bookingStateConflict(state.status, 'update');
  if (state.status === 'PENDING_PAYMENT' && isHoldExpired(state, now)) throw holdExpired(state.holdExpiresAt);
  const deadline = changeDeadline(state.departureTime, cutoffMs);
  if (now.getTime() >= deadline.getTime()) {
    throw bookingStateConflict(state.status, 'update', `changes closed at ${deadline.toISOString()}`);
  }
}

/** True when the hold timer should move the booking to EXPIRED (a payment may have won the race). */
export function shouldExpire(state: Pick<BookingState, 'status' | 'holdExpiresAt'>, now: Date): boolean {
  return state.status === 'PENDING_PAYMENT' && isHoldExpired(state, now);
}

/** True when the departure timer should move the booking to COMPLETED. */
export function shouldComplete(state: Pick<BookingState, 'status' | 'departureTime'>, now: Date): boolean {
  return state.status === 'CONFIRMED' && hasDeparted(state, now);
}
