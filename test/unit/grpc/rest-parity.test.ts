// Unit tests: the gRPC Booking and the REST Booking JSON of the same booking agree field for field.
import { toBookingMessage } from '../../../src/api/grpc/booking-mapper';
import { bookingJson } from '../../../src/api/rest/contract-mapping';
import type { BookingView } from '../../../src/application/interface';
import type { BookingState } from '../../../src/domain/booking';
import { bookingState, confirmedState, euros } from '../../support/booking-states';
import { asRestJson } from '../../support/rest-json';

function view(state: BookingState): BookingView {
  const { paymentAttempts: _paymentAttempts, refundRule: _refundRule, ...rest } = state;
  return rest;
}

const cases: [string, BookingState][] = [
  ['pending, nothing optional given', bookingState()],
  [
    'pending with a declined attempt',
    bookingState({
      payment: {
        status: 'DECLINED',
        lastAttemptAt: '2026-11-01T09:03:00.000Z',
        declineReason: 'insufficient_funds',
      },
    }),
  ],
  ['confirmed with phones', confirmedState({ contactPhone: '+351912345678' })],
  [
    'cancelled and partly refunded',
    confirmedState({
      status: 'CANCELLED',
      amountRefunded: euros(2500),
      payment: {
        status: 'PARTIALLY_REFUNDED',
        method: 'visa •••• 4242',
        lastAttemptAt: '2026-11-01T09:05:00.000Z',
      },
      cancelledAt: '2026-11-20T08:00:00.000Z',
      cancellationReason: 'plans changed',
      version: 4,
    }),
  ],
  [
    'confirmed, one passenger cancelled out of it',
    confirmedState({
      amountRefunded: euros(1250),
      cancelledPassengers: [
        {
          passengerId: '99999999-9999-4999-8999-999999999999',
          cancelledAt: '2026-11-20T08:00:00.000Z',
          paid: euros(2500),
          refund: euros(1250),
        },
      ],
      version: 3,
    }),
  ],
  ['expired', bookingState({ status: 'EXPIRED', version: 2 })],
  ['completed', confirmedState({ status: 'COMPLETED', version: 3 })],
];

describe('REST and gRPC bookings', () => {
  it.each(cases)('agree field for field: %s', (_name, state) => {
    const booking = view(state);
    expect(asRestJson(toBookingMessage(booking))).toEqual(bookingJson(booking));
  });
});
