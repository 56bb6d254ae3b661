// The booking saga: one durable workflow per booking, following DESIGN §2's lifecycle table row by row.
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  isCancellation,
  log,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { NotificationTemplate, ProcessPaymentResult, SeatRequest } from '../activities/interface';
import type { BookingState, Money, Passenger, PaymentAttempt } from '../domain/booking';
import { planBookingChange, type BookingChangePlan } from '../domain/changes';
import { bookingStateConflict, DomainError, toDomainError, versionMismatch } from '../domain/errors';
import { cancellationRefund, netAmountPaid, paymentStatusFor, priceBooking } from '../domain/fares';
import { activityKey } from '../domain/ids';
import {
  assertCanCancel,
  assertCanConfirmPayment,
  assertCanUpdate,
  holdExpiryFor,
  shouldComplete,
  shouldExpire,
} from '../domain/lifecycle';
import { addMoney, isZeroMoney, money, zeroMoney } from '../domain/money';
import { timestampMs, toTimestamp } from '../domain/time';
import {
  validateCancelBooking,
  validateConfirmPayment,
  validateCreateBooking,
  validateUpdateBooking,
} from '../domain/validation';
import { proxyBookingActivities, type BookingActivityStubs } from './booking-activities';
import { bookingDetails, notBookedDetails } from './booking-details';
import { Compensations } from './compensations';
import { asUpdateFailure, asValidationFailure, domainFailure } from './failures';
import { assertCreateSeatsOnBus, assertUpdateSeatsOnBus, seatNumberList } from '../domain/seat-layout';
import { SerialExecutor } from './serial-executor';
import {
  bookingSearchAttributes,
  bookingStateQuery,
  cancelBookingUpdate,
  confirmPaymentUpdate,
  createBookingUpdate,
  searchAttributes,
  updateBookingUpdate,
  type BookingWorkflowInput,
  type BookingWorkflowResult,
  type CancelBookingRequest,
  type ConfirmPaymentRequest,
  type UpdateBookingRequest,
} from './shared';

/**
 * The booking's lifetime, as in the lifecycle table: hold the seats (or end with nothing held), wait for
 * payment until the hold expires, then wait for departure. Customers' updates run in between, one at a time.
 */
export async function bookingWorkflow(input: BookingWorkflowInput): Promise<BookingWorkflowResult> {
  const booking = new BookingSaga(input);
  booking.answerCustomerRequests();
  try {
    if (await booking.reserveSeatsOrFail()) {
      await booking.holdUntilPaidOrExpired();
      await booking.completeAfterDeparture();
    }
  } catch (error) {
    if (isCancellation(error)) await booking.undoEverythingOnWorkflowCancel();
    throw error;
  }
  await condition(allHandlersFinished);
  return booking.result();
}

/** Search attribute value of a request that never became a booking (it has no read-model row either). */
const notBookedStatus = 'NOT_BOOKED';

/** What undoing the booking's steps needs to know: how much to give back, and a key revision for the undo. */
interface UndoContext {
  refund: Money;
  revision: string;
}

/** A captured payment the booking may still refund against. */
interface Charge {
  transactionId: string;
  amount: Money;
  refundedMinor: number;
}

const releaseHeldSeats = 'release the booking seats';
const refundCapturedPayments = 'refund captured payments';

function now(): Date {
  return new Date();
}

function millisecondsUntil(timestamp: string): number {
  // A zero timeout would not start a timer; one millisecond fires at once and keeps the loop simple.
  return Math.max(1, timestampMs(timestamp) - Date.now());
}

function seatRequests(
  passengers: readonly Pick<Passenger, 'id' | 'seatNumber' | 'fareClass'>[],
): SeatRequest[] {
  return passengers.map((passenger) => ({
    passengerId: passenger.id,
    seatNumber: passenger.seatNumber,
    fareClass: passenger.fareClass,
  }));
}

class BookingSaga {
  private readonly activities: BookingActivityStubs;
  private state: BookingState | undefined;
  private seatsHeld = false;
  private notBooked: DomainError | undefined;
  /** Undone newest first on cancel, expiry or failure: release the seats, give the money back. */
  private readonly compensations = new Compensations<UndoContext>();
  private readonly customerRequests = new SerialExecutor();
  private readonly charges: Charge[] = [];
  /** The token the booking was paid with, charged again for the price difference of a change. */
  private paymentToken: string | undefined;
  private refundsIssued = 0;

  constructor(private readonly input: BookingWorkflowInput) {
    this.activities = proxyBookingActivities(input.timings, input.taskQueues);
  }

  private get booking(): BookingState {
    if (this.state === undefined) throw new DomainError('INTERNAL', 'The booking has not been opened');
    return this.state;
  }

  result(): BookingWorkflowResult {
    if (this.notBooked !== undefined) return { outcome: 'NOT_BOOKED', error: this.notBooked.toJSON() };
    return { outcome: 'BOOKING_ENDED', booking: this.booking };
  }

  // ---- Row 1 and 2: CreateBooking holds the seats, or ends with nothing held ----

  async reserveSeatsOrFail(): Promise<boolean> {
    try {
      this.state = this.openBooking();
    } catch (error) {
      return this.endWithoutBooking(toDomainError(error));
    }
    this.showTransition();
    this.compensations.add(releaseHeldSeats, (undo) => this.releaseSeats(undefined, undo.revision));
    try {
      // The first reservation writes the booking row and its holds in one transaction: all or nothing.
      await this.activities.seats.ReserveSeats({
        bookingId: this.booking.id,
        tripId: this.booking.tripId,
        seats: seatRequests(this.booking.passengers),
        holdExpiresAt: this.booking.holdExpiresAt,
        idempotencyKey: activityKey(this.booking.id, 'reserve-seats', this.booking.version),
        booking: this.booking,
      });
    } catch (error) {
      if (isCancellation(error)) throw error;
      await this.compensations.runInReverse({
        refund: zeroMoney(this.booking.price.total.currency),
        revision: 'not-booked',
      });
      return this.endWithoutBooking(toDomainError(error));
    }
    this.seatsHeld = true;
    return true;
  }

  /** The booking as it starts: PENDING_PAYMENT, priced, its hold ending no later than departure. */
  private openBooking(): BookingState {
    const { input } = this;
    const command = validateCreateBooking(input, { maxPassengers: input.maxPassengers });
    assertCreateSeatsOnBus(command, input.seatClasses);
    const passengers = command.passengers.map((passenger): Passenger => ({ id: uuid4(), ...passenger }));
    const price = priceBooking(passengers, input.farePrices);
    const openedAt = now();
    const zero = zeroMoney(price.total.currency);
    return {
      id: input.bookingId,
      customerId: input.customerId,
      tripId: input.tripId,
      routeId: input.routeId,
      status: 'PENDING_PAYMENT',
      passengers,
      contactEmail: command.contactEmail,
      ...(command.contactPhone === undefined ? {} : { contactPhone: command.contactPhone }),
      price,
      amountPaid: zero,
      amountRefunded: zero,
      holdExpiresAt: holdExpiryFor(openedAt, input.timings.holdDurationMs, input.departureTime),
      payment: { status: 'NONE' },
      paymentAttempts: [],
      refundRule: input.refundRule,
      departureTime: input.departureTime,
      version: 1,
      createdAt: toTimestamp(openedAt),
      updatedAt: toTimestamp(openedAt),
    };
  }

  private endWithoutBooking(reason: DomainError): false {
    this.notBooked = reason;
    upsertSearchAttributes([{ key: searchAttributes.bookingStatus, value: notBookedStatus }]);
    setCurrentDetails(notBookedDetails(reason.message));
    log.info('booking not created', { bookingId: this.input.bookingId, code: reason.code });
    return false;
  }

  // ---- Row 5: PENDING_PAYMENT → EXPIRED when the hold timer fires ----

  async holdUntilPaidOrExpired(): Promise<void> {
    while (this.booking.status === 'PENDING_PAYMENT') {
      const settled = await condition(
        () => this.booking.status !== 'PENDING_PAYMENT',
        millisecondsUntil(this.booking.holdExpiresAt),
      );
      if (!settled) await this.customerRequests.run(() => this.expireUnpaidHold());
    }
  }

  /** Runs after any payment in flight: a payment that won the race keeps the booking. */
  private async expireUnpaidHold(): Promise<void> {
    if (!shouldExpire(this.booking, now())) return;
    await this.releaseSeatsAndRefund(netAmountPaid(this.booking), 'expired');
    await this.publish({ status: 'EXPIRED' });
    await this.notify('booking-expired', 'expired', { holdExpiresAt: this.booking.holdExpiresAt });
  }

  // ---- Row 9: CONFIRMED → COMPLETED when the departure time passes ----

  async completeAfterDeparture(): Promise<void> {
    while (this.booking.status === 'CONFIRMED') {
      const settled = await condition(
        () => this.booking.status !== 'CONFIRMED',
        millisecondsUntil(this.booking.departureTime),
      );
      if (!settled) await this.customerRequests.run(() => this.completeIfDeparted());
    }
  }

  private async completeIfDeparted(): Promise<void> {
    if (!shouldComplete(this.booking, now())) return;
    await this.publish({ status: 'COMPLETED' });
  }

  // ---- Customer requests: Workflow Updates, validated first so a forbidden one never lands in history ----

  answerCustomerRequests(): void {
    setHandler(bookingStateQuery, () => this.state);
    setHandler(createBookingUpdate, () => this.answerCreateBooking());
    setHandler(confirmPaymentUpdate, (request) => this.oneAtATime(() => this.chargeOrDecline(request)), {
      validator: (request) => this.validate(() => this.checkConfirmPayment(request)),
    });
    setHandler(updateBookingUpdate, (request) => this.oneAtATime(() => this.changeBooking(request)), {
      validator: (request) => this.validate(() => this.planChange(request, false)),
    });
    setHandler(cancelBookingUpdate, (request) => this.oneAtATime(() => this.cancelBooking(request)), {
      validator: (request) => this.validate(() => this.checkCancel(request)),
    });
  }

  /** A repeated create (same request id) gets the same answer as the first one. */
  private async answerCreateBooking(): Promise<BookingState> {
    await condition(() => this.seatsHeld || this.notBooked !== undefined);
    if (this.notBooked !== undefined) throw domainFailure(this.notBooked);
    return this.booking;
  }

  private validate(check: () => unknown): void {
    if (this.state === undefined || !this.seatsHeld) {
      throw asValidationFailure(
        bookingStateConflict('PENDING_PAYMENT', 'update', 'the seats are not held yet'),
      );
    }
    try {
      check();
    } catch (error) {
      throw asValidationFailure(error);
    }
  }

  /**
   * Accepted requests run one at a time, in arrival order, and once started they finish even if the workflow
   * is cancelled: a charge must be recorded to be refundable. Each re-checks the state it finds.
   */
  private oneAtATime(work: () => Promise<BookingState>): Promise<BookingState> {
    return this.customerRequests
      .run(() => CancellationScope.nonCancellable(work))
      .catch((error: unknown) => {
        throw asUpdateFailure(error);
      });
  }

  // ---- Rows 3 and 4: ConfirmPayment approved → CONFIRMED; declined → PENDING_PAYMENT, attempt recorded ----

  private checkConfirmPayment(request: ConfirmPaymentRequest): string {
    const { paymentToken } = validateConfirmPayment(request ?? {});
    assertCanConfirmPayment(this.booking, now());
    return paymentToken;
  }

  private async chargeOrDecline(request: ConfirmPaymentRequest): Promise<BookingState> {
    const paymentToken = this.checkConfirmPayment(request);
    await this.chargeOrRecordDecline(this.booking.price.total, paymentToken);
    try {
      await this.activities.seats.ConfirmSeats({
        bookingId: this.booking.id,
        tripId: this.booking.tripId,
        idempotencyKey: activityKey(this.booking.id, 'reserve-seats', `confirm-${this.booking.version + 1}`),
      });
    } catch (error) {
      // The hold lapsed and the seats went to someone else: nothing may stay charged without a seat.
      const reason = toDomainError(error);
      await this.releaseSeatsAndRefund(netAmountPaid(this.booking), 'seats-lost');
      await this.publish({ status: 'EXPIRED' });
      await this.notify('booking-expired', 'expired', { holdExpiresAt: this.booking.holdExpiresAt });
      throw reason;
    }
    await this.publish({ status: 'CONFIRMED', confirmedAt: toTimestamp(now()) });
    await this.notify('booking-confirmed', 'confirmed', {
      seatNumbers: seatNumberList(this.booking.passengers),
      amountPaidMinor: this.booking.amountPaid.amountMinor,
      currency: this.booking.amountPaid.currency,
    });
    return this.booking;
  }

  /**
   * Charges through the gateway with a key unique to this attempt (a retried activity reuses it, so it never
   * charges twice). A decline is recorded as an attempt and answered with PAYMENT_DECLINED.
   */
  private async chargeOrRecordDecline(amount: Money, paymentToken: string): Promise<void> {
    if (isZeroMoney(amount)) return;
    if (!this.compensations.has(refundCapturedPayments)) {
      this.compensations.add(refundCapturedPayments, (undo) => this.refund(undo.refund));
    }
    const attemptNumber = this.booking.paymentAttempts.length + 1;
    const attemptedAt = toTimestamp(now());
    let charge: ProcessPaymentResult;
    try {
      charge = await this.activities.payments.ProcessPayment({
        bookingId: this.booking.id,
        idempotencyKey: activityKey(this.booking.id, 'process-payment', attemptNumber),
        amount,
        paymentToken,
      });
    } catch (error) {
      const reason = toDomainError(error);
      if (reason.code === 'PAYMENT_DECLINED')
        await this.recordDecline(attemptNumber, attemptedAt, amount, reason);
      throw reason;
    }
    this.paymentToken = paymentToken;
    this.charges.push({ transactionId: charge.transactionId, amount: charge.amount, refundedMinor: 0 });
    const amountPaid = addMoney(this.booking.amountPaid, charge.amount);
    this.state = {
      ...this.booking,
      amountPaid,
      payment: {
        status: paymentStatusFor({
          amountPaid,
          amountRefunded: this.booking.amountRefunded,
          lastAttemptDeclined: false,
        }),
        method: charge.methodMasked,
        lastAttemptAt: attemptedAt,
      },
      paymentAttempts: [
        ...this.booking.paymentAttempts,
        {
          attemptNumber,
          attemptedAt,
          outcome: 'APPROVED',
          amount: charge.amount,
          method: charge.methodMasked,
        },
      ],
    };
  }

  private async recordDecline(
    attemptNumber: number,
    attemptedAt: string,
    amount: Money,
    reason: DomainError,
  ): Promise<void> {
    const declineReason =
      typeof reason.details.declineReason === 'string' ? reason.details.declineReason : reason.message;
    const attempt: PaymentAttempt = {
      attemptNumber,
      attemptedAt,
      outcome: 'DECLINED',
      amount,
      declineReason,
    };
    await this.publish({
      payment: {
        ...this.booking.payment,
        status: paymentStatusFor({
          amountPaid: this.booking.amountPaid,
          amountRefunded: this.booking.amountRefunded,
          lastAttemptDeclined: true,
        }),
        lastAttemptAt: attemptedAt,
        declineReason,
      },
      paymentAttempts: [...this.booking.paymentAttempts, attempt],
    });
  }

  // ---- Rows 6 and 7: CancelBooking → CANCELLED, refunding what the fare rule grants ----

  private checkCancel(request: CancelBookingRequest): { reason?: string } {
    const command = validateCancelBooking(request ?? {});
    assertCanCancel(this.booking, now());
    return command;
  }

  private async cancelBooking(request: CancelBookingRequest): Promise<BookingState> {
    const { reason } = this.checkCancel(request);
    const wasConfirmed = this.booking.status === 'CONFIRMED';
    const cancelledAt = toTimestamp(now());
    const refund = cancellationRefund(this.booking, cancelledAt);
    await this.releaseSeatsAndRefund(refund, 'cancelled');
    await this.publish({
      status: 'CANCELLED',
      cancelledAt,
      ...(reason === undefined ? {} : { cancellationReason: reason }),
    });
    if (wasConfirmed) {
      await this.notify('booking-cancelled', 'cancelled', {
        refundAmountMinor: refund.amountMinor,
        currency: refund.currency,
        ...(reason === undefined ? {} : { reason }),
      });
    }
    return this.booking;
  }

  /** Runs the booking's compensations newest first: the refund (of `refund`), then the seat release. */
  private async releaseSeatsAndRefund(refund: Money, revision: string): Promise<void> {
    await this.compensations.runInReverse({ refund, revision });
  }

  // ---- Row 8: UpdateBooking (change seat, add passenger, edit details) keeps the status ----

  /**
   * Everything a change must satisfy before it starts. The validator passes `mintIds: false`: validators do
   * not run on replay, so they must not draw from the workflow's random number generator.
   */
  private planChange(request: UpdateBookingRequest, mintIds: boolean): BookingChangePlan {
    const booking = this.booking;
    assertCanUpdate(booking, now(), this.input.timings.changeCutoffMs);
    const expectedVersion = request?.expectedVersion;
    if (expectedVersion !== undefined && expectedVersion !== booking.version) {
      throw versionMismatch(expectedVersion, booking.version);
    }
    const command = validateUpdateBooking(request?.changes ?? {}, booking, {
      maxPassengers: this.input.maxPassengers,
    });
    assertUpdateSeatsOnBus(command, this.input.seatClasses);
    const newPassengerIds = command.addPassengers.map((_, index) =>
      mintIds ? uuid4() : `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
    );
    return planBookingChange(booking, command, newPassengerIds, this.input.farePrices);
  }

  /** New seats first, then the money, and only then are the old seats let go: a failure changes nothing. */
  private async changeBooking(request: UpdateBookingRequest): Promise<BookingState> {
    const plan = this.planChange(request, true);
    const nextVersion = this.booking.version + 1;
    const undoChange = new Compensations();
    try {
      await this.holdNewSeats(plan, nextVersion, undoChange);
      await this.settlePriceDifference(plan);
    } catch (error) {
      await undoChange.runInReverse();
      throw error;
    }
    if (plan.seatsToRelease.length > 0) {
      await this.releaseSeats([...plan.seatsToRelease], String(nextVersion));
    }
    await this.publish({ passengers: plan.passengers, price: plan.price });
    await this.notify('booking-changed', `changed-${this.booking.version}`, {
      seatNumbers: seatNumberList(this.booking.passengers),
      totalMinor: this.booking.price.total.amountMinor,
      currency: this.booking.price.total.currency,
      ...(plan.settlement.kind === 'CHARGE' ? { chargedMinor: plan.settlement.amount.amountMinor } : {}),
      ...(plan.settlement.kind === 'REFUND' ? { refundedMinor: plan.settlement.amount.amountMinor } : {}),
    });
    return this.booking;
  }

  private async holdNewSeats(
    plan: BookingChangePlan,
    nextVersion: number,
    undoChange: Compensations,
  ): Promise<void> {
    if (plan.seatsToReserve.length === 0) return;
    const newSeatNumbers = plan.seatsToReserve.map((seat) => seat.seatNumber);
    const newSeats = plan.passengers.filter((passenger) => newSeatNumbers.includes(passenger.seatNumber));
    const confirmed = this.booking.status === 'CONFIRMED';
    undoChange.add('release the new seats', () => this.releaseSeats(newSeatNumbers, `undo-${nextVersion}`));
    await this.activities.seats.ReserveSeats({
      bookingId: this.booking.id,
      tripId: this.booking.tripId,
      seats: seatRequests(newSeats),
      holdExpiresAt: confirmed
        ? holdExpiryFor(now(), this.input.timings.holdDurationMs, this.booking.departureTime)
        : this.booking.holdExpiresAt,
      idempotencyKey: activityKey(this.booking.id, 'reserve-seats', nextVersion),
    });
    if (confirmed) {
      await this.activities.seats.ConfirmSeats({
        bookingId: this.booking.id,
        tripId: this.booking.tripId,
        idempotencyKey: activityKey(this.booking.id, 'reserve-seats', `confirm-${nextVersion}`),
      });
    }
  }

  /** Pending: the amount due simply changes. Confirmed: charge or refund the difference. */
  private async settlePriceDifference(plan: BookingChangePlan): Promise<void> {
    const { settlement } = plan;
    if (settlement.kind === 'CHARGE') {
      if (this.paymentToken === undefined) {
        throw bookingStateConflict(
          this.booking.status,
          'update',
          'no payment method is on file for the difference',
        );
      }
      await this.chargeOrRecordDecline(settlement.amount, this.paymentToken);
    } else if (settlement.kind === 'REFUND') {
      await this.refund(settlement.amount);
    }
  }

  // ---- Steps shared by the rows ----

  private async releaseSeats(seatNumbers: string[] | undefined, revision: string): Promise<void> {
    await this.activities.seats.ReleaseSeats({
      bookingId: this.booking.id,
      tripId: this.booking.tripId,
      ...(seatNumbers === undefined ? {} : { seatNumbers }),
      idempotencyKey: activityKey(this.booking.id, 'release-seats', revision),
    });
  }

  /** Refunds `amount` against the captured charges, newest first, each refund with its own stable key. */
  private async refund(amount: Money): Promise<void> {
    let remainingMinor = amount.amountMinor;
    for (const charge of [...this.charges].reverse()) {
      const portionMinor = Math.min(remainingMinor, charge.amount.amountMinor - charge.refundedMinor);
      if (portionMinor <= 0) continue;
      this.refundsIssued += 1;
      const refunded = await this.activities.payments.RefundPayment({
        bookingId: this.booking.id,
        idempotencyKey: activityKey(this.booking.id, 'refund-payment', this.refundsIssued),
        transactionId: charge.transactionId,
        amount: money(portionMinor, charge.amount.currency),
      });
      charge.refundedMinor += refunded.amount.amountMinor;
      remainingMinor -= refunded.amount.amountMinor;
      const amountRefunded = addMoney(this.booking.amountRefunded, refunded.amount);
      this.state = {
        ...this.booking,
        amountRefunded,
        payment: {
          ...this.booking.payment,
          status: paymentStatusFor({
            amountPaid: this.booking.amountPaid,
            amountRefunded,
            lastAttemptDeclined: false,
          }),
        },
      };
    }
  }

  /** A change the customer can see: a new version, written to the read model and shown to operators. */
  private async publish(changes: Partial<BookingState>): Promise<void> {
    this.state = {
      ...this.booking,
      ...changes,
      version: this.booking.version + 1,
      updatedAt: toTimestamp(now()),
    };
    this.showTransition();
    await this.activities.readModel.RecordBooking(this.booking);
  }

  private showTransition(): void {
    upsertSearchAttributes(bookingSearchAttributes(this.booking));
    setCurrentDetails(bookingDetails(this.booking));
  }

  /**
   * Email to the contact address, SMS when a phone was given. A notification that cannot be delivered is
   * logged, never allowed to undo or block the booking change it reports.
   */
  private async notify(
    template: NotificationTemplate,
    revision: string,
    parameters: Record<string, string | number>,
  ): Promise<void> {
    const booking = this.booking;
    const withTimeZone = {
      ...parameters,
      departureTime: booking.departureTime,
      timeZone: this.input.originTimeZone,
    };
    const deliveries = [
      this.activities.notifications.SendEmailNotification({
        bookingId: booking.id,
        idempotencyKey: activityKey(booking.id, 'send-email', revision),
        template,
        to: booking.contactEmail,
        parameters: withTimeZone,
      }),
    ];
    if (booking.contactPhone !== undefined) {
      deliveries.push(
        this.activities.notifications.SendSMSNotification({
          bookingId: booking.id,
          idempotencyKey: activityKey(booking.id, 'send-sms', revision),
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
          bookingId: booking.id,
          template,
          error: String(outcome.reason),
        });
      }
    }
  }

  // ---- Operator cancels the workflow itself: undo everything, record it ----

  async undoEverythingOnWorkflowCancel(): Promise<void> {
    await CancellationScope.nonCancellable(() =>
      this.customerRequests.run(async () => {
        if (this.state === undefined || ['CANCELLED', 'EXPIRED', 'COMPLETED'].includes(this.booking.status)) {
          return;
        }
        await this.releaseSeatsAndRefund(netAmountPaid(this.booking), 'workflow-cancelled');
        if (!this.seatsHeld) {
          this.endWithoutBooking(new DomainError('UNAVAILABLE', 'The booking request was cancelled'));
          return;
        }
        await this.publish({
          status: 'CANCELLED',
          cancelledAt: toTimestamp(now()),
          cancellationReason: 'Cancelled by an operator; any payment was refunded in full',
        });
      }),
    );
  }
}
