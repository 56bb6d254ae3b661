// The facts a booking snapshot states for partners, each once, in order; and what an endpoint may subscribe with.
import { expect } from '@jest/globals';
import {
  bookingEventBase,
  bookingEventDrafts,
  itineraryOf,
  tripCancelledDraft,
  validateEndpointUrl,
  validateEventTypes,
} from '../../../src/domain/partner-events';
import { DomainError } from '../../../src/domain/errors';
import {
  bookingState,
  confirmedState,
  euros,
  firstPassengerId,
  secondPassengerId,
} from '../../support/booking-states';

const paid = {
  attemptNumber: 1,
  attemptedAt: '2026-11-01T09:05:00.000Z',
  outcome: 'APPROVED' as const,
  amount: euros(5000),
  method: 'visa •••• 4242',
};

function keysOf(drafts: ReturnType<typeof bookingEventDrafts>): string[] {
  return drafts.map((draft) => draft.key);
}

describe('bookingEventDrafts', () => {
  test('a new booking states nothing yet', () => {
    expect(bookingEventDrafts(bookingState())).toEqual([]);
  });

  test('a declined attempt, then a paid one and the confirmation, in the order they happened', () => {
    const declined = {
      attemptNumber: 1,
      attemptedAt: '2026-11-01T09:03:00.000Z',
      outcome: 'DECLINED' as const,
      amount: euros(5000),
      declineReason: 'card_declined',
    };
    const drafts = bookingEventDrafts(
      confirmedState({ paymentAttempts: [declined, { ...paid, attemptNumber: 2 }] }),
    );
    expect(keysOf(drafts)).toEqual(['payment.failed:1', 'payment.succeeded:2', 'booking.confirmed']);
    expect(drafts[0]?.fields).toEqual({
      attempt_number: 1,
      amount: { amount_minor: 5000, currency: 'EUR' },
      reason: 'card_declined',
    });
  });

  test('a challenge pending states payment.action_required once per intent', () => {
    const drafts = bookingEventDrafts(
      bookingState({
        payment: {
          status: 'NONE',
          action: { status: 'REQUIRES_ACTION', intentId: 'pi_1', nextActionType: 'use_stripe_sdk' },
        },
      }),
    );
    expect(drafts).toEqual([
      expect.objectContaining({
        type: 'payment.action_required',
        key: 'payment.action_required:pi_1',
        fields: { intent_id: 'pi_1', next_action_type: 'use_stripe_sdk' },
      }),
    ]);
  });

  test('a confirmed booking whose seats moved since its last confirmed or changed event has changed', () => {
    const before = confirmedState({ paymentAttempts: [paid] });
    const after = confirmedState({
      paymentAttempts: [paid],
      version: 4,
      updatedAt: '2026-11-02T10:00:00.000Z',
      passengers: before.passengers.map((passenger, index) =>
        index === 0 ? { ...passenger, seatNumber: '9D' } : passenger,
      ),
    });
    expect(keysOf(bookingEventDrafts(after, itineraryOf(before)))).toContain('booking.changed:4');
    expect(keysOf(bookingEventDrafts(after, itineraryOf(after)))).not.toContain('booking.changed:4');
    // Without an earlier itinerary (the first confirmation) there is nothing to compare with.
    expect(keysOf(bookingEventDrafts(after))).not.toContain('booking.changed:4');
  });

  test('a cancellation with a refund states the refund and the cancellation with its reason', () => {
    const drafts = bookingEventDrafts(
      confirmedState({
        paymentAttempts: [paid],
        status: 'CANCELLED',
        amountRefunded: euros(4000),
        cancelledAt: '2026-11-03T08:00:00.000Z',
        cancellationReason: 'plans changed',
      }),
    );
    expect(keysOf(drafts)).toEqual([
      'payment.succeeded:1',
      'booking.confirmed',
      'payment.refunded:4000',
      'booking.cancelled',
    ]);
    expect(drafts.at(-1)?.fields).toEqual({
      reason: 'plans changed',
      refund: { amount_minor: 4000, currency: 'EUR' },
      cancelled_at: '2026-11-03T08:00:00.000Z',
    });
  });

  test('boardings and no-shows, one event per passenger; refund failures and disputes by their event', () => {
    const drafts = bookingEventDrafts(
      confirmedState({
        paymentAttempts: [paid],
        boardings: [
          {
            passengerId: firstPassengerId,
            boardedAt: '2026-12-01T09:55:00.000Z',
            stopCode: 'BER',
            actorId: 'driver-1',
          },
        ],
        noShowsRecordedAt: '2026-12-01T10:10:00.000Z',
        paymentIncidents: [
          {
            kind: 'REFUND_FAILED',
            eventId: 'evt_1',
            reference: 're_1',
            amount: euros(100),
            reason: 'expired_card',
            recordedAt: '2026-12-02T10:00:00.000Z',
          },
        ],
      }),
    );
    expect(keysOf(drafts)).toEqual([
      'payment.succeeded:1',
      'booking.confirmed',
      `passenger.boarded:${firstPassengerId}`,
      `passenger.no_show:${secondPassengerId}`,
      'refund.failed:evt_1',
    ]);
  });

  test('an expired booking', () => {
    expect(keysOf(bookingEventDrafts(bookingState({ status: 'EXPIRED' })))).toEqual(['booking.expired']);
  });

  test('the booking part of an event carries no personal data', () => {
    const booking = confirmedState();
    const written = JSON.stringify(bookingEventBase(booking));
    const personal = [
      booking.contactEmail,
      ...booking.passengers.flatMap((passenger) => [
        passenger.firstName,
        passenger.lastName,
        passenger.email,
      ]),
    ];
    expect(personal.filter((value) => written.includes(value))).toEqual([]);
    const base = bookingEventBase(booking);
    expect(base.passengers[0]).toEqual({
      passenger_id: firstPassengerId,
      seat_number: expect.any(String),
      fare_class: 'STANDARD',
    });
  });

  test('trip.cancelled', () => {
    expect(
      tripCancelledDraft({ reason: 'storm', cancelledAt: '2026-11-30T06:00:00.000Z', bookingsAffected: 3 }),
    ).toEqual({
      type: 'trip.cancelled',
      key: 'trip.cancelled',
      occurredAt: '2026-11-30T06:00:00.000Z',
      fields: { reason: 'storm', cancelled_at: '2026-11-30T06:00:00.000Z', bookings_affected: 3 },
    });
  });
});

describe('what an endpoint subscribes with', () => {
  function violationOf(call: () => unknown): string | undefined {
    try {
      call();
    } catch (error) {
      if (error instanceof DomainError)
        return `${error.fieldViolations[0]?.field}: ${error.fieldViolations[0]?.message}`;
      throw error;
    }
    return undefined;
  }

  test('https only unless http is allowed; no credentials or fragment', () => {
    expect(validateEndpointUrl('https://partner.example/hooks', { allowHttp: false })).toBe(
      'https://partner.example/hooks',
    );
    expect(violationOf(() => validateEndpointUrl('http://partner.example/hooks', { allowHttp: false }))).toBe(
      'url: must be an https URL',
    );
    expect(validateEndpointUrl('http://127.0.0.1:8080/h', { allowHttp: true })).toBe(
      'http://127.0.0.1:8080/h',
    );
    expect(violationOf(() => validateEndpointUrl('ftp://partner.example/', { allowHttp: true }))).toBe(
      'url: must be an http or https URL',
    );
    expect(
      violationOf(() => validateEndpointUrl('https://user:pw@partner.example/', { allowHttp: false })),
    ).toBe('url: must carry no credentials and no fragment');
    expect(violationOf(() => validateEndpointUrl('not a url', { allowHttp: false }))).toBe(
      'url: must be an absolute URL',
    );
  });

  test('event types: at least one, each known, answered in the contract order', () => {
    expect(validateEventTypes(['booking.cancelled', 'booking.confirmed'])).toEqual([
      'booking.confirmed',
      'booking.cancelled',
    ]);
    expect(violationOf(() => validateEventTypes([]))).toBe('event_types: must list at least one event type');
    expect(violationOf(() => validateEventTypes(['booking.confirmed', 'booking.exploded']))).toMatch(
      /^event_types: unknown event type\(s\) booking\.exploded; known: booking\.confirmed, /,
    );
  });
});
