// Lifecycle rows that cancel: by the customer (pending, while being made, confirmed), with the trip, by an operator.
import { CancellationScope, condition, log } from '@temporalio/workflow';
import type { BookingState, Money } from '../domain/booking';
import { DomainError, toDomainError } from '../domain/errors';
import { cancellationRefund, netAmountPaid } from '../domain/fares';
import { assertCanCancel, isTerminal } from '../domain/lifecycle';
import { zeroMoney } from '../domain/money';
import { toTimestamp } from '../domain/time';
import { tripCancellationRefund } from '../domain/trip-cancellation';
import { notBookedStatus, now, type BookingSaga } from './booking-saga';
import { closeOpenPayment } from './payment-conversation';
import type { CancelBookingRequest, TripCancellationAnswer, TripCancellationRequest } from './shared';

export function checkCancel(saga: BookingSaga, request: CancelBookingRequest): { reason?: string } {
  assertCanCancel(saga.booking, now());
  return request;
}

/**
 * "`PENDING_PAYMENT` cancel": ReleaseSeats. "`CONFIRMED` cancel": RefundPayment of what the fare's refund rule
 * gives back (or of `quotedRefund`, a refund quote the customer accepted), ReleaseSeats, the tickets revoked, a
 * notification. "cancel during an open payment": the payment is cancelled first; money the customer paid before
 * the cancel reached the processor is refunded in full (the booking was never confirmed, so no fare rule keeps any
 * of it) and the customer told.
 */
export async function cancelBooking(
  saga: BookingSaga,
  request: CancelBookingRequest,
  quotedRefund?: Money,
): Promise<BookingState> {
  const { reason } = checkCancel(saga, request);
  const wasConfirmed = saga.booking.status === 'CONFIRMED';
  const lateCharge = await closeOpenPayment(saga);
  const cancelledAt = toTimestamp(now());
  const refund =
    lateCharge === undefined
      ? (quotedRefund ?? cancellationRefund(saga.booking, cancelledAt))
      : netAmountPaid(saga.booking);
  await saga.releaseSeatsAndRefund(refund, 'cancelled');
  await saga.publish({
    status: saga.next('CANCEL_REQUESTED'),
    cancelledAt,
    ...(reason === undefined ? {} : { cancellationReason: reason }),
  });
  if (wasConfirmed || lateCharge !== undefined)
    await saga.steps.notifyCancelled(saga.booking, refund, reason);
  if (lateCharge !== undefined) {
    await saga.steps.reportPaymentIncident(
      'late_payment_refunded',
      lateCharge,
      'paid as the booking was cancelled',
    );
  }
  return saga.booking;
}

/**
 * "(being made) cancel": the RequestCancellation signal waits for the seats to be held, then cancels in turn like
 * any cancel. A booking that never came to be, or has ended since, has nothing left to cancel.
 */
export async function cancelOnceBooked(saga: BookingSaga, request: CancelBookingRequest): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    await condition(() => saga.seatsHeld || saga.notBooked !== undefined);
    if (saga.notBooked !== undefined) return;
    await saga.customerRequests.inTurn(async () => {
      try {
        await cancelBooking(saga, request);
      } catch (error) {
        log.info('requested cancellation not applied', {
          bookingId: saga.input.bookingId,
          reason: toDomainError(error).message,
        });
      }
    });
  });
}

/**
 * "the trip is cancelled": CANCELLED with everything captured refunded, whatever the fare. Waits, like a cancel
 * sent during the create, for the seats to be held (the trip's scan may find the booking row a moment before this
 * workflow hears its reservation back), then cancels in turn with other requests. A booking that has ended, or
 * never came to be, answers so and changes nothing: the trip's cancellation may ask again after a restart.
 */
export async function cancelForTrip(
  saga: BookingSaga,
  request: TripCancellationRequest,
): Promise<TripCancellationAnswer> {
  return CancellationScope.nonCancellable(async () => {
    await condition(() => saga.seatsHeld || saga.notBooked !== undefined);
    if (saga.notBooked !== undefined) {
      return { outcome: 'ALREADY_ENDED', status: notBookedStatus, refunded: zeroMoney(saga.currency) };
    }
    return saga.customerRequests.inTurn(async (): Promise<TripCancellationAnswer> => {
      if (isTerminal(saga.booking.status)) {
        return {
          outcome: 'ALREADY_ENDED',
          status: saga.booking.status,
          refunded: zeroMoney(saga.currency),
        };
      }
      const refunded = await cancelBecauseTripCancelled(saga, request.tripId, request.reason);
      return { outcome: 'CANCELLED', status: saga.booking.status, refunded };
    });
  });
}

/** RefundPayment of everything captured, ReleaseSeats, the `trip-cancelled` notification with the operator's reason. */
export async function cancelBecauseTripCancelled(
  saga: BookingSaga,
  tripId: string,
  reason: string,
): Promise<Money> {
  // An open payment is closed first: whatever it took is then captured, and refunded with the rest.
  await closeOpenPayment(saga);
  const refund = tripCancellationRefund(saga.booking);
  await saga.releaseSeatsAndRefund(refund, 'trip-cancelled');
  await saga.publish({
    status: saga.next('CANCEL_REQUESTED'),
    cancelledAt: toTimestamp(now()),
    cancellationReason: reason,
  });
  log.info('booking cancelled with its trip', { bookingId: saga.input.bookingId, tripId });
  await saga.steps.notifyTripCancelled(saga.booking, refund, reason);
  return refund;
}

/** Outside the table: an operator cancels the workflow itself. Everything is undone and recorded. */
export async function undoEverythingOnWorkflowCancel(saga: BookingSaga): Promise<void> {
  await CancellationScope.nonCancellable(() =>
    saga.customerRequests.inTurn(async () => {
      if (saga.state === undefined || isTerminal(saga.booking.status)) return;
      await closeOpenPayment(saga);
      await saga.releaseSeatsAndRefund(netAmountPaid(saga.booking), 'workflow-cancelled');
      if (!saga.seatsHeld) {
        saga.endWithoutBooking(new DomainError('UNAVAILABLE', 'The booking request was cancelled'));
        return;
      }
      await saga.publish({
        status: saga.next('CANCEL_REQUESTED'),
        cancelledAt: toTimestamp(now()),
        cancellationReason: 'Cancelled by an operator; any payment was refunded in full',
      });
    }),
  );
}
