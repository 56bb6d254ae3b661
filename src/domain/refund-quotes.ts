// Cancelling some or all passengers: what it would refund now (a quote that holds for a while), and what it frees.
import type {
  BookingState,
  CancelledPassenger,
  Money,
  Passenger,
  PriceBreakdown,
  PriceLine,
  Timestamp,
} from './booking';
import { distributeLargestRemainder } from './discount-codes';
import { DomainError, bookingStateConflict, validationFailed, type FieldViolation } from './errors';
import { keptFromCancelledPassengers, refundOwed, refundPercent } from './fares';
import { money, subtractMoney, sumMoney } from './money';
import {
  companionRuleViolations,
  adultPassengerType,
  type PassengerType,
  type TypedPassenger,
} from './passenger-types';
import { minuteMs, timestampMs } from './time';

export type { CancelledPassenger };
export { keptFromCancelledPassengers };

/** How long a quote holds at most; it also ends where the refund rule would give another share. */
export const refundQuoteValidityMs = 10 * minuteMs;

/** The passengers field of both fronts' partial cancellation. */
export const passengerIdsField = 'passenger_ids';

type PlannedPassenger = Pick<Passenger, 'id' | 'seatNumber'> & TypedPassenger;

/**
 * A booking as a partial cancellation sees it: its passengers still travelling (a cancelled one is no longer among
 * them but in `cancelledPassengers`), their price lines, and who boarded.
 */
export interface CancellableBooking<P extends PlannedPassenger = Passenger> {
  readonly status: BookingState['status'];
  readonly passengers: readonly P[];
  readonly price: PriceBreakdown;
  readonly boardings?: BookingState['boardings'];
  readonly cancelledPassengers?: readonly CancelledPassenger[];
}

export interface PassengerCancellationPlan<P extends PlannedPassenger = Passenger> {
  /** The passengers to cancel, in the order asked. */
  readonly passengerIds: readonly string[];
  /** Their seats, each to be released on every leg it holds; a lap passenger has none. */
  readonly seatsToRelease: readonly string[];
  readonly remainingPassengers: readonly P[];
  /** The remaining passengers' lines as they were (each keeps their share of a discount); total their sum. */
  readonly remainingPrice: PriceBreakdown;
  /** The last passengers go: the booking is cancelled as a whole instead (its code given back, and so on). */
  readonly cancelsBooking: boolean;
}

/**
 * What cancelling `passengerIds` of the booking means: which seats go back on every leg, who stays, and whether
 * nobody does. Refused: an empty list or a repeated, unknown or already cancelled passenger (VALIDATION_FAILED on
 * `passenger_ids[i]`), a passenger who boarded, and, given the route's `types`, leaving a passenger without the
 * companion their type requires; a booking that is not pending or confirmed is BOOKING_STATE_CONFLICT.
 */
export function planPassengerCancellation<P extends PlannedPassenger>(
  booking: CancellableBooking<P>,
  passengerIds: readonly string[],
  types?: readonly PassengerType[],
): PassengerCancellationPlan<P> {
  if (booking.status !== 'PENDING_PAYMENT' && booking.status !== 'CONFIRMED') {
    throw bookingStateConflict(booking.status, 'cancel');
  }
  if (passengerIds.length === 0) {
    throw validationFailed([{ field: passengerIdsField, message: 'must name at least one passenger' }]);
  }
  const travelling = new Set(booking.passengers.map((passenger) => passenger.id));
  const cancelled = new Set((booking.cancelledPassengers ?? []).map((passenger) => passenger.passengerId));
  const boarded = new Set((booking.boardings ?? []).map((boarding) => boarding.passengerId));
  const seen = new Set<string>();
  const violations: FieldViolation[] = [];
  passengerIds.forEach((rawId, index) => {
    const id = rawId.toLowerCase();
    const field = `${passengerIdsField}[${index}]`;
    if (seen.has(id)) {
      violations.push({ field, message: 'this passenger appears more than once in the list' });
    } else if (cancelled.has(id)) {
      violations.push({ field, message: 'this passenger was cancelled already' });
    } else if (!travelling.has(id)) {
      violations.push({ field, message: 'no passenger with this id belongs to the booking' });
    } else if (boarded.has(id)) {
      violations.push({ field, message: 'this passenger has boarded' });
    }
    seen.add(id);
  });
  if (violations.length > 0) throw validationFailed(violations);

  const leaving = new Set(passengerIds.map((id) => id.toLowerCase()));
  const remainingPassengers = booking.passengers.filter((passenger) => !leaving.has(passenger.id));
  const cancelsBooking = remainingPassengers.length === 0;
  if (!cancelsBooking && types !== undefined) {
    const left = companionRuleViolations(
      remainingPassengers.map((passenger) => passenger.passengerType ?? adultPassengerType),
      types,
      () => passengerIdsField,
    );
    const messages = [...new Set(left.map((violation) => violation.message))];
    if (messages.length > 0) {
      throw validationFailed(
        messages.map((message) => ({
          field: passengerIdsField,
          message: `cancelling these passengers would break a rule of the others: ${message}`,
        })),
      );
    }
  }
  const seatsToRelease = booking.passengers
    .filter((passenger) => leaving.has(passenger.id) && passenger.seatNumber !== '')
    .map((passenger) => passenger.seatNumber);
  return {
    passengerIds: passengerIds.map((id) => id.toLowerCase()),
    seatsToRelease,
    remainingPassengers,
    remainingPrice: priceWithout(booking.price, leaving),
    cancelsBooking,
  };
}

function priceWithout(price: PriceBreakdown, leaving: ReadonlySet<string>): PriceBreakdown {
  const currency = price.total.currency;
  const lines = price.lines.filter((line) => !leaving.has(line.passengerId));
  const total = sumMoney(
    lines.map((line) => line.amount),
    currency,
  );
  if (price.discount === undefined) return { lines, total };
  const discount = sumMoney(
    lines.map((line) => line.discount ?? money(0, currency)),
    currency,
  );
  return { lines, total, discount: { ...price.discount, amount: discount } };
}

// ---- Quotes ----

export interface RefundQuoteLine {
  readonly passengerId: string;
  /** The passenger's share of what the booking has paid and kept so far. */
  readonly paid: Money;
  readonly refund: Money;
}

/** What cancelling the passengers named would refund, as promised until `validUntil`. */
export interface RefundQuote {
  /** Chosen by the caller. */
  readonly id: string;
  readonly bookingId: string;
  /** The booking's version when quoted: any later change voids the quote. */
  readonly bookingVersion: number;
  readonly passengerIds: readonly string[];
  readonly cancelsBooking: boolean;
  readonly lines: readonly RefundQuoteLine[];
  readonly total: Money;
  readonly ruleName: string;
  readonly refundPercent: number;
  readonly quotedAt: Timestamp;
  readonly validUntil: Timestamp;
}

export type QuotableBooking<P extends PlannedPassenger = Passenger> = CancellableBooking<P> &
  Pick<BookingState, 'id' | 'version' | 'amountPaid' | 'amountRefunded' | 'refundRule' | 'departureTime'>;

/**
 * Each travelling passenger's share of what the booking has paid net of refunds: their line (after any discount)
 * while the money covers the lines, shared in proportion to the lines (largest remainder) when it covers less, as
 * for a booking not paid yet. Money kept from passengers cancelled before is nobody's share.
 */
export function paidShares(
  booking: Pick<QuotableBooking<PlannedPassenger>, 'passengers' | 'price' | 'amountPaid' | 'amountRefunded'>,
): ReadonlyMap<string, Money> {
  const currency = booking.price.total.currency;
  const travelling = new Set(booking.passengers.map((passenger) => passenger.id));
  const lines: PriceLine[] = booking.price.lines.filter((line) => travelling.has(line.passengerId));
  const fares = lines.map((line) => line.amount.amountMinor);
  const fareTotal = fares.reduce((sum, amount) => sum + amount, 0);
  const netPaid = subtractMoney(booking.amountPaid, booking.amountRefunded).amountMinor;
  const pool = Math.max(0, Math.min(netPaid, fareTotal));
  const shares = distributeLargestRemainder(pool, fares);
  return new Map(lines.map((line, index) => [line.passengerId, money(shares[index], currency)]));
}

/**
 * The instant the quote stops holding: `validForMs` after `now`, but no later than the next moment the rule gives
 * another share (a tier's notice running out, or the departure). Once the bus has left the share no longer changes.
 */
export function quoteValidUntil(
  booking: Pick<QuotableBooking, 'refundRule' | 'departureTime'>,
  now: Timestamp,
  validForMs: number = refundQuoteValidityMs,
): Timestamp {
  const nowMs = timestampMs(now);
  const departureMs = timestampMs(booking.departureTime);
  const ruleChanges = [
    departureMs,
    ...booking.refundRule.tiers.map((tier) => departureMs - tier.minimumNoticeMs),
  ].filter((instant) => instant > nowMs);
  return new Date(Math.min(nowMs + validForMs, ...ruleChanges)).toISOString();
}

/**
 * The quote for cancelling `passengerIds` (every travelling passenger when absent) at `now`, checked as
 * planPassengerCancellation checks them. The refund is the rule's share (refundPercent at `now`) of what the
 * passengers named paid, rounded down once for them together as refundOwed rounds, then shared over them in
 * proportion to what each paid; for every passenger of a booking nobody left it is the whole cancellation's refund.
 */
export function quoteRefund<P extends PlannedPassenger>(input: {
  readonly booking: QuotableBooking<P>;
  readonly passengerIds?: readonly string[];
  readonly id: string;
  readonly now: Timestamp;
  readonly validForMs?: number;
  readonly types?: readonly PassengerType[];
}): RefundQuote {
  const { booking, now } = input;
  const passengerIds = input.passengerIds ?? booking.passengers.map((passenger) => passenger.id);
  const plan = planPassengerCancellation(booking, passengerIds, input.types);
  const currency = booking.price.total.currency;
  const shares = paidShares(booking);
  const paid = plan.passengerIds.map((id) => shares.get(id) ?? money(0, currency));
  const total = refundOwed({
    amountPaid: sumMoney(paid, currency),
    amountRefunded: money(0, currency),
    departureTime: booking.departureTime,
    cancelledAt: now,
    rule: booking.refundRule,
  });
  const refunds = distributeLargestRemainder(
    total.amountMinor,
    paid.map((amount) => amount.amountMinor),
  );
  return {
    id: input.id,
    bookingId: booking.id,
    bookingVersion: booking.version,
    passengerIds: plan.passengerIds,
    cancelsBooking: plan.cancelsBooking,
    lines: plan.passengerIds.map((passengerId, index) => ({
      passengerId,
      paid: paid[index],
      refund: money(refunds[index], currency),
    })),
    total,
    ruleName: booking.refundRule.name,
    refundPercent: refundPercent(booking.refundRule, booking.departureTime, now),
    quotedAt: now,
    validUntil: quoteValidUntil(booking, now, input.validForMs),
  };
}

/** What a cancellation made under `quote` at `at` records of each passenger it cancels. */
export function cancelledPassengersOf(quote: RefundQuote, at: Timestamp): CancelledPassenger[] {
  return quote.lines.map((line) => ({
    passengerId: line.passengerId,
    cancelledAt: at,
    paid: line.paid,
    refund: line.refund,
  }));
}

export function quoteExpired(quote: Pick<RefundQuote, 'id' | 'validUntil'>): DomainError {
  return new DomainError(
    'QUOTE_EXPIRED',
    `Refund quote ${quote.id} held until ${quote.validUntil}; ask for a new quote`,
    { details: { quoteId: quote.id, validUntil: quote.validUntil } },
  );
}

export const quoteInvalidReasons = ['other_booking', 'other_passengers', 'booking_changed'] as const;
export type QuoteInvalidReason = (typeof quoteInvalidReasons)[number];

export function quoteInvalid(quoteId: string, reason: QuoteInvalidReason, message: string): DomainError {
  return new DomainError('QUOTE_INVALID', message, { details: { quoteId, reason } });
}

function sameIds(first: readonly string[], second: readonly string[]): boolean {
  const normalised = (ids: readonly string[]) => [...new Set(ids.map((id) => id.toLowerCase()))].sort();
  const [left, right] = [normalised(first), normalised(second)];
  return left.length === right.length && left.every((id, index) => id === right[index]);
}

/**
 * Nothing when a cancellation of `passengerIds` (absent: the quote's own) of `bookingId` at `now` may refund what
 * `quote` says: QUOTE_INVALID for another booking's quote, other passengers or (given `bookingVersion`) a booking
 * changed since, QUOTE_EXPIRED at or after its `validUntil`.
 */
export function assertQuoteUsable(
  quote: RefundQuote,
  context: {
    readonly bookingId: string;
    readonly passengerIds?: readonly string[];
    readonly now: Timestamp;
    readonly bookingVersion?: number;
  },
): void {
  if (quote.bookingId !== context.bookingId.toLowerCase()) {
    throw quoteInvalid(quote.id, 'other_booking', `Refund quote ${quote.id} is for another booking`);
  }
  if (context.passengerIds !== undefined && !sameIds(context.passengerIds, quote.passengerIds)) {
    throw quoteInvalid(
      quote.id,
      'other_passengers',
      `Refund quote ${quote.id} is for passengers ${quote.passengerIds.join(', ')}, not the ones named`,
    );
  }
  if (context.bookingVersion !== undefined && context.bookingVersion !== quote.bookingVersion) {
    throw quoteInvalid(
      quote.id,
      'booking_changed',
      `Refund quote ${quote.id} was made at version ${quote.bookingVersion}; the booking is at version ${context.bookingVersion}`,
    );
  }
  if (timestampMs(context.now) >= timestampMs(quote.validUntil)) throw quoteExpired(quote);
}
