// One booking's saga state and the steps every lifecycle row shares: publish a change, wait, undo, charge, refund.
import { log, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { isOpenPayment, type ProcessPaymentResult } from '../activities/interface';
import type {
  BookingState,
  BookingStatus,
  FarePrices,
  Money,
  PaymentAction,
  Timestamp,
} from '../domain/booking';
import type { PriceTerms } from '../domain/booking-price';
import { DomainError, toDomainError } from '../domain/errors';
import { isEventAllowed, nextStatus, type LifecycleEvent } from '../domain/lifecycle';
import { isZeroMoney } from '../domain/money';
import { legRangeOf, type LegRange } from '../domain/segments';
import { timestampMs, toTimestamp } from '../domain/time';
import { proxyBookingActivities } from './booking-activities';
import { bookingDetails, notBookedDetails } from './booking-details';
import { BookingSteps } from './booking-steps';
import { Compensations } from './compensations';
import { CustomerRequests } from './customer-requests';
import { waitForDeadline } from './deadlines';
import {
  CapturedPayments,
  declinedPaymentChanges,
  declineReasonOf,
  withApprovedPayment,
  withRefund,
} from './payment-records';
import {
  bookingSearchAttributes,
  searchAttributes,
  type BookingWorkflowInput,
  type BookingWorkflowResult,
} from './shared';
import { keepTicketsInLine } from './tickets';

/** Search attribute value of a request that never became a booking (it has no read-model row either). */
export const notBookedStatus = 'NOT_BOOKED';

/** What undoing the booking's steps needs to know: how much to give back, and a key revision for the undo. */
export interface UndoContext {
  refund: Money;
  revision: string;
}

const refundCapturedPayments = 'refund captured payments';

/** An attempt whose payment is open at the processor: the customer's challenge, or the processor deciding. */
export interface OpenPayment {
  attemptNumber: number;
  attemptedAt: Timestamp;
  amount: Money;
  /** With the client secret: a repeated payment request is answered the same challenge. */
  action: PaymentAction;
}

export function now(): Date {
  return new Date();
}

export class BookingSaga {
  readonly steps: BookingSteps;
  state: BookingState | undefined;
  seatsHeld = false;
  notBooked: DomainError | undefined;
  /** Set by a segment change: the prices of the booking's new segment. */
  segmentFarePrices: FarePrices | undefined;
  /** Undone newest first on cancel, expiry or failure: release the seats, give the money back. */
  readonly compensations = new Compensations<UndoContext>();
  readonly customerRequests = new CustomerRequests(() => this.state !== undefined && this.seatsHeld);
  readonly payments: CapturedPayments;
  /** Only set on the `payment-conversation` branch: older bookings never have an open payment. */
  openPayment: OpenPayment | undefined;
  /** The processor's events applied or ignored already: a redelivery changes nothing. */
  readonly seenPaymentEvents = new Set<string>();

  constructor(readonly input: BookingWorkflowInput) {
    this.steps = new BookingSteps(proxyBookingActivities(input.timings, input.taskQueues), input);
    this.payments = new CapturedPayments(this.steps);
  }

  get booking(): BookingState {
    if (this.state === undefined) throw new DomainError('INTERNAL', 'The booking has not been opened');
    return this.state;
  }

  result(): BookingWorkflowResult {
    if (this.notBooked !== undefined) return { outcome: 'NOT_BOOKED', error: this.notBooked.toJSON() };
    return { outcome: 'BOOKING_ENDED', booking: this.booking };
  }

  get currency(): string {
    return this.booking.price.total.currency;
  }

  /**
   * When the booking completes: the arrival at its alighting stop (the segment's local time read as an instant),
   * the departure for a booking made before segments.
   */
  get arrivalTime(): Timestamp {
    const segment = this.booking.segment;
    if (segment === undefined) return this.input.arrivalTime ?? this.booking.departureTime;
    return new Date(timestampMs(segment.alightingStop.localTime)).toISOString();
  }

  /** The legs the booking holds; undefined for a booking made before segments, which holds the whole route. */
  get legs(): LegRange | undefined {
    const segment = this.state?.segment;
    return segment === undefined ? undefined : legRangeOf(segment);
  }

  /** The prices of the booking's segment: the start's, until a segment change brings others. */
  get farePrices(): FarePrices {
    return this.segmentFarePrices ?? this.input.farePrices;
  }

  /** How the booking prices its passengers besides the fare prices; empty on bookings made before types. */
  get priceTerms(): Omit<PriceTerms, 'discount'> {
    const { passengerTypes, legCount } = this.input;
    return {
      ...(passengerTypes === undefined ? {} : { passengerTypes }),
      ...(legCount === undefined ? {} : { legCount }),
    };
  }

  endWithoutBooking(reason: DomainError): false {
    this.notBooked = reason;
    upsertSearchAttributes([{ key: searchAttributes.bookingStatus, value: notBookedStatus }]);
    setCurrentDetails(notBookedDetails(reason.message));
    log.info('booking not created', { bookingId: this.input.bookingId, code: reason.code });
    return false;
  }

  /** The status the lifecycle table gives the booking after `event`. */
  next(event: LifecycleEvent): BookingStatus {
    return nextStatus(this.booking.status, event);
  }

  /**
   * Waits while the table still allows a timed `event`; when its deadline passes first, `atDeadline` runs in
   * turn with customer requests, so a request in flight finishes before the timer's transition looks.
   */
  async waitForTimer(
    event: LifecycleEvent,
    deadline: () => Timestamp,
    atDeadline: () => Promise<void>,
  ): Promise<void> {
    await waitForDeadline(
      () => isEventAllowed(this.booking.status, event),
      deadline,
      () => this.customerRequests.inTurn(atDeadline),
    );
  }

  /** Runs the booking's compensations newest first: the refund (of `refund`), then the seat release. */
  async releaseSeatsAndRefund(refund: Money, revision: string): Promise<void> {
    await this.compensations.runInReverse({ refund, revision });
  }

  /**
   * Charges through the gateway with a key unique to this attempt (a retried activity reuses it, so it never
   * charges twice). A decline is recorded as an attempt and answered with PAYMENT_DECLINED. With `allowAction` the
   * processor may leave the payment open: it is kept as `openPayment` and its action answered.
   */
  async chargeOrRecordDecline(
    amount: Money,
    paymentToken: string,
    options: { allowAction?: boolean } = {},
  ): Promise<OpenPayment | undefined> {
    if (isZeroMoney(amount)) return undefined;
    if (!this.compensations.has(refundCapturedPayments)) {
      this.compensations.add(refundCapturedPayments, (undo) => this.refund(undo.refund));
    }
    const attemptNumber = this.booking.paymentAttempts.length + 1;
    const attemptedAt = toTimestamp(now());
    let charge;
    try {
      charge =
        options.allowAction === true
          ? await this.payments.start(
              (...args) => this.steps.startPayment(...args),
              attemptNumber,
              amount,
              paymentToken,
            )
          : await this.payments.charge(attemptNumber, amount, paymentToken);
    } catch (error) {
      const reason = toDomainError(error);
      if (reason.code === 'PAYMENT_DECLINED') {
        const declineReason = declineReasonOf(reason);
        await this.publish(
          declinedPaymentChanges(this.booking, { attemptNumber, attemptedAt, amount, declineReason }),
        );
      }
      throw reason;
    }
    if (isOpenPayment(charge)) {
      this.openPayment = { attemptNumber, attemptedAt, amount, action: charge.open };
      return this.openPayment;
    }
    this.recordApproved({ attemptNumber, attemptedAt }, charge);
    return undefined;
  }

  /** A captured charge in the booking: the amount paid, the attempt, the method. */
  recordApproved(
    attempt: { attemptNumber: number; attemptedAt: Timestamp },
    charge: ProcessPaymentResult,
  ): void {
    const { amount: captured, methodMasked: method } = charge;
    this.state = withApprovedPayment(this.booking, { ...attempt, amount: captured, method });
  }

  async refund(amount: Money): Promise<void> {
    await this.payments.refund(amount, (refunded) => {
      this.state = withRefund(this.booking, refunded);
    });
  }

  /** A change the customer can see: a new version, written to the read model and shown to operators. */
  async publish(changes: Partial<BookingState>): Promise<void> {
    this.state = {
      ...this.booking,
      ...changes,
      version: this.booking.version + 1,
      updatedAt: toTimestamp(now()),
    };
    this.showTransition();
    await this.steps.recordBooking(this.booking);
    await keepTicketsInLine(this.steps, this.booking);
  }

  showTransition(): void {
    upsertSearchAttributes(bookingSearchAttributes(this.booking));
    setCurrentDetails(bookingDetails(this.booking));
  }
}
