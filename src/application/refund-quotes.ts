// Refund quotes both fronts serve: what cancelling passengers now would refund, stored so a cancel can name it.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Actor } from '../domain/actor';
import { notFound, validationFailed, type FieldViolation } from '../domain/errors';
import { passengerIdsField, quoteRefund, type RefundQuote } from '../domain/refund-quotes';
import { toTimestamp } from '../domain/time';
import { fieldMessages, isUuid, validateId } from '../domain/validation';
import { readPassengerTypes } from '../db/passenger-types';
import { readBookingRefundTerms, readRefundQuote, storeRefundQuote } from '../db/refund-quotes';
import type { BookingApplication, BookingView } from './interface';

export interface RefundQuoteApplication {
  /**
   * What cancelling `passengerIds` (every travelling passenger when absent) of the booking would refund now, and
   * until when that holds; stored, so a cancellation may name it. Readable like the booking (another customer's is
   * NOT_FOUND); a booking neither pending nor confirmed is BOOKING_STATE_CONFLICT.
   */
  quoteRefund(actor: Actor, bookingId: string, input: { passengerIds?: unknown }): Promise<RefundQuote>;
  /** A quote of the booking, as it was made; NOT_FOUND for an unknown one or one of another booking. */
  getRefundQuote(actor: Actor, bookingId: string, quoteId: string): Promise<RefundQuote>;
}

export interface RefundQuoteApplicationDependencies {
  database: Knex;
  bookings: Pick<BookingApplication, 'getBooking'>;
  now?: () => Date;
}

/** The ids as given, lower-cased; absent (undefined or null) is every travelling passenger. */
export function validatePassengerIds(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    throw validationFailed([{ field: passengerIdsField, message: 'must be a list of passenger ids' }]);
  }
  const violations: FieldViolation[] = value.flatMap((id, index) =>
    isUuid(id) ? [] : [{ field: `${passengerIdsField}[${index}]`, message: fieldMessages.uuid }],
  );
  if (violations.length > 0) throw validationFailed(violations);
  return (value as string[]).map((id) => id.toLowerCase());
}

/**
 * The view's passengers with the type their price line was priced for: the read model keeps a passenger's type
 * on the line, and the companion rules of a partial cancellation read it from the passenger.
 */
function typedPassengers(booking: BookingView) {
  const types = new Map(
    booking.price.lines.flatMap((line) =>
      line.passengerType === undefined ? [] : [[line.passengerId, line.passengerType] as const],
    ),
  );
  return booking.passengers.map((passenger) => {
    const passengerType = types.get(passenger.id);
    return passengerType === undefined ? passenger : { ...passenger, passengerType };
  });
}

export function createRefundQuoteApplication(
  dependencies: RefundQuoteApplicationDependencies,
): RefundQuoteApplication {
  const { database, bookings } = dependencies;
  const now = dependencies.now ?? (() => new Date());

  return {
    async quoteRefund(actor, bookingIdInput, input) {
      validateId(bookingIdInput, 'booking_id');
      const passengerIds = validatePassengerIds(input.passengerIds);
      const booking = await bookings.getBooking(actor, bookingIdInput);
      const [terms, types] = await Promise.all([
        readBookingRefundTerms(database, booking.id),
        readPassengerTypes(database, booking.routeId),
      ]);
      if (terms === undefined) throw notFound('Booking', booking.id);
      const quote = quoteRefund({
        booking: { ...booking, passengers: typedPassengers(booking), ...terms },
        ...(passengerIds === undefined ? {} : { passengerIds }),
        id: randomUUID(),
        now: toTimestamp(now()),
        types,
      });
      await storeRefundQuote(database, quote);
      return quote;
    },

    async getRefundQuote(actor, bookingIdInput, quoteIdInput) {
      validateId(bookingIdInput, 'booking_id');
      const quoteId = validateId(quoteIdInput, 'quote_id');
      const booking = await bookings.getBooking(actor, bookingIdInput);
      const quote = await readRefundQuote(database, quoteId);
      if (quote === undefined || quote.bookingId !== booking.id) throw notFound('Refund quote', quoteId);
      return quote;
    },
  };
}
