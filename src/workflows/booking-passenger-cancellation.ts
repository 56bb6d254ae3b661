// Lifecycle row "cancel-passengers": some passengers leave a booking that goes on; the last ones cancel it whole.
import type { BookingState, Money, PaymentIncident } from '../domain/booking';
import { bookingStateConflict, toDomainError } from '../domain/errors';
import { assertCanCancel } from '../domain/lifecycle';
import { isZeroMoney, money, subtractMoney } from '../domain/money';
import { defaultPassengerTypes, type PassengerType } from '../domain/passenger-types';
import {
  assertQuoteUsable,
  cancelledPassengersOf,
  planPassengerCancellation,
  quoteRefund,
  type PassengerCancellationPlan,
  type RefundQuote,
} from '../domain/refund-quotes';
import { toTimestamp } from '../domain/time';
import { cancelBooking } from './booking-cancellation';
import { now, type BookingSaga } from './booking-saga';
import type { CancelPassengersRequest } from './shared';

/** Each passenger with the type their price line was priced for: the companion rules read it. */
function typedBooking(booking: BookingState): BookingState {
  const typeOf = new Map(booking.price.lines.map((line) => [line.passengerId, line.passengerType]));
  return {
    ...booking,
    passengers: booking.passengers.map((passenger) => {
      const passengerType = typeOf.get(passenger.id);
      return passengerType === undefined ? passenger : { ...passenger, passengerType };
    }),
  };
}

function passengerTypesOf(saga: BookingSaga): readonly PassengerType[] {
  return saga.input.passengerTypes ?? defaultPassengerTypes;
}

/**
 * What cancelling the passengers a request names does to `booking`, refused as planPassengerCancellation refuses
 * (each passenger typed as their price line was priced, so the companion rules of `types` hold) and for a quote that
 * is not this booking's, these passengers' or of its current version. A quote's expiry was judged by the
 * application when it sent the request.
 */
export function passengerCancellationPlan(
  booking: BookingState,
  request: CancelPassengersRequest,
  types: readonly PassengerType[],
): PassengerCancellationPlan {
  const passengerIds = Array.isArray(request?.passengerIds) ? request.passengerIds : [];
  const plan = planPassengerCancellation(typedBooking(booking), passengerIds, types);
  const quote = request.quote;
  if (quote !== undefined) {
    assertQuoteUsable(quote, {
      bookingId: booking.id,
      passengerIds: plan.passengerIds,
      bookingVersion: booking.version,
      now: quote.quotedAt,
    });
  }
  const remaining = new Set(plan.remainingPassengers.map((passenger) => passenger.id));
  return {
    ...plan,
    remainingPassengers: booking.passengers.filter((passenger) => remaining.has(passenger.id)),
  };
}

/** Everything a partial cancellation must satisfy before it is accepted: the booking may be cancelled, and the plan. */
export function planPassengersCancel(
  saga: BookingSaga,
  request: CancelPassengersRequest,
): PassengerCancellationPlan {
  const booking = saga.booking;
  assertCanCancel(booking, now());
  const plan = passengerCancellationPlan(booking, request, passengerTypesOf(saga));
  // The open payment is for the price as it stands; a whole cancel closes it first, as any cancel does.
  if (!plan.cancelsBooking && saga.openPayment !== undefined) {
    throw bookingStateConflict(booking.status, 'cancel', 'a payment is open; finish or cancel it first');
  }
  return plan;
}

/**
 * "cancel-passengers": the last passengers cancel the booking as "cancel" does (refunding the quote when one was
 * accepted). Otherwise ReleaseSeats of their seats on every leg, RefundPayment of the quote (or of what the rule
 * gives their share at this instant), the booking without them recorded, IssueTickets revoking their tickets, and
 * the contact told. A refund the processor refuses after the seats went back does not hold them again (another
 * customer may have them already): the cancellation stands, the refund left unpaid is recorded as a payment
 * incident and reported to operators, and the booking owes it until they settle it.
 */
export async function cancelPassengers(
  saga: BookingSaga,
  request: CancelPassengersRequest,
): Promise<BookingState> {
  const plan = planPassengersCancel(saga, request);
  const reason = request.reason;
  if (plan.cancelsBooking) {
    return cancelBooking(saga, reason === undefined ? {} : { reason }, request.quote?.total);
  }
  const booking = saga.booking;
  const cancelledAt = toTimestamp(now());
  const quote: RefundQuote =
    request.quote ??
    quoteRefund({
      booking: typedBooking(booking),
      passengerIds: plan.passengerIds,
      id: `rule-at-version-${booking.version}`,
      now: cancelledAt,
      types: passengerTypesOf(saga),
    });
  const nextVersion = booking.version + 1;
  if (plan.seatsToRelease.length > 0) {
    await saga.steps.releaseSeats(`passengers-${nextVersion}`, [...plan.seatsToRelease]);
  }
  const unpaid = await refundOrOwe(saga, quote.total);
  const incident: PaymentIncident | undefined =
    unpaid === undefined
      ? undefined
      : {
          kind: 'REFUND_FAILED',
          eventId: `passengers-cancelled-${nextVersion}`,
          reference: `refund-passengers-${nextVersion}`,
          amount: unpaid.amount,
          reason: unpaid.reason,
          recordedAt: cancelledAt,
        };
  await saga.publish({
    status: saga.next('PASSENGERS_CANCELLED'),
    passengers: plan.remainingPassengers,
    price: plan.remainingPrice,
    cancelledPassengers: [
      ...(saga.booking.cancelledPassengers ?? []),
      ...cancelledPassengersOf(quote, cancelledAt),
    ],
    ...(incident === undefined
      ? {}
      : { paymentIncidents: [...(saga.booking.paymentIncidents ?? []), incident] }),
  });
  if (incident !== undefined) {
    await saga.steps.reportPaymentIncident('refund_failed', incident.reference, incident.reason);
  }
  await saga.steps.notifyPassengersCancelled(saga.booking, plan.passengerIds.length, quote.total, reason);
  return saga.booking;
}

/** Refunds `amount` (nothing when zero or nothing was captured); what a refused refund left unpaid, if any. */
async function refundOrOwe(
  saga: BookingSaga,
  amount: Money,
): Promise<{ amount: Money; reason: string } | undefined> {
  if (isZeroMoney(amount)) return undefined;
  const refundedBefore = saga.booking.amountRefunded;
  try {
    await saga.refund(amount);
    return undefined;
  } catch (error) {
    const refunded = subtractMoney(saga.booking.amountRefunded, refundedBefore);
    const left = subtractMoney(amount, refunded);
    return {
      amount: money(Math.max(0, left.amountMinor), left.currency),
      reason: toDomainError(error).message,
    };
  }
}
