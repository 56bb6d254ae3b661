// Trip cancellation rules: the reason, who can be cancelled, the full refund, the progress counts.
import { DomainError } from '../../../src/domain/errors';
import { money } from '../../../src/domain/money';
import {
  assertTripCancellable,
  countOutcome,
  emptyCounts,
  isTripCancelledRefusal,
  progressLine,
  remainingCount,
  tripCancellationRefund,
  tripCancelledRefusal,
  validateCancelTrip,
} from '../../../src/domain/trip-cancellation';

const now = new Date('2026-12-01T08:00:00Z');

function fieldsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    return (error as DomainError).fieldViolations.map(
      (violation) => `${violation.field}: ${violation.message}`,
    );
  }
  throw new Error('no error');
}

describe('validateCancelTrip', () => {
  it('keeps a reason without its surrounding spaces', () => {
    expect(validateCancelTrip({ reason: '  The bus broke down ' })).toEqual({ reason: 'The bus broke down' });
  });

  it.each([
    ['missing', {}],
    ['null', { reason: null }],
    ['no body', undefined],
  ])('refuses a %s reason', (_case, input) => {
    expect(fieldsOf(() => validateCancelTrip(input))).toEqual([
      'reason: is required: passengers are told why',
    ]);
  });

  it('refuses a blank, non-string, too long or NUL reason, naming the field', () => {
    expect(fieldsOf(() => validateCancelTrip({ reason: '   ' }))).toEqual([
      'reason: must not be blank: passengers are told why',
    ]);
    expect(fieldsOf(() => validateCancelTrip({ reason: 7 }))).toEqual(['reason: must be a string']);
    expect(fieldsOf(() => validateCancelTrip({ reason: 'x'.repeat(501) }))).toEqual([
      'reason: must be at most 500 characters',
    ]);
    expect(fieldsOf(() => validateCancelTrip({ reason: 'a\u0000b' }))).toEqual([
      'reason: must not contain NUL characters',
    ]);
  });
});

describe('assertTripCancellable', () => {
  const trip = {
    id: 'trip-1',
    status: 'SCHEDULED' as const,
    departureTime: new Date('2026-12-01T09:00:00Z'),
  };

  it('lets a scheduled trip that has not left be cancelled', () => {
    expect(() => assertTripCancellable(trip, now)).not.toThrow();
  });

  it('refuses a trip whose departure has passed, or marked departed, with BOOKING_STATE_CONFLICT', () => {
    for (const departed of [
      { ...trip, departureTime: new Date('2026-12-01T07:59:59Z') },
      { ...trip, status: 'DEPARTED' as const },
    ]) {
      expect(() => assertTripCancellable(departed, now)).toThrow(
        expect.objectContaining({
          code: 'BOOKING_STATE_CONFLICT',
          details: { tripId: 'trip-1', tripStatus: 'DEPARTED' },
        }) as Error,
      );
    }
  });
});

describe('tripCancellationRefund', () => {
  it('gives back everything captured and not yet refunded, whatever the fare rule would keep', () => {
    expect(
      tripCancellationRefund({ amountPaid: money(5000, 'EUR'), amountRefunded: money(1200, 'EUR') }),
    ).toEqual(money(3800, 'EUR'));
    expect(tripCancellationRefund({ amountPaid: money(0, 'EUR'), amountRefunded: money(0, 'EUR') })).toEqual(
      money(0, 'EUR'),
    );
  });
});

describe('the refusal of a seat step on a cancelled trip', () => {
  it('is recognised by its code and trip status, and only then', () => {
    expect(isTripCancelledRefusal(tripCancelledRefusal('trip-1'))).toBe(true);
    expect(isTripCancelledRefusal(new DomainError('BOOKING_STATE_CONFLICT', 'other'))).toBe(false);
    expect(isTripCancelledRefusal(new DomainError('HOLD_EXPIRED', 'expired'))).toBe(false);
  });
});

describe('progress counts', () => {
  it('adds each outcome and says how many are left until the scan finishes', () => {
    let counts = emptyCounts(5);
    counts = countOutcome(counts, 'CANCELLED');
    counts = countOutcome(counts, 'CANCELLED');
    counts = countOutcome(counts, 'ALREADY_ENDED');
    counts = countOutcome(counts, 'FAILED');
    expect(counts).toEqual({ openAtStart: 5, cancelled: 2, alreadyEnded: 1, failed: 1 });
    expect(remainingCount(counts, false)).toBe(1);
    expect(remainingCount(counts, true)).toBe(0);
    expect(progressLine(counts, false)).toBe(
      'Trip cancellation running: 3 done (2 cancelled, 1 already ended), 1 failed, 1 left of 5 open at the start',
    );
  });

  it('never counts below zero left when bookings ended on their own before the scan', () => {
    expect(remainingCount({ openAtStart: 1, cancelled: 2, alreadyEnded: 0, failed: 0 }, false)).toBe(0);
  });
});
