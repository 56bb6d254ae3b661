// Lifecycle rows of a payment left open at the processor: its outcome by PaymentEvent, and money that arrives late.
import { log, sleep } from '@temporalio/workflow';
import type { SettlePaymentResult } from '../activities/interface';
import type { BookingState, PaymentAction, PaymentIncident } from '../domain/booking';
import { toDomainError } from '../domain/errors';
import { netAmountPaid } from '../domain/fares';
import { toTimestamp } from '../domain/time';
import type { PaymentEvent } from '../domain/payment-events';
import { now, type BookingSaga, type OpenPayment } from './booking-saga';
import { declinedPaymentChanges } from './payment-records';

/** How long the workflow waits between asks when the processor can neither cancel nor finish a payment yet. */
const processingRecheckMs = 60_000;

/** The booking as the customer sees it while a payment is open; the client secret only in the payment's answer. */
export function withPaymentAction(booking: BookingState, action: PaymentAction | undefined): BookingState {
  const { action: _previous, ...payment } = booking.payment;
  return { ...booking, payment: action === undefined ? payment : { ...payment, action } };
}

function withoutClientSecret(action: PaymentAction): PaymentAction {
  const { clientSecret: _secret, ...kept } = action;
  return kept;
}

/** "payment requires action": the open payment is shown (without its secret) and answered (with it). */
export async function showOpenPayment(saga: BookingSaga, open: OpenPayment): Promise<BookingState> {
  await saga.publish({ payment: withPaymentAction(saga.booking, withoutClientSecret(open.action)).payment });
  return answerOpenPayment(saga, open);
}

/** The answer to a payment request while a payment is open: the same challenge, with what the client needs. */
export function answerOpenPayment(saga: BookingSaga, open: OpenPayment): BookingState {
  return withPaymentAction(saga.booking, open.action);
}

/**
 * The processor's word on the booking's payments, applied in turn with customer requests. An event seen before, or
 * about an attempt that is no longer open (an old one, or one already settled: a late `requires_action` after
 * `succeeded`), changes nothing. The event only says that something happened: what the processor says now, asked
 * by CheckPayment, decides, so an event delivered out of order never moves the booking backwards.
 */
export async function applyPaymentEvent(
  saga: BookingSaga,
  event: PaymentEvent,
  confirmPaidSeats: (saga: BookingSaga) => Promise<void>,
): Promise<void> {
  if (saga.state === undefined || saga.seenPaymentEvents.has(event.eventId)) return;
  saga.seenPaymentEvents.add(event.eventId);
  switch (event.kind) {
    case 'refund_failed':
    case 'dispute_created':
      await recordIncident(saga, event);
      return;
    case 'intent_succeeded':
    case 'intent_failed':
    case 'intent_canceled':
    case 'intent_requires_action': {
      const open = saga.openPayment;
      if (open === undefined || open.action.intentId !== event.intentId) {
        log.info('payment event for no open payment of the booking ignored', {
          bookingId: saga.input.bookingId,
          eventId: event.eventId,
          kind: event.kind,
        });
        return;
      }
      const result = await saga.steps.checkPayment(open.attemptNumber, open.amount, open.action.intentId);
      if ((await settle(saga, open, result)) !== 'captured') return;
      try {
        await confirmPaidSeats(saga);
      } catch (error) {
        // confirmPaidSeats gave the money back and ended the booking; nobody waits on an answer here.
        log.warn('paid booking could not keep its seats', {
          bookingId: saga.input.bookingId,
          code: toDomainError(error).code,
        });
      }
      return;
    }
    case 'refund_succeeded':
    case 'ignored':
      return;
  }
}

/**
 * An open payment's outcome in the booking: `captured` (the money is the booking's, its seats are to be confirmed),
 * `declined` (the attempt recorded, PENDING_PAYMENT, another attempt allowed), `closed` (cancelled, nothing
 * taken), or `open` (still undecided, the action as the processor shows it now).
 */
async function settle(
  saga: BookingSaga,
  open: OpenPayment,
  result: SettlePaymentResult,
): Promise<'captured' | 'declined' | 'closed' | 'open'> {
  const attempt = { attemptNumber: open.attemptNumber, attemptedAt: open.attemptedAt };
  switch (result.outcome) {
    case 'OPEN':
      if (result.open.status !== open.action.status) {
        saga.openPayment = { ...open, action: { ...open.action, ...result.open } };
        await saga.publish({ payment: withPaymentAction(saga.booking, result.open).payment });
      }
      return 'open';
    case 'APPROVED':
      saga.openPayment = undefined;
      saga.payments.captured(result);
      saga.recordApproved(attempt, result);
      saga.state = withPaymentAction(saga.booking, undefined);
      return 'captured';
    case 'DECLINED': {
      saga.openPayment = undefined;
      const declined = declinedPaymentChanges(withPaymentAction(saga.booking, undefined), {
        ...attempt,
        amount: open.amount,
        declineReason: result.reason,
      });
      await saga.publish({ status: saga.next('PAYMENT_DECLINED'), ...declined });
      return 'declined';
    }
    case 'CANCELED':
      saga.openPayment = undefined;
      await saga.publish({ payment: withPaymentAction(saga.booking, undefined).payment });
      return 'closed';
  }
}

/**
 * Before a booking with an open payment ends without it (the hold lapses, the customer or the trip cancels), the
 * payment is cancelled at the processor, so no money can arrive for a booking that is gone. True when the
 * processor answers that it had succeeded first: its transaction id is answered, the money is then the booking's,
 * and the caller keeps the booking or gives it all back. A payment that can be neither cancelled nor finished yet
 * is asked again a minute later.
 */
export async function closeOpenPayment(saga: BookingSaga): Promise<string | undefined> {
  for (let round = 1; ; round += 1) {
    const open = saga.openPayment;
    if (open === undefined) return undefined;
    const result = await saga.steps.cancelPayment(
      open.attemptNumber,
      open.amount,
      open.action.intentId,
      round,
    );
    const settled = await settle(saga, open, result);
    if (result.outcome === 'APPROVED') return result.transactionId;
    if (settled !== 'open') return undefined;
    await sleep(processingRecheckMs);
  }
}

/**
 * "money that arrives late", at the hold's end: the processor took the money as the hold lapsed. The same seats are
 * held again on every leg (another booking may have taken them meanwhile) and confirmed; if any is gone, everything
 * is refunded, the seats released, and the customer told: EXPIRED.
 */
export async function keepOrRefundLatePayment(
  saga: BookingSaga,
  transactionId: string,
  confirmPaidSeats: (saga: BookingSaga) => Promise<void>,
): Promise<void> {
  const holdAgainUntil = toTimestamp(new Date(now().getTime() + saga.input.timings.holdDurationMs));
  try {
    await saga.steps.reserveSeats(
      saga.booking.passengers,
      holdAgainUntil,
      saga.booking.version + 1,
      saga.legs,
    );
  } catch (error) {
    const reason = toDomainError(error);
    if (reason.code !== 'SEAT_UNAVAILABLE') throw reason;
    const refund = netAmountPaid(saga.booking);
    await saga.releaseSeatsAndRefund(refund, 'expired');
    await saga.publish({ status: saga.next('HOLD_TIMER_FIRED') });
    await saga.steps.notifyExpired(saga.booking, refund);
    await saga.steps.reportPaymentIncident('late_payment_refunded', transactionId, reason.message);
    return;
  }
  await confirmPaidSeats(saga);
  await saga.steps.reportPaymentIncident(
    'late_payment_confirmed',
    transactionId,
    'paid as the hold lapsed; the same seats were still free',
  );
}

async function recordIncident(
  saga: BookingSaga,
  event: Extract<PaymentEvent, { kind: 'refund_failed' | 'dispute_created' }>,
): Promise<void> {
  const incident: PaymentIncident = {
    kind: event.kind === 'refund_failed' ? 'REFUND_FAILED' : 'DISPUTE_CREATED',
    eventId: event.eventId,
    reference: event.kind === 'refund_failed' ? event.refundId : event.disputeId,
    amount: event.amount,
    reason: event.reason,
    recordedAt: toTimestamp(now()),
  };
  await saga.publish({ paymentIncidents: [...(saga.booking.paymentIncidents ?? []), incident] });
  await saga.steps.reportPaymentIncident(event.kind, incident.reference, incident.reason);
}
