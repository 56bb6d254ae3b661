// The booking saga: one durable workflow per booking, moved row by row through the domain's lifecycle table.
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { BookingState, BookingStatus, FarePrices, Money, Timestamp } from '../domain/booking';
import {
  assertCanBoard,
  noShowDeadline,
  passengersNotBoarded,
  withBoarding,
  type BoardingRequest,
} from '../domain/boarding';
import { planBookingChange, type BookingChangePlan } from '../domain/changes';
import { bookingStateConflict, DomainError, toDomainError, versionMismatch } from '../domain/errors';
import { cancellationRefund, netAmountPaid, noShowRefund } from '../domain/fares';
import {
  assertCanCancel,
  assertCanConfirmPayment,
  assertCanUpdate,
  holdExpiryFor,
  isEventAllowed,
  isTerminal,
  nextStatus,
  shouldComplete,
  shouldExpire,
  type LifecycleEvent,
} from '../domain/lifecycle';
import { isZeroMoney, zeroMoney } from '../domain/money';
import { assertUpdateSeatsOnBus, seatNumberList } from '../domain/seat-layout';
import { legRangeOf, type LegRange, type SegmentChangeTerms } from '../domain/segments';
import { timestampMs, toTimestamp } from '../domain/time';
import {
  isTripCancelledRefusal,
  tripCancellationReasonOf,
  tripCancellationRefund,
} from '../domain/trip-cancellation';
import { validateUpdateBooking } from '../domain/validation';
import { proxyBookingActivities } from './booking-activities';
import { bookingDetails, notBookedDetails } from './booking-details';
import { openBooking } from './booking-opening';
import { BookingSteps } from './booking-steps';
import { keepTicketsInLine } from './tickets';
import { Compensations } from './compensations';
import { CustomerRequests } from './customer-requests';
import { waitForDeadline } from './deadlines';
import { asValidationFailure, domainFailure } from './failures';
import {
  CapturedPayments,
  declinedPaymentChanges,
  declineReasonOf,
  withApprovedPayment,
  withRefund,
} from './payment-records';
import {
  assertSameCreateRequest,
  bookingSearchAttributes,
  bookingStateQuery,
  cancelBookingUpdate,
  cancelForTripUpdate,
  confirmPaymentUpdate,
  createBookingUpdate,
  createRequestMemoKey,
  recordBoardingUpdate,
  requestCancellationSignal,
  searchAttributes,
  updateBookingUpdate,
  type BookingWorkflowInput,
  type BookingWorkflowResult,
  type CancelBookingRequest,
  type ConfirmPaymentRequest,
  type CreateBookingRequest,
  type RecordBoardingRequest,
  type TripCancellationAnswer,
  type TripCancellationRequest,
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

const releaseHeldSeats = 'release the booking seats';
/**
 * Patch marker: a payment whose seats the database refuses because the trip was cancelled cancels the booking
 * (full refund, the trip's notice) instead of expiring it. Histories recorded before it expire as they did.
 */
const tripCancelledPaymentPatch = 'trip-cancelled-payment-cancels';
const refundCapturedPayments = 'refund captured payments';

/** Patch marker of boarding's close: bookings started before it complete at the arrival without recording no-shows. */
export const noShowsPatch = 'boarding-no-shows';

/** The boarding grace of bookings started without one in their timings (the configuration's default). */
const defaultNoShowGraceMs = 10 * 60_000;

function now(): Date {
  return new Date();
}

/**
 * When the booking opens and its hold starts: the workflow's start, which is in its history. The first workflow
 * task's time differs between its attempts, but a lost attempt may already have stored the booking and its holds
 * (worker or server gone before the task completed), so every attempt opens the booking as the first stored it.
 */
function openingTime(): Date {
  return workflowInfo().startTime;
}

/**
 * The caller's passenger ids, from the input: a lost first workflow task may have stored the passengers already,
 * and its retry may draw random numbers in another order. Only a start without them draws them here.
 */
function openingPassengerIds(input: BookingWorkflowInput): readonly string[] {
  return input.passengerIds ?? input.passengers.map(() => uuid4());
}

class BookingSaga {
  private readonly steps: BookingSteps;
  private state: BookingState | undefined;
  private seatsHeld = false;
  private notBooked: DomainError | undefined;
  /** Set by a segment change: the prices of the booking's new segment. */
  private segmentFarePrices: FarePrices | undefined;
  /** Undone newest first on cancel, expiry or failure: release the seats, give the money back. */
  private readonly compensations = new Compensations<UndoContext>();
  private readonly customerRequests = new CustomerRequests(() => this.state !== undefined && this.seatsHeld);
  private readonly payments: CapturedPayments;

  constructor(private readonly input: BookingWorkflowInput) {
    this.steps = new BookingSteps(proxyBookingActivities(input.timings, input.taskQueues), input);
    this.payments = new CapturedPayments(this.steps);
  }

  private get booking(): BookingState {
    if (this.state === undefined) throw new DomainError('INTERNAL', 'The booking has not been opened');
    return this.state;
  }

  result(): BookingWorkflowResult {
    if (this.notBooked !== undefined) return { outcome: 'NOT_BOOKED', error: this.notBooked.toJSON() };
    return { outcome: 'BOOKING_ENDED', booking: this.booking };
  }

  // ---- Rows 1 and 2: CreateBooking holds the seats, or ends with nothing held ----

  /** The application layer validated the request before starting the workflow; here it is priced and held. */
  async reserveSeatsOrFail(): Promise<boolean> {
    try {
      this.state = openBooking(this.input, openingPassengerIds(this.input), openingTime());
    } catch (error) {
      return this.endWithoutBooking(toDomainError(error));
    }
    this.showTransition();
    this.compensations.add(releaseHeldSeats, (undo) => this.steps.releaseSeats(undo.revision));
    try {
      // The first reservation writes the booking row and its holds in one transaction: all or nothing.
      const { passengers, holdExpiresAt, version } = this.booking;
      await this.steps.reserveSeats(passengers, holdExpiresAt, version, this.legs, this.booking);
    } catch (error) {
      if (isCancellation(error)) throw error;
      await this.releaseSeatsAndRefund(zeroMoney(this.booking.price.total.currency), 'not-booked');
      return this.endWithoutBooking(toDomainError(error));
    }
    this.seatsHeld = true;
    return true;
  }

  private endWithoutBooking(reason: DomainError): false {
    this.notBooked = reason;
    upsertSearchAttributes([{ key: searchAttributes.bookingStatus, value: notBookedStatus }]);
    setCurrentDetails(notBookedDetails(reason.message));
    log.info('booking not created', { bookingId: this.input.bookingId, code: reason.code });
    return false;
  }

  // ---- Rows 3 and 4: ConfirmPayment approved → CONFIRMED; declined → PENDING_PAYMENT, attempt recorded ----

  private checkConfirmPayment(request: ConfirmPaymentRequest): string {
    assertCanConfirmPayment(this.booking, now());
    return request.paymentToken;
  }

  private async confirmPayment(request: ConfirmPaymentRequest): Promise<BookingState> {
    const paymentToken = this.checkConfirmPayment(request);
    await this.chargeOrRecordDecline(this.booking.price.total, paymentToken);
    try {
      await this.steps.confirmSeats(this.booking.version + 1);
    } catch (error) {
      // The hold lapsed and the seats went to someone else: nothing may stay charged without a seat.
      const reason = toDomainError(error);
      if (isTripCancelledRefusal(reason) && patched(tripCancelledPaymentPatch)) {
        // The operator's reason, as the trip's own cancellation gives it; a refusal that names none, its message.
        const operatorReason = tripCancellationReasonOf(reason) ?? reason.message;
        await this.cancelBecauseTripCancelled(this.booking.tripId, operatorReason);
      } else {
        await this.expireUnpaidHold();
      }
      throw reason;
    }
    await this.publish({ status: this.next('PAYMENT_APPROVED'), confirmedAt: toTimestamp(now()) });
    await this.steps.notifyConfirmed(this.booking);
    return this.booking;
  }

  // ---- Row 5: PENDING_PAYMENT → EXPIRED when the hold timer fires ----

  async holdUntilPaidOrExpired(): Promise<void> {
    // Runs after any payment in flight: a payment that won the race keeps the booking.
    await this.waitForTimer(
      'HOLD_TIMER_FIRED',
      () => this.booking.holdExpiresAt,
      async () => {
        if (shouldExpire(this.booking, now())) await this.expireUnpaidHold();
      },
    );
  }

  /** The seats go back, anything captured is refunded, and the customer hears that the hold lapsed. */
  private async expireUnpaidHold(): Promise<void> {
    await this.releaseSeatsAndRefund(netAmountPaid(this.booking), 'expired');
    await this.publish({ status: this.next('HOLD_TIMER_FIRED') });
    await this.steps.notifyExpired(this.booking);
  }

  // ---- Rows 6 and 7: CancelBooking → CANCELLED, refunding what the fare rule grants ----

  private checkCancel(request: CancelBookingRequest): { reason?: string } {
    assertCanCancel(this.booking, now());
    return request;
  }

  private async cancelBooking(request: CancelBookingRequest): Promise<BookingState> {
    const { reason } = this.checkCancel(request);
    const wasConfirmed = this.booking.status === 'CONFIRMED';
    const cancelledAt = toTimestamp(now());
    const refund = cancellationRefund(this.booking, cancelledAt);
    await this.releaseSeatsAndRefund(refund, 'cancelled');
    await this.publish({
      status: this.next('CANCEL_REQUESTED'),
      cancelledAt,
      ...(reason === undefined ? {} : { cancellationReason: reason }),
    });
    if (wasConfirmed) await this.steps.notifyCancelled(this.booking, refund, reason);
    return this.booking;
  }

  /**
   * A cancel sent while the booking was still being created: it waits for the seats to be held, then cancels in
   * turn like any cancel. A booking that never came to be, or has ended since, has nothing left to cancel.
   */
  private async cancelOnceBooked(request: CancelBookingRequest): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      await condition(() => this.seatsHeld || this.notBooked !== undefined);
      if (this.notBooked !== undefined) return;
      await this.customerRequests.inTurn(async () => {
        try {
          await this.cancelBooking(request);
        } catch (error) {
          log.info('requested cancellation not applied', {
            bookingId: this.input.bookingId,
            reason: toDomainError(error).message,
          });
        }
      });
    });
  }

  // ---- The operator cancelled the trip: CANCELLED with everything captured refunded, whatever the fare ----

  /**
   * Waits, like a cancel sent during the create, for the seats to be held (the trip's scan may find the booking
   * row a moment before this workflow hears its reservation back), then cancels in turn with other requests. A
   * booking that has ended, or never came to be, answers so and changes nothing: the trip's cancellation may ask
   * again after a restart.
   */
  private async cancelForTrip(request: TripCancellationRequest): Promise<TripCancellationAnswer> {
    return CancellationScope.nonCancellable(async () => {
      await condition(() => this.seatsHeld || this.notBooked !== undefined);
      if (this.notBooked !== undefined) {
        return { outcome: 'ALREADY_ENDED', status: notBookedStatus, refunded: zeroMoney(this.currency) };
      }
      return this.customerRequests.inTurn(async (): Promise<TripCancellationAnswer> => {
        if (isTerminal(this.booking.status)) {
          return {
            outcome: 'ALREADY_ENDED',
            status: this.booking.status,
            refunded: zeroMoney(this.currency),
          };
        }
        const refunded = await this.cancelBecauseTripCancelled(request.tripId, request.reason);
        return { outcome: 'CANCELLED', status: this.booking.status, refunded };
      });
    });
  }

  private async cancelBecauseTripCancelled(tripId: string, reason: string): Promise<Money> {
    const refund = tripCancellationRefund(this.booking);
    await this.releaseSeatsAndRefund(refund, 'trip-cancelled');
    await this.publish({
      status: this.next('CANCEL_REQUESTED'),
      cancelledAt: toTimestamp(now()),
      cancellationReason: reason,
    });
    log.info('booking cancelled with its trip', { bookingId: this.input.bookingId, tripId });
    await this.steps.notifyTripCancelled(this.booking, refund, reason);
    return refund;
  }

  private get currency(): string {
    return this.booking.price.total.currency;
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
    if (request.segmentChange !== undefined && command.segmentChange === undefined) {
      throw new DomainError('INTERNAL', 'Segment change terms came without a segment change');
    }
    return planBookingChange(
      booking,
      command,
      newPassengerIds,
      request.segmentChange?.farePrices ?? this.farePrices,
    );
  }

  /** New seats first, then the money, and only then are the old seats let go: a failure changes nothing. */
  private async changeBooking(request: UpdateBookingRequest): Promise<BookingState> {
    if (request.segmentChange !== undefined) return this.changeSegment(request, request.segmentChange);
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
      await this.steps.releaseSeats(String(nextVersion), [...plan.seatsToRelease]);
    }
    await this.publish({
      status: this.next('UPDATE_REQUESTED'),
      passengers: plan.passengers,
      price: plan.price,
    });
    await this.steps.notifyChanged(this.booking, plan.settlement);
    return this.booking;
  }

  /** A confirmed booking's new seats are booked at once; a pending one's share the booking's hold. */
  private async holdNewSeats(
    plan: BookingChangePlan,
    nextVersion: number,
    undoChange: Compensations,
  ): Promise<void> {
    if (plan.seatsToReserve.length === 0) return;
    const newSeatNumbers = plan.seatsToReserve.map((seat) => seat.seatNumber);
    const newSeats = plan.passengers.filter((passenger) => newSeatNumbers.includes(passenger.seatNumber));
    const confirmed = this.booking.status === 'CONFIRMED';
    const holdExpiresAt = confirmed
      ? holdExpiryFor(now(), this.input.timings.holdDurationMs, this.booking.departureTime)
      : this.booking.holdExpiresAt;
    undoChange.add('release the new seats', () =>
      this.steps.releaseSeats(`undo-${nextVersion}`, newSeatNumbers),
    );
    await this.steps.reserveSeats(newSeats, holdExpiresAt, nextVersion, this.legs);
    if (confirmed) await this.steps.confirmSeats(nextVersion);
  }

  /**
   * A segment change is a change like a seat change: every seat's new legs are held first, then the price
   * difference is charged or refunded, and only then are the old legs let go. A failure before that puts the
   * booking's allocations back to its old legs.
   */
  private async changeSegment(
    request: UpdateBookingRequest,
    terms: SegmentChangeTerms,
  ): Promise<BookingState> {
    const plan = this.planChange(request, true);
    const nextVersion = this.booking.version + 1;
    const newLegs = legRangeOf(terms.segment);
    const confirmed = this.booking.status === 'CONFIRMED';
    const departureCap = (holdExpiresAt: Timestamp) =>
      timestampMs(holdExpiresAt) < timestampMs(terms.departureTime) ? holdExpiresAt : terms.departureTime;
    const holdExpiresAt = confirmed
      ? holdExpiryFor(now(), this.input.timings.holdDurationMs, terms.departureTime)
      : departureCap(this.booking.holdExpiresAt);
    const undoChange = new Compensations();
    try {
      undoChange.add('release the new legs', () =>
        this.steps.releaseSeats(`undo-${nextVersion}`, undefined, terms.previousLegs),
      );
      await this.steps.reserveSeats(plan.passengers, holdExpiresAt, nextVersion, newLegs);
      if (confirmed) await this.steps.confirmSeats(nextVersion);
      await this.settlePriceDifference(plan);
    } catch (error) {
      await undoChange.runInReverse();
      throw error;
    }
    await this.steps.releaseSeats(String(nextVersion), undefined, newLegs);
    this.segmentFarePrices = terms.farePrices;
    await this.publish({
      status: this.next('UPDATE_REQUESTED'),
      passengers: plan.passengers,
      price: plan.price,
      segment: terms.segment,
      departureTime: terms.departureTime,
      holdExpiresAt,
    });
    await this.steps.notifyChanged(this.booking, plan.settlement);
    return this.booking;
  }

  /**
   * When the booking completes: the arrival at its alighting stop (the segment's local time read as an instant),
   * the departure for a booking made before segments.
   */
  private get arrivalTime(): Timestamp {
    const segment = this.booking.segment;
    if (segment === undefined) return this.input.arrivalTime ?? this.booking.departureTime;
    return new Date(timestampMs(segment.alightingStop.localTime)).toISOString();
  }

  /** The legs the booking holds; undefined for a booking made before segments, which holds the whole route. */
  private get legs(): LegRange | undefined {
    const segment = this.state?.segment;
    return segment === undefined ? undefined : legRangeOf(segment);
  }

  /** The prices of the booking's segment: the start's, until a segment change brings others. */
  private get farePrices(): FarePrices {
    return this.segmentFarePrices ?? this.input.farePrices;
  }

  /** Pending: the amount due simply changes. Confirmed: charge or refund the difference. */
  private async settlePriceDifference(plan: BookingChangePlan): Promise<void> {
    const { settlement } = plan;
    if (settlement.kind === 'CHARGE') {
      const { paymentToken } = this.payments;
      if (paymentToken === undefined) {
        throw bookingStateConflict(
          this.booking.status,
          'update',
          'no payment method is on file for the difference',
        );
      }
      await this.chargeOrRecordDecline(settlement.amount, paymentToken);
    } else if (settlement.kind === 'REFUND') {
      await this.refund(settlement.amount);
    }
  }

  // ---- Day of travel: passengers board; at the departure plus the grace period the others become no-shows ----

  private checkBoarding(request: RecordBoardingRequest): BoardingRequest {
    assertCanBoard(this.booking, request, this.booking.segment?.boardingStopCode);
    return request;
  }

  private async recordBoarding(request: RecordBoardingRequest): Promise<BookingState> {
    const boarding = this.checkBoarding(request);
    const { boardings } = withBoarding(this.booking, boarding);
    await this.publish({ status: this.next('PASSENGER_BOARDED'), boardings });
    return this.booking;
  }

  private get noShowDeadline(): Timestamp {
    return noShowDeadline(
      this.booking.departureTime,
      this.input.timings.noShowGraceMs ?? defaultNoShowGraceMs,
      this.arrivalTime,
    );
  }

  /** Waits out the boarding grace; a booking cancelled or already closed meanwhile has nothing left to record. */
  private async recordNoShowsAfterGrace(): Promise<void> {
    const open = () => this.booking.status === 'CONFIRMED' && this.booking.noShowsRecordedAt === undefined;
    await waitForDeadline(
      open,
      () => this.noShowDeadline,
      () =>
        this.customerRequests.inTurn(async () => {
          if (open() && now().getTime() >= timestampMs(this.noShowDeadline)) await this.recordNoShows();
        }),
    );
  }

  /** Every passenger not aboard becomes a no-show: the fare's rule says what they get back, and they are told. */
  private async recordNoShows(): Promise<void> {
    const noShows = passengersNotBoarded(this.booking);
    const refund = noShowRefund(
      this.booking,
      noShows.map((passenger) => passenger.id),
    );
    await this.refund(refund);
    await this.publish({ status: this.next('BOARDING_CLOSED'), noShowsRecordedAt: toTimestamp(now()) });
    if (noShows.length > 0) await this.steps.notifyNoShow(this.booking, seatNumberList(noShows), refund);
  }

  // ---- Row 9: CONFIRMED → COMPLETED when the departure time passes ----

  async completeAfterDeparture(): Promise<void> {
    // Bookings started before boarding existed complete at the arrival with no command before that timer.
    if (this.booking.status === 'CONFIRMED' && patched(noShowsPatch)) await this.recordNoShowsAfterGrace();
    await this.waitForTimer(
      'DEPARTURE_PASSED',
      () => this.arrivalTime,
      async () => {
        if (shouldComplete(this.booking, now()))
          await this.publish({ status: this.next('DEPARTURE_PASSED') });
      },
    );
  }

  // ---- An operator cancels the workflow itself: undo everything, record it ----

  async undoEverythingOnWorkflowCancel(): Promise<void> {
    await CancellationScope.nonCancellable(() =>
      this.customerRequests.inTurn(async () => {
        if (this.state === undefined || isTerminal(this.booking.status)) return;
        await this.releaseSeatsAndRefund(netAmountPaid(this.booking), 'workflow-cancelled');
        if (!this.seatsHeld) {
          this.endWithoutBooking(new DomainError('UNAVAILABLE', 'The booking request was cancelled'));
          return;
        }
        await this.publish({
          status: this.next('CANCEL_REQUESTED'),
          cancelledAt: toTimestamp(now()),
          cancellationReason: 'Cancelled by an operator; any payment was refunded in full',
        });
      }),
    );
  }

  // ---- How customer requests arrive: Workflow Updates, validated first so a forbidden one never lands in history ----

  answerCustomerRequests(): void {
    const requests = this.customerRequests;
    setHandler(bookingStateQuery, () => this.state);
    setHandler(createBookingUpdate, () => this.answerCreateBooking(), {
      validator: (request?: CreateBookingRequest) => {
        try {
          assertSameCreateRequest(workflowInfo().memo?.[createRequestMemoKey], request);
        } catch (error) {
          throw asValidationFailure(error);
        }
      },
    });
    setHandler(confirmPaymentUpdate, (request) => requests.answer(() => this.confirmPayment(request)), {
      validator: (request: ConfirmPaymentRequest) =>
        requests.validate(() => this.checkConfirmPayment(request)),
    });
    setHandler(updateBookingUpdate, (request) => requests.answer(() => this.changeBooking(request)), {
      validator: (request: UpdateBookingRequest) => requests.validate(() => this.planChange(request, false)),
    });
    setHandler(cancelBookingUpdate, (request) => requests.answer(() => this.cancelBooking(request)), {
      validator: (request: CancelBookingRequest) => requests.validate(() => this.checkCancel(request)),
    });
    setHandler(recordBoardingUpdate, (request) => requests.answer(() => this.recordBoarding(request)), {
      validator: (request: RecordBoardingRequest) => requests.validate(() => this.checkBoarding(request)),
    });
    setHandler(requestCancellationSignal, (request) => this.cancelOnceBooked(request));
    setHandler(cancelForTripUpdate, (request) => this.cancelForTrip(request), {
      validator: (request: TripCancellationRequest) => {
        if (typeof request?.reason !== 'string' || typeof request.tripId !== 'string') {
          throw asValidationFailure(
            new DomainError('VALIDATION_FAILED', 'A trip cancellation names its trip and reason'),
          );
        }
      },
    });
  }

  /** A repeated create (same request id) gets the same answer as the first one. */
  private async answerCreateBooking(): Promise<BookingState> {
    await condition(() => this.seatsHeld || this.notBooked !== undefined);
    if (this.notBooked !== undefined) throw domainFailure(this.notBooked);
    return this.booking;
  }

  // ---- Steps shared by the rows ----

  /** The status the lifecycle table gives the booking after `event`. */
  private next(event: LifecycleEvent): BookingStatus {
    return nextStatus(this.booking.status, event);
  }

  /**
   * Waits while the table still allows a timed `event`; when its deadline passes first, `atDeadline` runs in
   * turn with customer requests, so a request in flight finishes before the timer's transition looks.
   */
  private async waitForTimer(
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
  private async releaseSeatsAndRefund(refund: Money, revision: string): Promise<void> {
    await this.compensations.runInReverse({ refund, revision });
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
    let charge;
    try {
      charge = await this.payments.charge(attemptNumber, amount, paymentToken);
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
    const { amount: captured, methodMasked: method } = charge;
    this.state = withApprovedPayment(this.booking, { attemptNumber, attemptedAt, amount: captured, method });
  }

  private async refund(amount: Money): Promise<void> {
    await this.payments.refund(amount, (refunded) => {
      this.state = withRefund(this.booking, refunded);
    });
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
    await this.steps.recordBooking(this.booking);
    await keepTicketsInLine(this.steps, this.booking);
  }

  private showTransition(): void {
    upsertSearchAttributes(bookingSearchAttributes(this.booking));
    setCurrentDetails(bookingDetails(this.booking));
  }
}
