// Unit tests: the proto Booking carries every BookingView field, with proto3 conventions for absent values.
import { bookingStatusFilter, toBookingMessage } from '../../../src/api/grpc/booking-mapper';
import type { BookingView } from '../../../src/application/interface';
import { bookingStatuses } from '../../../src/domain/booking';
import {
  Booking,
  BookingStatus,
  PaymentStatus,
} from '../../../src/generated/com/example/bookings/v1/booking';
import { bookingState, confirmedState, euros } from '../../support/booking-states';

function view(state = bookingState()): BookingView {
  const { paymentAttempts: _paymentAttempts, refundRule: _refundRule, ...rest } = state;
  return rest;
}

describe('toBookingMessage', () => {
  it('maps a pending booking field for field, hold included', () => {
    const pending = view();
    const message = toBookingMessage(pending);
    expect(message).toEqual({
      id: pending.id,
      customerId: pending.customerId,
      tripId: pending.tripId,
      routeId: pending.routeId,
      status: BookingStatus.BOOKING_STATUS_PENDING_PAYMENT,
      passengers: [
        {
          id: pending.passengers[0].id,
          firstName: 'Ana',
          lastName: 'Silva',
          email: 'ana@example.com',
          phone: '+351912345678',
          seatNumber: '3A',
          fareClass: 'STANDARD',
          passengerType: '',
          birthDate: '',
        },
        {
          id: pending.passengers[1].id,
          firstName: 'Rui',
          lastName: 'Costa',
          email: 'rui@example.com',
          phone: '',
          seatNumber: '3B',
          fareClass: 'STANDARD',
          passengerType: '',
          birthDate: '',
        },
      ],
      contactEmail: 'ana@example.com',
      contactPhone: '',
      price: {
        lines: pending.price.lines.map((line) => ({
          ...line,
          amount: euros(2500),
          passengerType: '',
          discount: undefined,
        })),
        total: euros(5000),
        discount: undefined,
      },
      amountPaid: euros(0),
      amountRefunded: euros(0),
      holdExpiresAt: new Date(pending.holdExpiresAt),
      payment: {
        status: PaymentStatus.PAYMENT_STATUS_NONE,
        method: '',
        lastAttemptAt: undefined,
        declineReason: '',
      },
      departureTime: new Date(pending.departureTime),
      createdAt: new Date(pending.createdAt),
      updatedAt: new Date(pending.updatedAt),
      cancelledAt: undefined,
      cancellationReason: '',
      version: 1,
      cancelledPassengers: [],
    });
  });

  it('maps the passengers cancelled out of a booking', () => {
    const cancelled = {
      passengerId: '99999999-9999-4999-8999-999999999999',
      cancelledAt: '2026-11-20T10:00:00.000Z',
      paid: { amountMinor: 2500, currency: 'EUR' },
      refund: { amountMinor: 1250, currency: 'EUR' },
    };
    expect(
      toBookingMessage(view(confirmedState({ cancelledPassengers: [cancelled] }))).cancelledPassengers,
    ).toEqual([
      {
        passengerId: cancelled.passengerId,
        cancelledAt: new Date(cancelled.cancelledAt),
        paid: { amountMinor: 2500, currency: 'EUR' },
        refund: { amountMinor: 1250, currency: 'EUR' },
      },
    ]);
  });

  it('leaves the hold unset once the booking is no longer pending', () => {
    expect(toBookingMessage(view(confirmedState())).holdExpiresAt).toBeUndefined();
  });

  it('maps payment and cancellation details of a cancelled booking', () => {
    const cancelled = view(
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
        version: 3,
      }),
    );
    const message = toBookingMessage(cancelled);
    expect(message.status).toBe(BookingStatus.BOOKING_STATUS_CANCELLED);
    expect(message.payment).toEqual({
      status: PaymentStatus.PAYMENT_STATUS_PARTIALLY_REFUNDED,
      method: 'visa •••• 4242',
      lastAttemptAt: new Date('2026-11-01T09:05:00.000Z'),
      declineReason: '',
    });
    expect(message.cancelledAt).toEqual(new Date('2026-11-20T08:00:00.000Z'));
    expect(message.cancellationReason).toBe('plans changed');
    expect(message.amountRefunded).toEqual(euros(2500));
    expect(message.version).toBe(3);
  });

  it('produces a message that survives the wire unchanged', () => {
    const message = toBookingMessage(view(confirmedState()));
    expect(Booking.decode(Booking.encode(message).finish())).toEqual(message);
  });

  it.each(bookingStatuses)('gives %s its prefixed proto value and reads it back as a filter', (status) => {
    const message = toBookingMessage(view(bookingState({ status })));
    expect(BookingStatus[message.status]).toBe(`BOOKING_STATUS_${status}`);
    expect(bookingStatusFilter(message.status)).toBe(status);
  });
});

describe('bookingStatusFilter', () => {
  it('reads UNSPECIFIED as "any status" and an unknown number as invalid', () => {
    expect(bookingStatusFilter(BookingStatus.BOOKING_STATUS_UNSPECIFIED)).toBeUndefined();
    expect(bookingStatusFilter(42 as BookingStatus)).toBeNull();
  });
});
