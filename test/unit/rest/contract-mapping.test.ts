// The mapper between application types and contract JSON: every response shape validates against the document.
import {
  bookingEntityTag,
  bookingJson,
  cancelBookingInput,
  confirmPaymentInput,
  createBookingInput,
  routeAvailabilityJson,
  routeJson,
  updateBookingInput,
  userJson,
} from '../../../src/api/rest/contract-mapping';
import { createOpenApiAjv, documentSchemaId } from '../../../src/api/rest/openapi-validation';
import type { BookingView, RouteView } from '../../../src/application/interface';
import type { BookingState } from '../../../src/domain/booking';
import { bookingState, confirmedState } from '../../support/booking-states';

const ajv = createOpenApiAjv();

function expectValid(schemaName: string, value: unknown): void {
  const validate = ajv.compile({ $ref: `${documentSchemaId}#/components/schemas/${schemaName}` });
  const valid = validate(value);
  expect(validate.errors ?? []).toEqual([]);
  expect(valid).toBe(true);
}

function view(state: BookingState): BookingView {
  const { paymentAttempts: _attempts, refundRule: _rule, ...rest } = state;
  return rest;
}

const lisbon = {
  code: 'LIS',
  name: 'Lisboa Oriente',
  city: 'Lisbon',
  countryCode: 'PT',
  timeZone: 'Europe/Lisbon',
};
const porto = {
  code: 'POR',
  name: 'Porto Campanhã',
  city: 'Porto',
  countryCode: 'PT',
  timeZone: 'Europe/Lisbon',
};

describe('bookingJson', () => {
  it('renders a pending booking with its hold and null for every absent nullable field', () => {
    const json = bookingJson(view(bookingState()));
    expectValid('Booking', json);
    expect(json.hold_expires_at).toBe('2026-11-01T09:15:00.000Z');
    expect(json.passengers[1].phone).toBeNull();
    expect(json.contact_phone).toBeNull();
    expect(json.payment).toEqual({
      status: 'NONE',
      method: null,
      last_attempt_at: null,
      decline_reason: null,
      action: null,
    });
    expect(json.cancelled_at).toBeNull();
    expect(json.cancellation_reason).toBeNull();
    expect(json).not.toHaveProperty('confirmed_at');
  });

  it('shows no hold once the booking is past waiting for payment', () => {
    const json = bookingJson(view(confirmedState()));
    expectValid('Booking', json);
    expect(json.hold_expires_at).toBeNull();
    expect(json.payment.method).toBe('visa •••• 4242');
    expect(json.amount_paid).toEqual({ amount_minor: 5000, currency: 'EUR' });
  });

  it('renders cancellation details', () => {
    const json = bookingJson(
      view(
        confirmedState({
          status: 'CANCELLED',
          cancelledAt: '2026-11-02T10:00:00.000Z',
          cancellationReason: 'Plans changed',
          amountRefunded: { amountMinor: 5000, currency: 'EUR' },
          payment: { status: 'REFUNDED', method: 'visa •••• 4242' },
          version: 3,
        }),
      ),
    );
    expectValid('Booking', json);
    expect(json).toMatchObject({
      cancelled_at: '2026-11-02T10:00:00.000Z',
      cancellation_reason: 'Plans changed',
    });
  });

  it('tags a booking with its version in quotes', () => {
    expect(bookingEntityTag({ version: 7 })).toBe('"7"');
  });
});

describe('catalogue and user JSON', () => {
  const route: RouteView = {
    id: '3f7c9a2e-5b1d-4e8a-9c6f-2d4b8e1a7c30',
    code: 'LIS-POR',
    origin: lisbon,
    destination: porto,
    intermediateStops: [{ ...lisbon, code: 'COI', name: 'Coimbra', city: 'Coimbra' }],
    operatorName: 'Lusitania Coaches',
    distanceKm: 313,
    typicalDurationMinutes: 195,
    matchedStops: { boardingStopCode: 'COI', alightingStopCode: 'POR' },
  };

  it('renders a route with an ISO 8601 duration and the stops a search matched', () => {
    const json = routeJson(route);
    expectValid('Route', json);
    expect(json.typical_duration).toBe('PT3H15M');
    expect(json.matched_stops).toEqual({ boarding_stop: 'COI', alighting_stop: 'POR' });
    expect(json.origin.time_zone).toBe('Europe/Lisbon');
  });

  it('renders availability with the seat map', () => {
    const json = routeAvailabilityJson({
      routeId: route.id,
      date: '2026-12-01',
      legCount: 1,
      trips: [
        {
          tripId: '5a8d2f1e-7c3b-4e9a-b6d4-0e1f2a3b4c5d',
          departureTime: '2026-12-01T08:30:00.000Z',
          arrivalTime: '2026-12-01T11:45:00.000Z',
          seatsTotal: 2,
          seatsFree: 1,
          lowestPrice: { amountMinor: 2450, currency: 'EUR' },
          seatMap: [
            { seatNumber: '1A', fareClass: 'PREMIUM', status: 'TAKEN' },
            { seatNumber: '3A', fareClass: 'STANDARD', status: 'FREE' },
          ],
          fareClasses: [
            { fareClass: 'PREMIUM', price: { amountMinor: 3900, currency: 'EUR' }, seatsFree: 0 },
            { fareClass: 'STANDARD', price: { amountMinor: 2450, currency: 'EUR' }, seatsFree: 1 },
          ],
        },
      ],
    });
    expectValid('RouteAvailability', json);
    expect(json.trips[0].seat_map[1]).toEqual({ seat_number: '3A', fare_class: 'STANDARD', status: 'FREE' });
  });

  it('renders a user with null for a missing phone', () => {
    const json = userJson({
      id: 'c0ffee00-1234-4abc-8def-0123456789ab',
      email: 'ana@example.com',
      displayName: 'Ana',
      roles: ['customer'],
      createdAt: '2026-01-15T10:20:30.000Z',
    });
    expectValid('User', json);
    expect(json.phone).toBeNull();
  });
});

describe('request mapping', () => {
  it('maps a create request to the application input', () => {
    expect(
      createBookingInput({
        trip_id: 't',
        passengers: [
          {
            first_name: 'A',
            last_name: 'B',
            email: 'e',
            phone: 'p',
            seat_number: '1A',
            fare_class: 'STANDARD',
          },
        ],
        contact_email: 'c',
      }),
    ).toEqual({
      tripId: 't',
      passengers: [
        { firstName: 'A', lastName: 'B', email: 'e', phone: 'p', seatNumber: '1A', fareClass: 'STANDARD' },
      ],
      contactEmail: 'c',
      contactPhone: undefined,
    });
  });

  it('maps every kind of change of an update request', () => {
    expect(
      updateBookingInput({
        seat_changes: [{ passenger_id: 'p1', seat_number: '2A' }],
        passenger_updates: [{ passenger_id: 'p2', last_name: 'Santos' }],
      }),
    ).toEqual({
      seatChanges: [{ passengerId: 'p1', seatNumber: '2A', fareClass: undefined }],
      addPassengers: undefined,
      passengerUpdates: [
        { passengerId: 'p2', firstName: undefined, lastName: 'Santos', email: undefined, phone: undefined },
      ],
    });
  });

  it('maps cancellation and payment bodies, an absent body included', () => {
    expect(cancelBookingInput(undefined)).toEqual({});
    expect(cancelBookingInput({ reason: 'Plans changed' })).toEqual({ reason: 'Plans changed' });
    expect(confirmPaymentInput({ payment_token: 'tok_visa' })).toEqual({ paymentToken: 'tok_visa' });
  });
});

describe('bookingJson of an open payment', () => {
  it('renders the action the client finishes it with, valid against the contract', () => {
    const open = {
      ...view(bookingState()),
      payment: {
        status: 'NONE' as const,
        action: {
          status: 'REQUIRES_ACTION' as const,
          intentId: 'pi_123',
          nextActionType: 'use_stripe_sdk',
          clientSecret: 'pi_123_secret_abc',
        },
      },
    };
    const json = bookingJson(open);

    expectValid('Booking', json);
    expect(json.payment.action).toEqual({
      status: 'REQUIRES_ACTION',
      intent_id: 'pi_123',
      client_secret: 'pi_123_secret_abc',
      next_action: { type: 'use_stripe_sdk', redirect_url: null },
    });
  });
});
