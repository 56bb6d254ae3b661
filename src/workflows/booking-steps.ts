// The saga's activity calls for one booking, each with its deterministic idempotency key.
import { log } from '@temporalio/workflow';
import type {
  NotificationTemplate,
  PaymentIncidentKind,
  ProcessPaymentAnswer,
  ProcessPaymentResult,
  SettlePaymentResult,
  RefundPaymentResult,
  SeatRequest,
} from '../activities/interface';
import type { BookingState, Money, Passenger, Timestamp } from '../domain/booking';
import type { ChangeSettlement, RefundPortion } from '../domain/fares';
import { activityKey } from '../domain/ids';
import type { BookingActivityStubs } from './booking-activities';
import { seatNumberList } from '../domain/seat-layout';
import type { LegRange } from '../domain/segments';
import type { BookingWorkflowInput } from './shared';

function seatRequests(
  passengers: readonly Pick<Passenger, 'id' | 'seatNumber' | 'fareClass'>[],
): SeatRequest[] {
  // An infant on a lap holds no seat.
  return passengers
    .filter((passenger) => passenger.seatNumber !== '')
    .map((passenger) => ({
      passengerId: passenger.id,
      seatNumber: passenger.seatNumber,
      fareClass: passenger.fareClass,
    }));
}

/**
 * Every step schedules its activities before it first awaits anything, so a step issues its commands in the
 * order the recorded histories show, wherever the saga calls it from.
 */
export class BookingSteps {
  private readonly bookingId: string;
  private readonly tripId: string;

  constructor(
    private readonly activities: BookingActivityStubs,
    private readonly input: Pick<BookingWorkflowInput, 'bookingId' | 'tripId' | 'originTimeZone'>,
  ) {
    this.bookingId = input.bookingId;
    this.tripId = input.tripId;
  }

  /**
   * `firstSnapshot` goes with the creating reservation: the booking row and its holds are written together, by a
   * local activity (the create waits for it). A change's reservations go to the seats queue.
   */
  reserveSeats(
    passengers: readonly Passenger[],
    holdExpiresAt: Timestamp,
    version: number,
    legs: LegRange | undefined,
    firstSnapshot?: BookingState,
  ): Promise<void> {
    const input = {
      bookingId: this.bookingId,
      tripId: this.tripId,
      seats: seatRequests(passengers),
      holdExpiresAt,
      ...(legs === undefined ? {} : { legs }),
      idempotencyKey: activityKey(this.bookingId, 'reserve-seats', version),
      ...(firstSnapshot === undefined ? {} : { booking: firstSnapshot }),
    };
    if (firstSnapshot !== undefined) {
      return this.activities.localSeats.ReserveSeats(input);
    }
    return this.activities.seats.ReserveSeats(input);
  }

  confirmSeats(version: number): Promise<void> {
    const input = {
      bookingId: this.bookingId,
      tripId: this.tripId,
      idempotencyKey: activityKey(this.bookingId, 'confirm-seats', version),
    };
    return this.activities.localSeats.ConfirmSeats(input);
  }

  /**
   * The given seats, or every seat the booking holds when `seatNumbers` is absent; with `keepLegs`, only their
   * legs outside those (a segment change letting its old legs go).
   */
  releaseSeats(revision: string, seatNumbers?: string[], keepLegs?: LegRange): Promise<void> {
    return this.activities.seats.ReleaseSeats({
      bookingId: this.bookingId,
      tripId: this.tripId,
      ...(seatNumbers === undefined ? {} : { seatNumbers }),
      ...(keepLegs === undefined ? {} : { keepLegs }),
      idempotencyKey: activityKey(this.bookingId, 'release-seats', revision),
    });
  }

  /** A retried charge reuses its attempt's key, so the gateway never charges twice. */
  processPayment(attemptNumber: number, amount: Money, paymentToken: string): Promise<ProcessPaymentResult> {
    return this.activities.payments.ProcessPayment({
      bookingId: this.bookingId,
      idempotencyKey: activityKey(this.bookingId, 'process-payment', attemptNumber),
      amount,
      paymentToken,
    });
  }

  /** The charge of an attempt whose payment may stay open: the customer's challenge, the processor deciding. */
  startPayment(attemptNumber: number, amount: Money, paymentToken: string): Promise<ProcessPaymentAnswer> {
    return this.activities.payments.ProcessPayment({
      bookingId: this.bookingId,
      idempotencyKey: activityKey(this.bookingId, 'process-payment', attemptNumber),
      amount,
      paymentToken,
      allowAction: true as const,
    });
  }

  /** Where an attempt's open payment stands; its outcome goes to the ledger under the attempt's key. */
  checkPayment(attemptNumber: number, amount: Money, intentId: string): Promise<SettlePaymentResult> {
    return this.activities.payments.CheckPayment({
      bookingId: this.bookingId,
      idempotencyKey: activityKey(this.bookingId, 'process-payment', attemptNumber),
      intentId,
      amount,
    });
  }

  /** Cancels an attempt's open payment; `round` tells apart the asks of one attempt that could not cancel yet. */
  cancelPayment(
    attemptNumber: number,
    amount: Money,
    intentId: string,
    round: number,
  ): Promise<SettlePaymentResult> {
    return this.activities.payments.CancelPayment({
      bookingId: this.bookingId,
      idempotencyKey: activityKey(this.bookingId, 'process-payment', attemptNumber),
      cancelKey: activityKey(this.bookingId, 'cancel-payment', `attempt-${attemptNumber}-${round}`),
      intentId,
      amount,
    });
  }

  reportPaymentIncident(kind: PaymentIncidentKind, reference: string, reason: string): Promise<void> {
    return this.activities.payments.ReportPaymentIncident({
      bookingId: this.bookingId,
      kind,
      reference,
      reason,
    });
  }

  refundPayment(refundNumber: number, portion: RefundPortion): Promise<RefundPaymentResult> {
    return this.activities.payments.RefundPayment({
      bookingId: this.bookingId,
      idempotencyKey: activityKey(this.bookingId, 'refund-payment', refundNumber),
      transactionId: portion.transactionId,
      amount: portion.amount,
    });
  }

  recordBooking(booking: BookingState): Promise<void> {
    return this.activities.localReadModel.RecordBooking(booking);
  }

  /** Idempotent by construction: ticket ids derive from the booking, the passenger and the version. */
  issueTickets(booking: BookingState): Promise<void> {
    return this.activities.localTickets.IssueTickets(booking);
  }

  notifyConfirmed(booking: BookingState): Promise<void> {
    return this.notify(booking, 'booking-confirmed', 'confirmed', {
      seatNumbers: seatNumberList(booking.passengers),
      amountPaidMinor: booking.amountPaid.amountMinor,
      currency: booking.amountPaid.currency,
    });
  }

  notifyExpired(booking: BookingState, refund?: Money): Promise<void> {
    return this.notify(booking, 'booking-expired', 'expired', {
      holdExpiresAt: booking.holdExpiresAt,
      ...(refund === undefined ? {} : { refundAmountMinor: refund.amountMinor, currency: refund.currency }),
    });
  }

  notifyCancelled(booking: BookingState, refund: Money, reason: string | undefined): Promise<void> {
    return this.notify(booking, 'booking-cancelled', 'cancelled', {
      refundAmountMinor: refund.amountMinor,
      currency: refund.currency,
      ...(reason === undefined ? {} : { reason }),
    });
  }

  /** Sent once per partial cancellation: its revision is the version the cancellation produced. */
  notifyPassengersCancelled(
    booking: BookingState,
    passengerCount: number,
    refund: Money,
    reason: string | undefined,
  ): Promise<void> {
    return this.notify(booking, 'passengers-cancelled', `passengers-cancelled-${booking.version}`, {
      passengerCount,
      seatNumbers: seatNumberList(booking.passengers.filter((passenger) => passenger.seatNumber !== '')),
      refundAmountMinor: refund.amountMinor,
      currency: refund.currency,
      ...(reason === undefined ? {} : { reason }),
    });
  }

  /** Sent once, when boarding closes with passengers not aboard. */
  notifyNoShow(booking: BookingState, noShowSeatNumbers: string, refund: Money): Promise<void> {
    return this.notify(booking, 'booking-no-show', 'no-show', {
      seatNumbers: noShowSeatNumbers,
      refundAmountMinor: refund.amountMinor,
      currency: refund.currency,
    });
  }

  /** The operator cancelled the whole trip: the passenger hears why and that everything paid comes back. */
  notifyTripCancelled(booking: BookingState, refund: Money, reason: string): Promise<void> {
    return this.notify(booking, 'trip-cancelled', 'trip-cancelled', {
      refundAmountMinor: refund.amountMinor,
      currency: refund.currency,
      reason,
    });
  }

  /** Sent once per change: its revision is the version the change produced. */
  notifyChanged(booking: BookingState, settlement: ChangeSettlement): Promise<void> {
    return this.notify(booking, 'booking-changed', `changed-${booking.version}`, {
      seatNumbers: seatNumberList(booking.passengers),
      totalMinor: booking.price.total.amountMinor,
      currency: booking.price.total.currency,
      ...(settlement.kind === 'CHARGE' ? { chargedMinor: settlement.amount.amountMinor } : {}),
      ...(settlement.kind === 'REFUND' ? { refundedMinor: settlement.amount.amountMinor } : {}),
    });
  }

  /**
   * Email to the contact address, SMS when a phone was given. A notification that cannot be delivered is
   * logged, never allowed to undo or block the booking change it reports.
   */
  private async notify(
    booking: BookingState,
    template: NotificationTemplate,
    revision: string,
    parameters: Record<string, string | number>,
  ): Promise<void> {
    const withTimeZone = {
      ...parameters,
      departureTime: booking.departureTime,
      timeZone: this.input.originTimeZone,
    };
    const deliveries = [
      this.activities.notifications.SendEmailNotification({
        bookingId: this.bookingId,
        idempotencyKey: activityKey(this.bookingId, 'send-email', revision),
        template,
        to: booking.contactEmail,
        parameters: withTimeZone,
      }),
    ];
    if (booking.contactPhone !== undefined) {
      deliveries.push(
        this.activities.notifications.SendSMSNotification({
          bookingId: this.bookingId,
          idempotencyKey: activityKey(this.bookingId, 'send-sms', revision),
          template,
          to: booking.contactPhone,
          parameters: withTimeZone,
        }),
      );
    }
    const outcomes = await Promise.allSettled(deliveries);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        log.warn('notification not delivered', {
          bookingId: this.bookingId,
          template,
          error: String(outcome.reason),
        });
      }
    }
  }
}
