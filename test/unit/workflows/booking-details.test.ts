// What operators see in the Web UI names seats, money and status, and never a passenger's personal data.
import { bookingDetails, notBookedDetails } from '../../../src/workflows/booking-details';
import { bookingSummary } from '../../../src/workflows/shared';
import { bookingState } from '../../support/booking-states';

test('details show status, seats and money, without names, emails or phones', () => {
  const booking = bookingState({
    status: 'CONFIRMED',
    amountPaid: { amountMinor: 5000, currency: 'EUR' },
    payment: { status: 'CAPTURED', method: 'visa •••• 4242' },
  });

  const details = bookingDetails(booking);

  expect(details).toContain('**CONFIRMED**');
  expect(details).toContain('3A (STANDARD), 3B (STANDARD)');
  expect(details).toContain('paid EUR 50.00');
  for (const passenger of booking.passengers) {
    expect(details).not.toContain(passenger.firstName);
    expect(details).not.toContain(passenger.email);
  }
  expect(details).not.toContain(booking.contactEmail);
  expect(details).not.toContain('+351');
});

test('a pending booking shows until when its seats are held', () => {
  const booking = bookingState();
  expect(bookingDetails(booking)).toContain(`Seats held until ${booking.holdExpiresAt}`);
});

test('the summary lists seats, trip and departure; a refused request says nothing was held', () => {
  expect(
    bookingSummary({
      tripId: 'trip-1',
      departureTime: '2026-12-01T10:00:00.000Z',
      passengers: [{ seatNumber: '1A' }],
    }),
  ).toBe('Booking of seats 1A on trip trip-1 departing 2026-12-01T10:00:00.000Z');
  expect(notBookedDetails('Seat 1A is not available')).toContain('Nothing was held or charged.');
});
