// The booking as it starts: the application layer's validated request, priced into the first snapshot.
import type { BookingState, Passenger } from '../domain/booking';
import { DomainError } from '../domain/errors';
import { priceWithTerms } from '../domain/booking-price';
import { holdExpiryFor, initialStatus } from '../domain/lifecycle';
import { zeroMoney } from '../domain/money';
import { toTimestamp } from '../domain/time';
import type { BookingWorkflowInput } from './shared';

/**
 * Version 1 of the booking: PENDING_PAYMENT, priced at the trip's fares for each passenger's type with the discount
 * code applied (as the application priced it for the client), its hold ending no later than departure.
 * `passengerIds` name the passengers of the input, in order.
 */
export function openBooking(
  input: BookingWorkflowInput,
  passengerIds: readonly string[],
  openedAt: Date,
): BookingState {
  if (passengerIds.length !== input.passengers.length) {
    throw new DomainError(
      'INTERNAL',
      `${passengerIds.length} passenger ids for ${input.passengers.length} passengers`,
    );
  }
  const passengers = input.passengers.map((passenger, index): Passenger => ({
    id: passengerIds[index],
    ...passenger,
  }));
  const price = priceWithTerms(passengers, input.farePrices, input);
  const zero = zeroMoney(price.total.currency);
  return {
    id: input.bookingId,
    customerId: input.customerId,
    tripId: input.tripId,
    routeId: input.routeId,
    status: initialStatus,
    passengers,
    contactEmail: input.contactEmail,
    ...(input.contactPhone === undefined ? {} : { contactPhone: input.contactPhone }),
    price,
    amountPaid: zero,
    amountRefunded: zero,
    holdExpiresAt: holdExpiryFor(openedAt, input.timings.holdDurationMs, input.departureTime),
    payment: { status: 'NONE' },
    paymentAttempts: [],
    refundRule: input.refundRule,
    departureTime: input.departureTime,
    ...(input.segment === undefined ? {} : { segment: input.segment }),
    version: 1,
    createdAt: toTimestamp(openedAt),
    updatedAt: toTimestamp(openedAt),
  };
}
