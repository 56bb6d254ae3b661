// The lifecycle table row by row, and the guards with their time boundaries.
import { bookingStatuses, type BookingStatus } from '../../../src/domain/booking';
import { DomainError, type ErrorCode } from '../../../src/domain/errors';
import {
  allowedEvents,
  assertCanCancel,
  assertCanConfirmPayment,
  assertCanUpdate,
  changeDeadline,
  defaultChangeCutoffMs,
  holdExpiryFor,
  initialStatus,
  isEventAllowed,
  isTerminal,
  lifecycleEvents,
  nextStatus,
  shouldComplete,
  shouldExpire,
  terminalStatuses,
  type LifecycleEvent,
} from '../../../src/domain/lifecycle';
import { hourMs, minuteMs } from '../../../src/domain/time';
import { bookingState, departureTime, relativeToDeparture } from '../../support/booking-states';

function errorCodeOf(action: () => void): ErrorCode | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
}

/** The product's lifecycle table, every (status, event) pair: the next status, or undefined where forbidden. */
const expectedTable: Record<BookingStatus, Record<LifecycleEvent, BookingStatus | undefined>> = {
  PENDING_PAYMENT: {
    PAYMENT_APPROVED: 'CONFIRMED',
    PAYMENT_DECLINED: 'PENDING_PAYMENT',
    HOLD_TIMER_FIRED: 'EXPIRED',
    CANCEL_REQUESTED: 'CANCELLED',
    UPDATE_REQUESTED: 'PENDING_PAYMENT',
    DEPARTURE_PASSED: undefined,
    PASSENGER_BOARDED: undefined,
    BOARDING_CLOSED: undefined,
    PASSENGERS_CANCELLED: 'PENDING_PAYMENT',
  },
  CONFIRMED: {
    PAYMENT_APPROVED: undefined,
    PAYMENT_DECLINED: undefined,
    HOLD_TIMER_FIRED: undefined,
    CANCEL_REQUESTED: 'CANCELLED',
    UPDATE_REQUESTED: 'CONFIRMED',
    DEPARTURE_PASSED: 'COMPLETED',
    PASSENGER_BOARDED: 'CONFIRMED',
    BOARDING_CLOSED: 'CONFIRMED',
    PASSENGERS_CANCELLED: 'CONFIRMED',
  },
  CANCELLED: {
    PAYMENT_APPROVED: undefined,
    PAYMENT_DECLINED: undefined,
    HOLD_TIMER_FIRED: undefined,
    CANCEL_REQUESTED: undefined,
    UPDATE_REQUESTED: undefined,
    DEPARTURE_PASSED: undefined,
    PASSENGER_BOARDED: undefined,
    BOARDING_CLOSED: undefined,
    PASSENGERS_CANCELLED: undefined,
  },
  EXPIRED: {
    PAYMENT_APPROVED: undefined,
    PAYMENT_DECLINED: undefined,
    HOLD_TIMER_FIRED: undefined,
    CANCEL_REQUESTED: undefined,
    UPDATE_REQUESTED: undefined,
    DEPARTURE_PASSED: undefined,
    PASSENGER_BOARDED: undefined,
    BOARDING_CLOSED: undefined,
    PASSENGERS_CANCELLED: undefined,
  },
  COMPLETED: {
    PAYMENT_APPROVED: undefined,
    PAYMENT_DECLINED: undefined,
    HOLD_TIMER_FIRED: undefined,
    CANCEL_REQUESTED: undefined,
    UPDATE_REQUESTED: undefined,
    DEPARTURE_PASSED: undefined,
    PASSENGER_BOARDED: undefined,
    BOARDING_CLOSED: undefined,
    PASSENGERS_CANCELLED: undefined,
  },
};

const allPairs = bookingStatuses.flatMap((status) =>
  lifecycleEvents.map((event) => [status, event, expectedTable[status][event]] as const),
);

describe('lifecycle table', () => {
  it('starts every booking in PENDING_PAYMENT', () => {
    expect(initialStatus).toBe('PENDING_PAYMENT');
  });

  it.each(allPairs.filter(([, , next]) => next !== undefined))('%s + %s → %s', (status, event, next) => {
    expect(isEventAllowed(status, event)).toBe(true);
    expect(nextStatus(status, event)).toBe(next);
  });

  it.each(allPairs.filter(([, , next]) => next === undefined))(
    '%s + %s is forbidden with BOOKING_STATE_CONFLICT',
    (status, event) => {
      expect(isEventAllowed(status, event)).toBe(false);
      expect(errorCodeOf(() => nextStatus(status, event))).toBe('BOOKING_STATE_CONFLICT');
    },
  );

  it('lists the allowed events per status', () => {
    expect(allowedEvents('CONFIRMED')).toEqual([
      'CANCEL_REQUESTED',
      'UPDATE_REQUESTED',
      'DEPARTURE_PASSED',
      'PASSENGER_BOARDED',
      'BOARDING_CLOSED',
      'PASSENGERS_CANCELLED',
    ]);
    expect(allowedEvents('EXPIRED')).toEqual([]);
  });

  it('names the terminal statuses: exactly those with no way out', () => {
    expect([...terminalStatuses].sort()).toEqual(['CANCELLED', 'COMPLETED', 'EXPIRED']);
    for (const status of bookingStatuses) {
      expect(isTerminal(status)).toBe(allowedEvents(status).length === 0);
    }
  });

  it('says which action a forbidden event was', () => {
    try {
      nextStatus('CANCELLED', 'PAYMENT_APPROVED');
      throw new Error('expected a conflict');
    } catch (error) {
      expect((error as DomainError).details).toEqual({ status: 'CANCELLED', action: 'confirm-payment' });
    }
  });
});

const holdExpiresAt = '2026-11-01T09:15:00.000Z';
const beforeHoldExpiry = new Date('2026-11-01T09:14:59.999Z');
const atHoldExpiry = new Date(holdExpiresAt);

describe('assertCanConfirmPayment', () => {
  it('accepts a pending booking while the hold lasts', () => {
    expect(errorCodeOf(() => assertCanConfirmPayment(bookingState(), beforeHoldExpiry))).toBeUndefined();
  });

  it('answers HOLD_EXPIRED from the hold expiry instant on, and for an EXPIRED booking', () => {
    expect(errorCodeOf(() => assertCanConfirmPayment(bookingState(), atHoldExpiry))).toBe('HOLD_EXPIRED');
    const expired = bookingState({ status: 'EXPIRED' });
    expect(errorCodeOf(() => assertCanConfirmPayment(expired, beforeHoldExpiry))).toBe('HOLD_EXPIRED');
  });

  it.each<BookingStatus>(['CONFIRMED', 'CANCELLED', 'COMPLETED'])(
    'answers BOOKING_STATE_CONFLICT for %s',
    (status) => {
      expect(errorCodeOf(() => assertCanConfirmPayment(bookingState({ status }), beforeHoldExpiry))).toBe(
        'BOOKING_STATE_CONFLICT',
      );
    },
  );

  it('refuses payment once the trip has departed', () => {
    const state = bookingState({ holdExpiresAt: '2026-12-01T10:10:00.000Z' });
    expect(errorCodeOf(() => assertCanConfirmPayment(state, relativeToDeparture(0)))).toBe(
      'BOOKING_STATE_CONFLICT',
    );
  });
});

describe('assertCanCancel', () => {
  it('accepts a pending booking, even after its hold lapsed', () => {
    expect(errorCodeOf(() => assertCanCancel(bookingState(), beforeHoldExpiry))).toBeUndefined();
    expect(errorCodeOf(() => assertCanCancel(bookingState(), relativeToDeparture(-hourMs)))).toBeUndefined();
  });

  it('accepts a pending booking after departure too: its hold has lapsed, releasing is harmless', () => {
    expect(errorCodeOf(() => assertCanCancel(bookingState(), relativeToDeparture(0)))).toBeUndefined();
    expect(errorCodeOf(() => assertCanCancel(bookingState(), relativeToDeparture(hourMs)))).toBeUndefined();
  });

  it('accepts a confirmed booking until departure, not at or after it', () => {
    const confirmed = bookingState({ status: 'CONFIRMED' });
    expect(errorCodeOf(() => assertCanCancel(confirmed, relativeToDeparture(-1)))).toBeUndefined();
    expect(errorCodeOf(() => assertCanCancel(confirmed, relativeToDeparture(0)))).toBe(
      'BOOKING_STATE_CONFLICT',
    );
  });

  it.each<BookingStatus>(['CANCELLED', 'EXPIRED', 'COMPLETED'])(
    'answers BOOKING_STATE_CONFLICT for %s',
    (status) => {
      expect(errorCodeOf(() => assertCanCancel(bookingState({ status }), beforeHoldExpiry))).toBe(
        'BOOKING_STATE_CONFLICT',
      );
    },
  );
});

describe('conflict details', () => {
  function conflictDetailsOf(action: () => void): unknown {
    try {
      action();
    } catch (error) {
      if (error instanceof DomainError && error.code === 'BOOKING_STATE_CONFLICT') return error.details;
      throw error;
    }
    throw new Error('expected BOOKING_STATE_CONFLICT');
  }

  it.each<[LifecycleEvent, string]>([
    ['PAYMENT_APPROVED', 'confirm-payment'],
    ['PAYMENT_DECLINED', 'confirm-payment'],
    ['HOLD_TIMER_FIRED', 'expire'],
    ['CANCEL_REQUESTED', 'cancel'],
    ['UPDATE_REQUESTED', 'update'],
    ['DEPARTURE_PASSED', 'complete'],
    ['PASSENGERS_CANCELLED', 'cancel'],
  ])('names %s on a finished booking as the %s action', (event, action) => {
    expect(conflictDetailsOf(() => nextStatus('COMPLETED', event))).toEqual({ status: 'COMPLETED', action });
  });

  it('names the refused action of each guard, whether the status or the departure refuses it', () => {
    const confirmed = bookingState({ status: 'CONFIRMED' });
    const afterDeparture = relativeToDeparture(0);
    const payment = { action: 'confirm-payment' };
    expect(conflictDetailsOf(() => assertCanConfirmPayment(confirmed, beforeHoldExpiry))).toEqual({
      status: 'CONFIRMED',
      ...payment,
    });
    const lateHold = bookingState({ holdExpiresAt: '2026-12-01T10:10:00.000Z' });
    expect(conflictDetailsOf(() => assertCanConfirmPayment(lateHold, afterDeparture))).toEqual({
      status: 'PENDING_PAYMENT',
      ...payment,
    });
    const cancelled = bookingState({ status: 'CANCELLED' });
    expect(conflictDetailsOf(() => assertCanCancel(cancelled, beforeHoldExpiry))).toEqual({
      status: 'CANCELLED',
      action: 'cancel',
    });
    expect(conflictDetailsOf(() => assertCanCancel(confirmed, afterDeparture))).toEqual({
      status: 'CONFIRMED',
      action: 'cancel',
    });
    expect(conflictDetailsOf(() => assertCanUpdate(cancelled, beforeHoldExpiry))).toEqual({
      status: 'CANCELLED',
      action: 'update',
    });
    expect(conflictDetailsOf(() => assertCanUpdate(confirmed, afterDeparture))).toEqual({
      status: 'CONFIRMED',
      action: 'update',
    });
  });
});

describe('assertCanUpdate', () => {
  const confirmed = bookingState({ status: 'CONFIRMED' });

  it('accepts pending (with a live hold) and confirmed bookings', () => {
    expect(errorCodeOf(() => assertCanUpdate(bookingState(), beforeHoldExpiry))).toBeUndefined();
    expect(errorCodeOf(() => assertCanUpdate(confirmed, beforeHoldExpiry))).toBeUndefined();
  });

  it('answers HOLD_EXPIRED for a pending booking past its hold and for an EXPIRED one', () => {
    expect(errorCodeOf(() => assertCanUpdate(bookingState(), atHoldExpiry))).toBe('HOLD_EXPIRED');
    expect(errorCodeOf(() => assertCanUpdate(bookingState({ status: 'EXPIRED' }), beforeHoldExpiry))).toBe(
      'HOLD_EXPIRED',
    );
  });

  it.each<BookingStatus>(['CANCELLED', 'COMPLETED'])('answers BOOKING_STATE_CONFLICT for %s', (status) => {
    expect(errorCodeOf(() => assertCanUpdate(bookingState({ status }), beforeHoldExpiry))).toBe(
      'BOOKING_STATE_CONFLICT',
    );
  });

  it('closes changes one hour before departure by default', () => {
    expect(defaultChangeCutoffMs).toBe(hourMs);
    expect(errorCodeOf(() => assertCanUpdate(confirmed, relativeToDeparture(-hourMs - 1)))).toBeUndefined();
    expect(errorCodeOf(() => assertCanUpdate(confirmed, relativeToDeparture(-hourMs)))).toBe(
      'BOOKING_STATE_CONFLICT',
    );
  });

  it('takes the cutoff as a parameter', () => {
    const now = relativeToDeparture(-30 * minuteMs);
    expect(errorCodeOf(() => assertCanUpdate(confirmed, now, 15 * minuteMs))).toBeUndefined();
    expect(errorCodeOf(() => assertCanUpdate(confirmed, now, 45 * minuteMs))).toBe('BOOKING_STATE_CONFLICT');
  });

  it('applies the cutoff to pending bookings too', () => {
    const lateHold = bookingState({ holdExpiresAt: '2026-12-01T09:50:00.000Z' });
    expect(errorCodeOf(() => assertCanUpdate(lateHold, relativeToDeparture(-20 * minuteMs)))).toBe(
      'BOOKING_STATE_CONFLICT',
    );
  });

  it('computes the change deadline', () => {
    expect(changeDeadline('2026-12-01T10:00:00.000Z').toISOString()).toBe('2026-12-01T09:00:00.000Z');
    expect(changeDeadline('2026-12-01T10:00:00+01:00', 2 * hourMs).toISOString()).toBe(
      '2026-12-01T07:00:00.000Z',
    );
  });
});

describe('holdExpiryFor', () => {
  const openedAt = new Date('2026-11-01T09:00:00.000Z');

  it('holds the seats for the hold duration when departure is later', () => {
    expect(holdExpiryFor(openedAt, 15 * minuteMs, departureTime)).toBe('2026-11-01T09:15:00.000Z');
    expect(holdExpiryFor(openedAt, 5_000, departureTime)).toBe('2026-11-01T09:00:05.000Z');
  });

  it('ends the hold at departure when the trip leaves before the hold would end', () => {
    const shortlyBeforeDeparture = relativeToDeparture(-5 * minuteMs);
    expect(holdExpiryFor(shortlyBeforeDeparture, 15 * minuteMs, departureTime)).toBe(departureTime);
  });

  it('returns the timestamps earlier workflow runs recorded: the departure as given, the hold end on a tie', () => {
    const departureWithOffset = '2026-12-01T11:00:00+01:00';
    expect(holdExpiryFor(relativeToDeparture(-minuteMs), hourMs, departureWithOffset)).toBe(
      departureWithOffset,
    );
    expect(holdExpiryFor(relativeToDeparture(-hourMs), hourMs, departureWithOffset)).toBe(departureTime);
  });
});

describe('timers', () => {
  it('expires only a pending booking, from the hold expiry instant on', () => {
    expect(shouldExpire(bookingState(), beforeHoldExpiry)).toBe(false);
    expect(shouldExpire(bookingState(), atHoldExpiry)).toBe(true);
    expect(shouldExpire(bookingState({ status: 'CONFIRMED' }), atHoldExpiry)).toBe(false);
  });

  it('completes only a confirmed booking, from departure on', () => {
    const confirmed = bookingState({ status: 'CONFIRMED' });
    expect(shouldComplete(confirmed, relativeToDeparture(-1))).toBe(false);
    expect(shouldComplete(confirmed, relativeToDeparture(0))).toBe(true);
    expect(shouldComplete(bookingState({ status: 'CANCELLED' }), relativeToDeparture(0))).toBe(false);
  });

  it('reports an unreadable stored timestamp as INTERNAL', () => {
    expect(errorCodeOf(() => shouldExpire(bookingState({ holdExpiresAt: 'soon' }), atHoldExpiry))).toBe(
      'INTERNAL',
    );
  });
});
