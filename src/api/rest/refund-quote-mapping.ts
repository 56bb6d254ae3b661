// Refund quotes as the REST contract's JSON: the request's passenger ids in, a RefundQuote out.
import type { RefundQuote } from '../../domain/refund-quotes';
import { moneyJson } from './contract-mapping';

/** The body is optional: without it, or without `passenger_ids`, every travelling passenger is quoted. */
export function refundQuoteInput(body: unknown): { passengerIds?: unknown } {
  const ids = (body ?? {}) as { passenger_ids?: unknown };
  return ids.passenger_ids === undefined ? {} : { passengerIds: ids.passenger_ids };
}

export function refundQuoteJson(quote: RefundQuote) {
  return {
    id: quote.id,
    booking_id: quote.bookingId,
    booking_version: quote.bookingVersion,
    passenger_ids: [...quote.passengerIds],
    cancels_booking: quote.cancelsBooking,
    lines: quote.lines.map((line) => ({
      passenger_id: line.passengerId,
      paid: moneyJson(line.paid),
      refund: moneyJson(line.refund),
    })),
    total: moneyJson(quote.total),
    rule: { name: quote.ruleName, refund_percent: quote.refundPercent },
    quoted_at: quote.quotedAt,
    valid_until: quote.validUntil,
  };
}
