// What operators read about a booking in the Temporal Web UI as its current details, never personal data.
import type { BookingState, Money } from '../domain/booking';

function formatMoney(amount: Money): string {
  const sign = amount.amountMinor < 0 ? '-' : '';
  const absolute = Math.abs(amount.amountMinor);
  return `${sign}${amount.currency} ${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, '0')}`;
}

function seatList(booking: Pick<BookingState, 'passengers'>): string {
  return booking.passengers.map((passenger) => `${passenger.seatNumber} (${passenger.fareClass})`).join(', ');
}

/** Markdown shown as the workflow's current details; rewritten on every transition. */
export function bookingDetails(booking: BookingState): string {
  const lines = [
    `**${booking.status}** (version ${booking.version})`,
    `Trip ${booking.tripId} on route ${booking.routeId}, departing ${booking.departureTime}`,
    `Seats: ${seatList(booking)}`,
    `Price ${formatMoney(booking.price.total)}, paid ${formatMoney(booking.amountPaid)}, refunded ${formatMoney(booking.amountRefunded)}`,
    `Payment: ${booking.payment.status}${booking.payment.declineReason ? ` (last decline: ${booking.payment.declineReason})` : ''}`,
  ];
  if (booking.status === 'PENDING_PAYMENT') lines.push(`Seats held until ${booking.holdExpiresAt}`);
  if (booking.cancellationReason !== undefined) lines.push(`Cancelled: ${booking.cancellationReason}`);
  return lines.join('\n\n');
}

/** Current details of a request that never became a booking. */
export function notBookedDetails(reason: string): string {
  return `**NOT BOOKED**\n\n${reason}\n\nNothing was held or charged.`;
}
