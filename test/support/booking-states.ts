// Builders for booking states and prices shared by the domain unit tests.
import type { BookingState, FarePrices, Passenger } from '../../src/domain/booking';
import { defaultRefundRule } from '../../src/domain/fares';

export const bookingId = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
export const firstPassengerId = '11111111-1111-4111-8111-111111111111';
export const secondPassengerId = '22222222-2222-4222-8222-222222222222';
export const addedPassengerId = '33333333-3333-4333-8333-333333333333';

export const departureTime = '2026-12-01T10:00:00.000Z';
export const createdAt = '2026-11-01T09:00:00.000Z';

export const farePrices: FarePrices = {
  STANDARD: { amountMinor: 2500, currency: 'EUR' },
  PREMIUM: { amountMinor: 4000, currency: 'EUR' },
};

export function euros(amountMinor: number) {
  return { amountMinor, currency: 'EUR' };
}

export const passengers: Passenger[] = [
  {
    id: firstPassengerId,
    firstName: 'Ana',
    lastName: 'Silva',
    email: 'ana@example.com',
    phone: '+351912345678',
    seatNumber: '3A',
    fareClass: 'STANDARD',
  },
  {
    id: secondPassengerId,
    firstName: 'Rui',
    lastName: 'Costa',
    email: 'rui@example.com',
    seatNumber: '3B',
    fareClass: 'STANDARD',
  },
];

export function bookingState(overrides: Partial<BookingState> = {}): BookingState {
  return {
    id: bookingId,
    customerId: '44444444-4444-4444-8444-444444444444',
    tripId: '55555555-5555-4555-8555-555555555555',
    routeId: '66666666-6666-4666-8666-666666666666',
    status: 'PENDING_PAYMENT',
    passengers,
    contactEmail: 'ana@example.com',
    price: {
      lines: passengers.map((passenger) => ({
        passengerId: passenger.id,
        seatNumber: passenger.seatNumber,
        fareClass: passenger.fareClass,
        amount: euros(2500),
      })),
      total: euros(5000),
    },
    amountPaid: euros(0),
    amountRefunded: euros(0),
    holdExpiresAt: '2026-11-01T09:15:00.000Z',
    payment: { status: 'NONE' },
    paymentAttempts: [],
    refundRule: defaultRefundRule,
    departureTime,
    version: 1,
    createdAt,
    updatedAt: createdAt,
    ...overrides,
  };
}

export function confirmedState(overrides: Partial<BookingState> = {}): BookingState {
  return bookingState({
    status: 'CONFIRMED',
    amountPaid: euros(5000),
    payment: { status: 'CAPTURED', method: 'visa •••• 4242' },
    confirmedAt: '2026-11-01T09:05:00.000Z',
    ...overrides,
  });
}

/** An instant `offsetMs` away from departure (negative = before). */
export function relativeToDeparture(offsetMs: number): Date {
  return new Date(Date.parse(departureTime) + offsetMs);
}
