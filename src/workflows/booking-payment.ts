// Lifecycle rows of a pending booking's payment and its hold: approved, declined, open, refused by a cancelled trip, expired.
import { patched } from '@temporalio/workflow';
import type { BookingState } from '../domain/booking';
import { toDomainError } from '../domain/errors';
import { netAmountPaid } from '../domain/fares';
import { assertCanConfirmPayment, shouldExpire } from '../domain/lifecycle';
import { toTimestamp } from '../domain/time';
import { isTripCancelledRefusal, tripCancellationReasonOf } from '../domain/trip-cancellation';
import { cancelBecauseTripCancelled } from './booking-cancellation';
import { now, type BookingSaga } from './booking-saga';
import { paymentConversationPatch, tripCancelledPaymentPatch } from './patches';
import {
  answerOpenPayment,
  closeOpenPayment,
  keepOrRefundLatePayment,
  showOpenPayment,
} from './payment-conversation';
import type { ConfirmPaymentRequest } from './shared';

export function checkConfirmPayment(saga: BookingSaga, request: ConfirmPaymentRequest): string {
  assertCanConfirmPayment(saga.booking, now());
  return request.paymentToken;
}

/**
 * "payment approved": ProcessPayment, ConfirmSeats, CONFIRMED, the tickets and the notice. "payment declined": the
 * attempt is recorded and the booking stays PENDING_PAYMENT. "payment after the trip was cancelled": ProcessPayment
 * refuses before any money moves. "a charge already under way when the trip was cancelled": ConfirmSeats is refused
 * and the booking is cancelled with its trip.
 */
export async function confirmPayment(
  saga: BookingSaga,
  request: ConfirmPaymentRequest,
): Promise<BookingState> {
  const paymentToken = checkConfirmPayment(saga, request);
  if (patched(paymentConversationPatch)) {
    // A payment request while one is open is answered that same challenge: the customer's client may have lost it.
    if (saga.openPayment !== undefined) return answerOpenPayment(saga, saga.openPayment);
    const open = await saga.chargeOrRecordDecline(saga.booking.price.total, paymentToken, {
      allowAction: true,
    });
    if (open !== undefined) return showOpenPayment(saga, open);
  } else {
    await saga.chargeOrRecordDecline(saga.booking.price.total, paymentToken);
  }
  await confirmPaidSeats(saga);
  return saga.booking;
}

/**
 * The money is the booking's: ConfirmSeats, CONFIRMED, the tickets and the notice. When the seats cannot be
 * confirmed, nothing stays charged without them: the booking expires (or is cancelled with its trip) with a full
 * refund, and the refusal is thrown.
 */
export async function confirmPaidSeats(saga: BookingSaga): Promise<void> {
  try {
    await saga.steps.confirmSeats(saga.booking.version + 1);
  } catch (error) {
    // The hold lapsed and the seats went to someone else: nothing may stay charged without a seat.
    const reason = toDomainError(error);
    if (isTripCancelledRefusal(reason) && patched(tripCancelledPaymentPatch)) {
      // The operator's reason, as the trip's own cancellation gives it; a refusal that names none, its message.
      const operatorReason = tripCancellationReasonOf(reason) ?? reason.message;
      await cancelBecauseTripCancelled(saga, saga.booking.tripId, operatorReason);
    } else {
      await expireUnpaidHold(saga);
    }
    throw reason;
  }
  await saga.publish({ status: saga.next('PAYMENT_APPROVED'), confirmedAt: toTimestamp(now()) });
  await saga.steps.notifyConfirmed(saga.booking);
}

/**
 * "the hold timer fires": EXPIRED. Runs after any payment in flight: a payment that won the race keeps the booking.
 * An open payment is cancelled first; one the customer finished at the last second is money that arrived late.
 */
export async function holdUntilPaidOrExpired(saga: BookingSaga): Promise<void> {
  await saga.waitForTimer(
    'HOLD_TIMER_FIRED',
    () => saga.booking.holdExpiresAt,
    async () => {
      if (!shouldExpire(saga.booking, now())) return;
      const lateCharge = await closeOpenPayment(saga);
      if (lateCharge !== undefined) await keepOrRefundLatePayment(saga, lateCharge, confirmPaidSeats);
      else await expireUnpaidHold(saga);
    },
  );
}

/** The seats go back, anything captured is refunded, and the customer hears that the hold lapsed. */
async function expireUnpaidHold(saga: BookingSaga): Promise<void> {
  await saga.releaseSeatsAndRefund(netAmountPaid(saga.booking), 'expired');
  await saga.publish({ status: saga.next('HOLD_TIMER_FIRED') });
  await saga.steps.notifyExpired(saga.booking);
}
