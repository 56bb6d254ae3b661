// Maps the domain's RefundQuote onto the proto RefundQuote, field for field as REST writes it.
import type { Money } from '../../domain/booking';
import type { RefundQuote } from '../../domain/refund-quotes';
import type { RefundQuote as RefundQuoteMessage } from '../../generated/com/example/bookings/v1/refund_quote';
import type { Money as MoneyMessage } from '../../generated/com/example/common/v1/money';

function toMoney(money: Money): MoneyMessage {
  return { amountMinor: money.amountMinor, currency: money.currency };
}

export function toRefundQuoteMessage(quote: RefundQuote): RefundQuoteMessage {
  return {
    id: quote.id,
    bookingId: quote.bookingId,
    bookingVersion: quote.bookingVersion,
    passengerIds: [...quote.passengerIds],
    cancelsBooking: quote.cancelsBooking,
    lines: quote.lines.map((line) => ({
      passengerId: line.passengerId,
      paid: toMoney(line.paid),
      refund: toMoney(line.refund),
    })),
    total: toMoney(quote.total),
    rule: { name: quote.ruleName, refundPercent: quote.refundPercent },
    quotedAt: new Date(quote.quotedAt),
    validUntil: new Date(quote.validUntil),
  };
}
