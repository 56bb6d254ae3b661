// Pricing, change deltas, refund rules and allocation, and what each booking state says is owed (invariant 2).
import type {
  BookingState,
  BookingStatus,
  CancelledPassenger,
  FarePrices,
  Money,
  Passenger,
  PaymentStatus,
  PriceBreakdown,
  RefundRule,
  Timestamp,
} from './booking';
import { DomainError, validationFailed, type FieldViolation } from './errors';
import { addMoney, isZeroMoney, money, subtractMoney, sumMoney, zeroMoney } from './money';
import { hourMs, timestampMs } from './time';

/** Full refund until 24 h before departure, half after that, nothing once the bus has left. */
export const defaultRefundRule: RefundRule = {
  name: 'standard-flexible',
  tiers: [
    { minimumNoticeMs: 24 * hourMs, refundPercent: 100 },
    { minimumNoticeMs: 0, refundPercent: 50 },
  ],
  afterDepartureRefundPercent: 0,
};

function pricesCurrency(farePrices: FarePrices): string {
  const currencies = new Set(Object.values(farePrices).map((price) => price.currency));
  if (currencies.size !== 1) {
    throw new DomainError('INTERNAL', 'A trip must price its fare classes in exactly one currency');
  }
  return [...currencies][0];
}

/**
 * Every requested fare class is on sale on this trip (the trip has a price for it). A class it does not sell is a
 * VALIDATION_FAILED on `fareClassField(index)` (by default `passengers[i].fare_class`).
 */
export function assertFareClassesOnSale(
  passengers: readonly Pick<Passenger, 'fareClass'>[],
  farePrices: FarePrices,
  fareClassField: (index: number) => string = (index) => `passengers[${index}].fare_class`,
): void {
  const violations: FieldViolation[] = passengers.flatMap((passenger, index) =>
    farePrices[passenger.fareClass] === undefined
      ? [
          {
            field: fareClassField(index),
            message: `fare class ${passenger.fareClass} is not sold on this trip`,
          },
        ]
      : [],
  );
  if (violations.length > 0) throw validationFailed(violations);
}

/** One line per passenger at the trip's price for their fare class; a class not on sale is refused as above. */
export function priceBooking(
  passengers: readonly Pick<Passenger, 'id' | 'seatNumber' | 'fareClass'>[],
  farePrices: FarePrices,
  fareClassField?: (index: number) => string,
): PriceBreakdown {
  const currency = pricesCurrency(farePrices);
  assertFareClassesOnSale(passengers, farePrices, fareClassField);
  const lines = passengers.map((passenger) => {
    const price = farePrices[passenger.fareClass] as Money;
    return {
      passengerId: passenger.id,
      seatNumber: passenger.seatNumber,
      fareClass: passenger.fareClass,
      amount: money(price.amountMinor, price.currency),
    };
  });
  return {
    lines,
    total: sumMoney(
      lines.map((line) => line.amount),
      currency,
    ),
  };
}

/** after − before: positive is more to pay, negative is money back. */
export function priceDelta(before: PriceBreakdown, after: PriceBreakdown): Money {
  return subtractMoney(after.total, before.total);
}

export type ChangeSettlement =
  | { readonly kind: 'NONE'; readonly amount: Money }
  /** Pending booking: nothing was captured, the amount due simply becomes the new total. */
  | { readonly kind: 'AMOUNT_DUE_CHANGED'; readonly amount: Money }
  /** Confirmed booking: capture the difference (ProcessPayment). */
  | { readonly kind: 'CHARGE'; readonly amount: Money }
  /** Confirmed booking: give the difference back (RefundPayment). */
  | { readonly kind: 'REFUND'; readonly amount: Money };

/** What a change costs in the booking's current status; `amount` is never negative. */
export function settlementForChange(status: BookingStatus, delta: Money): ChangeSettlement {
  if (isZeroMoney(delta)) return { kind: 'NONE', amount: delta };
  const amount = money(Math.abs(delta.amountMinor), delta.currency);
  if (status === 'PENDING_PAYMENT') return { kind: 'AMOUNT_DUE_CHANGED', amount };
  if (status === 'CONFIRMED') return { kind: delta.amountMinor > 0 ? 'CHARGE' : 'REFUND', amount };
  throw new DomainError('INTERNAL', `A ${status} booking cannot be changed`);
}

/** The percentage the rule grants for a cancellation at `cancelledAt`. */
export function refundPercent(rule: RefundRule, departureTime: Timestamp, cancelledAt: Timestamp): number {
  const noticeMs = timestampMs(departureTime) - timestampMs(cancelledAt);
  if (noticeMs <= 0) return rule.afterDepartureRefundPercent;
  const byLongestNotice = [...rule.tiers].sort((left, right) => right.minimumNoticeMs - left.minimumNoticeMs);
  return byLongestNotice.find((tier) => noticeMs >= tier.minimumNoticeMs)?.refundPercent ?? 0;
}

/**
 * Refund amounts round DOWN to the minor unit: the operator never pays out more than the rule grants, and
 * the customer loses at most one minor unit (50% of 1 001 cents refunds 500).
 */
function percentOf(amount: Money, percent: number): Money {
  if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
    throw new DomainError('INTERNAL', 'Refund percentages are whole numbers from 0 to 100');
  }
  return money(Math.floor((amount.amountMinor * percent) / 100), amount.currency);
}

/** The refund a cancellation earns: the rule's percentage of the net amount captured so far. */
export function refundOwed(input: {
  amountPaid: Money;
  amountRefunded: Money;
  departureTime: Timestamp;
  cancelledAt: Timestamp;
  rule?: RefundRule;
}): Money {
  const netPaid = subtractMoney(input.amountPaid, input.amountRefunded);
  if (netPaid.amountMinor <= 0) return zeroMoney(netPaid.currency);
  return percentOf(
    netPaid,
    refundPercent(input.rule ?? defaultRefundRule, input.departureTime, input.cancelledAt),
  );
}

/** A captured payment, and how much of it has been given back so far. */
export interface CapturedCharge {
  readonly transactionId: string;
  readonly amount: Money;
  readonly refunded: Money;
}

/** One refund against one captured payment. */
export interface RefundPortion {
  readonly transactionId: string;
  readonly amount: Money;
}

/**
 * How a refund is taken from the captured payments: newest first, each giving back no more than it has left, so
 * the money goes back the way it came; a refund larger than everything left is capped at what is left.
 */
export function allocateRefund(charges: readonly CapturedCharge[], refund: Money): RefundPortion[] {
  const portions: RefundPortion[] = [];
  let remaining = refund;
  for (const charge of [...charges].reverse()) {
    const left = subtractMoney(charge.amount, charge.refunded);
    const portion = money(Math.min(remaining.amountMinor, left.amountMinor), left.currency);
    if (portion.amountMinor <= 0) continue;
    portions.push({ transactionId: charge.transactionId, amount: portion });
    remaining = subtractMoney(remaining, portion);
  }
  return portions;
}

/**
 * What the operator kept of passengers cancelled out of a booking that goes on (paid − refunded, each): part of
 * what such a booking owes beside its remaining lines when invariant 2 is checked.
 */
export function keptFromCancelledPassengers(
  cancelled: readonly CancelledPassenger[] | undefined,
  currency: string,
): Money {
  return sumMoney(
    (cancelled ?? []).map((passenger) => subtractMoney(passenger.paid, passenger.refund)),
    currency,
  );
}

/**
 * The refund a cancellation of this booking at `cancelledAt` triggers; nothing for an unpaid one. What was kept of
 * passengers cancelled before is settled already: the rule applies to the rest.
 */
export function cancellationRefund(
  state: Pick<BookingState, 'status' | 'amountPaid' | 'amountRefunded' | 'departureTime' | 'refundRule'> &
    Partial<Pick<BookingState, 'cancelledPassengers'>>,
  cancelledAt: Timestamp,
): Money {
  if (state.status !== 'CONFIRMED') return zeroMoney(state.amountPaid.currency);
  const kept = keptFromCancelledPassengers(state.cancelledPassengers, state.amountPaid.currency);
  return refundOwed({
    amountPaid: state.amountPaid,
    amountRefunded: addMoney(state.amountRefunded, kept),
    departureTime: state.departureTime,
    cancelledAt,
    rule: state.refundRule,
  });
}

/** The rule's no-show share of the fares of the given passengers (nothing under the standard rule). */
function noShowShare(
  state: Pick<BookingState, 'price' | 'refundRule'>,
  noShowPassengerIds: readonly string[],
): Money {
  const fares = state.price.lines.filter((line) => noShowPassengerIds.includes(line.passengerId));
  return percentOf(
    sumMoney(
      fares.map((line) => line.amount),
      state.price.total.currency,
    ),
    state.refundRule.noShowRefundPercent ?? 0,
  );
}

/** What the booking's no-show passengers get back: their share under the fare's rule, never more than is paid. */
export function noShowRefund(
  state: Pick<BookingState, 'price' | 'amountPaid' | 'amountRefunded' | 'refundRule'>,
  noShowPassengerIds: readonly string[],
): Money {
  const owed = noShowShare(state, noShowPassengerIds);
  const netPaid = subtractMoney(state.amountPaid, state.amountRefunded);
  return money(Math.max(0, Math.min(owed.amountMinor, netPaid.amountMinor)), owed.currency);
}

/** The no-shows' share a confirmed or completed booking gave back, once its no-shows were recorded. */
function recordedNoShowShare(state: OwedState): Money {
  if (state.noShowsRecordedAt === undefined) return zeroMoney(state.price.total.currency);
  const boarded = new Set((state.boardings ?? []).map((boarding) => boarding.passengerId));
  const noShows = state.price.lines.map((line) => line.passengerId).filter((id) => !boarded.has(id));
  return noShowShare(state, noShows);
}

type OwedState = Pick<
  BookingState,
  'status' | 'price' | 'departureTime' | 'refundRule' | 'confirmedAt' | 'cancelledAt'
> &
  Partial<Pick<BookingState, 'boardings' | 'noShowsRecordedAt' | 'cancelledPassengers'>>;

/**
 * What captured − refunded must equal in each state (invariant 2): nothing while pending or expired, the
 * price once confirmed or completed (less what its no-shows got back), and for a cancelled booking that had been
 * paid, the part of the price its refund rule let the operator keep. A paid booking also owes what was kept of
 * passengers cancelled out of it (their price lines are gone from `price`).
 */
export function amountOwedByState(state: OwedState): Money {
  const currency = state.price.total.currency;
  const kept = keptFromCancelledPassengers(state.cancelledPassengers, currency);
  switch (state.status) {
    case 'PENDING_PAYMENT':
    case 'EXPIRED':
      return zeroMoney(currency);
    case 'CONFIRMED':
    case 'COMPLETED':
      return addMoney(subtractMoney(state.price.total, recordedNoShowShare(state)), kept);
    case 'CANCELLED': {
      if (state.confirmedAt === undefined) return zeroMoney(currency);
      if (state.cancelledAt === undefined) {
        throw new DomainError('INTERNAL', 'A cancelled booking records when it was cancelled');
      }
      const refund = percentOf(
        state.price.total,
        refundPercent(state.refundRule, state.departureTime, state.cancelledAt),
      );
      return addMoney(subtractMoney(state.price.total, refund), kept);
    }
  }
}

/** amountPaid − amountRefunded. */
export function netAmountPaid(state: Pick<BookingState, 'amountPaid' | 'amountRefunded'>): Money {
  return subtractMoney(state.amountPaid, state.amountRefunded);
}

/** owed − net paid: positive means a charge is missing, negative a refund; zero when invariant 2 holds. */
export function outstandingBalance(
  state: OwedState & Pick<BookingState, 'amountPaid' | 'amountRefunded'>,
): Money {
  return subtractMoney(amountOwedByState(state), netAmountPaid(state));
}

/** The payment summary status that follows from the money moved so far. */
export function paymentStatusFor(input: {
  amountPaid: Money;
  amountRefunded: Money;
  lastAttemptDeclined: boolean;
}): PaymentStatus {
  if (input.amountPaid.amountMinor === 0) return input.lastAttemptDeclined ? 'DECLINED' : 'NONE';
  if (input.amountRefunded.amountMinor === 0) return 'CAPTURED';
  return input.amountRefunded.amountMinor >= input.amountPaid.amountMinor ? 'REFUNDED' : 'PARTIALLY_REFUNDED';
}
