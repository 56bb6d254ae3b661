// The booking application both fronts call: commands become workflow updates, reads come from the read model.
import { randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { BookingState, BookingStatus, FareClass, FarePrices } from '../domain/booking';
import {
  bookingProcessing,
  bookingStateConflict,
  cancellationRecorded,
  DomainError,
  holdExpired,
  idempotencyKeyReused,
  notFound,
  permissionDenied,
  seatUnavailable,
  unavailable,
  validationFailed,
} from '../domain/errors';
import {
  bookingListing,
  bookingListQuery,
  bookingViewOfSnapshot,
  bookingViews,
  findBookingRow,
  type BookingRow,
  type BookingView,
} from '../db/booking-read-model';
import { parseInt8 } from '../db/connection';
import { pageWindow, readPage } from '../db/paging';
import { seatsTakenColumn } from '../db/seat-allocations';
import { assertFareClassesOnSale, defaultRefundRule } from '../domain/fares';
import { isTerminal } from '../domain/lifecycle';
import { money } from '../domain/money';
import {
  isUuid,
  validateCancelBooking,
  validateConfirmPayment,
  validateBookingStatusFilter,
  validateCreateBooking,
  validateId,
  type CreateBookingInput,
  type UpdateBookingInput,
} from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';
import type { bookingWorkflow } from '../workflows/booking';
import {
  bookingWorkflowId,
  bookingWorkflowType,
  cancelBookingUpdate,
  confirmPaymentUpdate,
  createBookingUpdate,
  updateBookingUpdate,
  type BookingTimings,
  type BookingWorkflowInput,
} from '../workflows/shared';
import type {
  BookingApplication,
  ConfirmPaymentOptions,
  CreateBookingOptions,
  Page,
  PageRequest,
} from './interface';
import {
  bookingStartOptions,
  createBookingStarts,
  createRequestMemoKey,
  type BookingStart,
  type StartOutcome,
} from './booking-starts';
import { openHoldClaimsFromConfig, type HoldClaim } from './open-hold-claims';
import { createSeatsInFlight } from './seats-in-flight';
import { domainErrorFromTemporal, isTemporalUnreachable, isWorkflowGone } from './temporal-outcomes';
import { isStaff } from '../domain/roles';
import { assertCreateSeatsOnBus } from '../domain/seat-layout';
import { taskQueues, type TaskQueueNames } from '../domain/task-queues';
import type { Actor } from '../domain/actor';

/** How long a client is told to wait before reading a booking whose seats are still being held. */
const processingRetryAfterSeconds = 1;

/** The promise's value, or undefined when `deadline` (epoch milliseconds) comes first. */
async function settledBy<T>(promise: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()), undefined);
  });
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** SEAT_UNAVAILABLE for seats another booking's create is reserving at this moment. */
function seatsBeingReserved(seatNumbers: readonly string[]): DomainError {
  return seatUnavailable(
    seatNumbers,
    `another booking is reserving ${seatNumbers.length === 1 ? 'it' : 'them'}`,
  );
}

/** Activity timings not in Config; tests shorten the retry interval to keep transient-failure cases fast. */
export const defaultActivityTimings = {
  activityStartToCloseMs: 30_000,
  activityRetryInitialIntervalMs: 1000,
  activityRetryMaximumIntervalMs: 60_000,
} as const;

export interface BookingApplicationDependencies {
  config: Pick<Config, 'booking' | 'idempotency'>;
  database: Knex;
  temporal: Client;
  cipher: FieldCipher;
  /** Overrides of the durations the workflow gets; hold and change cutoff come from config.booking. */
  timings?: Partial<BookingTimings>;
  /** Queue names the workers of this deployment poll; the standard ones by default. */
  taskQueues?: TaskQueueNames;
  now?: () => Date;
}

interface BookableTrip {
  id: string;
  routeId: string;
  departureTime: Date;
  originTimeZone: string;
  farePrices: FarePrices;
  seatClasses: Record<string, FareClass>;
  /** The requested seats another booking holds or has booked (lapsed holds excepted), sorted. */
  seatsTaken: string[];
  /** Whether a create of this booking id came before: this one is a retry. */
  madeBefore: boolean;
  /** The request of an earlier create of this booking id that was refused before it claimed a slot. */
  refusedRequestFingerprint: string | null;
}

function tripUnavailable(tripId: string, why: string): DomainError {
  return new DomainError('VALIDATION_FAILED', `Trip ${tripId} cannot be booked: ${why}`, {
    fieldViolations: [{ field: 'trip_id', message: why }],
  });
}

/** What each command is called in BOOKING_STATE_CONFLICT errors, for a workflow that has already ended. */
type CommandAction = 'confirm-payment' | 'cancel' | 'update';

export function createBookingApplication(dependencies: BookingApplicationDependencies): BookingApplication {
  const { config, database, temporal, cipher } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const queueNames = dependencies.taskQueues ?? taskQueues;
  const timings: BookingTimings = {
    holdDurationMs: config.booking.holdDurationSeconds * 1000,
    changeCutoffMs: config.booking.changeCutoffSeconds * 1000,
    ...defaultActivityTimings,
    ...dependencies.timings,
  };
  const openHolds = openHoldClaimsFromConfig(config, database, {
    holdDurationMs: timings.holdDurationMs,
    now,
  });
  const starts = createBookingStarts({ temporal, cipher, claims: openHolds });
  const seatsInFlight = createSeatsInFlight();

  async function loadBookableTrip(
    tripId: string,
    request: { seatNumbers: readonly string[]; bookingId: string },
  ): Promise<BookableTrip> {
    // One round trip: the trip, its origin's time zone, its fares, its layout's seats, which of the requested seats
    // are taken, and whether the booking id was used before.
    const trip:
      | {
          id: string;
          route_id: string;
          departure_time: Date;
          status: string;
          time_zone: string;
          /** [fare class, amount in minor units as text (bigint), currency]. */
          fares: [FareClass, string, string][];
          /** [seat number, fare class]. */
          seats: [string, FareClass][];
          taken_seats: string[];
          made_before: boolean;
          refused_request_fingerprint: string | null;
        }
      | undefined = await database('trips')
      .join('routes', 'routes.id', 'trips.route_id')
      .join('stops', 'stops.code', 'routes.origin_stop_code')
      .where('trips.id', tripId)
      .first(
        'trips.id',
        'trips.route_id',
        'trips.departure_time',
        'trips.status',
        'stops.time_zone',
        database.raw(`(SELECT coalesce(json_agg(json_build_array(fare.fare_class, fare.amount_minor::text,
                         fare.currency)), '[]'::json)
                         FROM trip_fares AS fare WHERE fare.trip_id = trips.id) AS fares`),
        database.raw(`(SELECT coalesce(json_agg(json_build_array(seat.seat_number, seat.fare_class)), '[]'::json)
                         FROM seats AS seat WHERE seat.layout_id = trips.layout_id) AS seats`),
        seatsTakenColumn(database, {
          tripAlias: 'trips',
          seatNumbers: request.seatNumbers,
          bookingId: request.bookingId,
          lapsedHoldGraceSeconds: config.booking.lapsedHoldGraceSeconds,
        }),
        ...openHolds.earlierCreateColumns(request.bookingId),
      );
    if (trip === undefined) throw notFound('Trip', tripId);
    if (trip.status === 'CANCELLED') throw tripUnavailable(tripId, 'the trip was cancelled');
    if (trip.status === 'DEPARTED' || trip.departure_time.getTime() <= now().getTime()) {
      throw tripUnavailable(tripId, `the trip departed at ${trip.departure_time.toISOString()}`);
    }
    if (trip.fares.length === 0) throw tripUnavailable(tripId, 'the trip has no fares on sale');
    const farePrices: Partial<Record<FareClass, ReturnType<typeof money>>> = {};
    for (const [fareClass, amountMinor, currency] of trip.fares) {
      farePrices[fareClass] = money(parseInt8(amountMinor), currency.trim());
    }
    const seatClasses: Record<string, FareClass> = {};
    for (const [seatNumber, fareClass] of trip.seats) seatClasses[seatNumber] = fareClass;
    return {
      id: trip.id,
      routeId: trip.route_id,
      departureTime: trip.departure_time,
      originTimeZone: trip.time_zone,
      farePrices,
      seatClasses,
      seatsTaken: [...trip.taken_seats].sort(),
      madeBefore: trip.made_before,
      refusedRequestFingerprint: trip.refused_request_fingerprint,
    };
  }

  /** Bookings reference users: a token whose subject has no account here cannot book. */
  async function assertCustomerAccount(actor: Actor): Promise<string> {
    const customerId = actor.userId.toLowerCase();
    const exists =
      isUuid(customerId) &&
      (await database('users').where('id', customerId).first<{ id: string } | undefined>('id'));
    if (!exists) throw permissionDenied('Bookings need a customer account; this sign-in has none');
    return customerId;
  }

  function isVisibleTo(actor: Actor, customerId: string): boolean {
    return customerId === actor.userId.toLowerCase() || isStaff(actor);
  }

  /** The caller's booking row; another customer's booking is NOT_FOUND, exactly like a missing one. */
  async function findVisibleBooking(actor: Actor, bookingId: string): Promise<BookingRow | undefined> {
    const row = await findBookingRow(database, bookingId);
    if (row !== undefined && !isVisibleTo(actor, row.customer_id)) throw notFound('Booking', bookingId);
    return row;
  }

  /** The claim of a booking id that has no row yet; another customer's, or none at all, is NOT_FOUND. */
  async function findVisibleClaim(actor: Actor, bookingId: string): Promise<HoldClaim> {
    const claim = await openHolds.find(bookingId);
    if (claim === undefined || !isVisibleTo(actor, claim.customerId)) throw notFound('Booking', bookingId);
    return claim;
  }

  async function viewOf(row: BookingRow): Promise<BookingView> {
    const [view] = await bookingViews(database, [row], cipher);
    return view;
  }

  /** A workflow that has ended cannot take commands; say why in the booking's own terms. */
  function endedBookingError(row: BookingRow, action: CommandAction): DomainError {
    if (row.status === 'EXPIRED' && action !== 'cancel') {
      return holdExpired((row.hold_expires_at ?? row.updated_at).toISOString());
    }
    return bookingStateConflict(row.status, action);
  }

  async function sendCommand(
    actor: Actor,
    bookingIdInput: string,
    action: CommandAction,
    send: (handle: WorkflowHandle<typeof bookingWorkflow>) => Promise<BookingState>,
    whileCreating: (bookingId: string) => Promise<BookingRow> = (bookingId) =>
      rowOnceCreated(actor, bookingId),
  ): Promise<BookingView> {
    const bookingId = validateId(bookingIdInput, 'booking_id');
    const row = (await findVisibleBooking(actor, bookingId)) ?? (await whileCreating(bookingId));
    // Cancelling is idempotent (as the contracts promise): a repeated cancel answers the cancelled booking.
    if (action === 'cancel' && row.status === 'CANCELLED') return viewOf(row);
    if (isTerminal(row.status)) throw endedBookingError(row, action);
    const handle = temporal.workflow.getHandle<typeof bookingWorkflow>(bookingWorkflowId(row.id));
    try {
      return bookingViewOfSnapshot(await send(handle));
    } catch (error) {
      if (isWorkflowGone(error)) {
        const latest = (await findBookingRow(database, row.id)) ?? row;
        if (action === 'cancel' && latest.status === 'CANCELLED') return viewOf(latest);
        throw isTerminal(latest.status) ? endedBookingError(latest, action) : notFound('Booking', row.id);
      }
      throw domainErrorFromTemporal(error);
    }
  }

  /**
   * A command for a booking id without a row is answered as a read of it would be: BOOKING_PROCESSING while its
   * create goes on, the reason it ended without a booking; the row, should it have appeared meanwhile.
   */
  async function rowOnceCreated(actor: Actor, bookingId: string, claim?: HoldClaim): Promise<BookingRow> {
    await answerUnfinishedCreate(actor, bookingId, claim ?? (await findVisibleClaim(actor, bookingId)));
    const row = await findBookingRow(database, bookingId);
    if (row === undefined) throw notFound('Booking', bookingId);
    return row;
  }

  /** A booking id the caller chose names one request: the same id with another body is refused, not joined. */
  async function assertSameCreateRequest(
    bookingId: string,
    requestFingerprint: string,
    options: { notStartedYet?: 'fine' } = {},
  ): Promise<void> {
    let memo: Record<string, unknown> | undefined;
    try {
      ({ memo } = await temporal.workflow.getHandle(bookingWorkflowId(bookingId)).describe());
    } catch (error) {
      if (options.notStartedYet === 'fine' && isWorkflowGone(error)) return;
      throw domainErrorFromTemporal(error);
    }
    const recorded = memo?.[createRequestMemoKey];
    if (typeof recorded === 'string' && recorded !== requestFingerprint) throw idempotencyKeyReused();
  }

  /** A booking id whose workflow has ended: answer what the first request got. */
  async function answerRepeatedCreate(actor: Actor, bookingId: string): Promise<BookingView> {
    const row = await findBookingRow(database, bookingId);
    if (row !== undefined && row.customer_id === actor.userId.toLowerCase()) return viewOf(row);
    const outcome = await temporal.workflow
      .getHandle<typeof bookingWorkflow>(bookingWorkflowId(bookingId))
      .result();
    if (outcome.outcome === 'NOT_BOOKED') {
      await openHolds.release(bookingId);
      throw DomainError.fromJSON(outcome.error);
    }
    throw notFound('Booking', bookingId);
  }

  /**
   * A start that failed before the answer fell due may still have happened. With no workflow, the error is the
   * answer and the claim goes, unless an earlier create of the id was answered with it: then the booking goes on.
   */
  async function answerFailedStart(bookingId: string, failure: unknown): Promise<never> {
    // A workflow Temporal cannot be asked about counts as not started: the error answer is the safer one.
    const started = await temporal.workflow
      .getHandle(bookingWorkflowId(bookingId))
      .describe()
      .then(
        () => true,
        () => false,
      );
    if (!started && (await openHolds.releaseUnlessAcknowledged(bookingId))) {
      throw domainErrorFromTemporal(failure);
    }
    throw bookingProcessing(bookingId, processingRetryAfterSeconds);
  }

  /**
   * Whether the update-with-start reached Temporal's start: its workflow handle resolves once a start answer came
   * back (started, or joined a running one), and rejects when the call failed before that.
   */
  function reachedStart(operation: WithStartWorkflowOperation<typeof bookingWorkflow>): Promise<boolean> {
    return operation.workflowHandle().then(
      () => true,
      () => false,
    );
  }

  /**
   * After the answer deadline nobody is left to tell; whoever reads the booking later hears the outcome from the
   * workflow. A create that ends without a booking frees its slot; a start that failed is sent again at once (the
   * reconciler and the booking's readers send it too, should this fail as well).
   */
  function settleLateCreate(
    bookingId: string,
    sealedStart: string,
    operation: WithStartWorkflowOperation<typeof bookingWorkflow>,
    outcome: Promise<{ booking: BookingState } | { error: unknown }>,
  ): void {
    void outcome
      .then(async (late) => {
        if (!('error' in late)) return;
        if (late.error instanceof WorkflowUpdateFailedError) await openHolds.release(bookingId);
        else if (!(await reachedStart(operation))) await starts.ensureStarted(bookingId, sealedStart);
      })
      .catch(() => undefined);
  }

  /** A booking whose id was given out and that Temporal does not know, or cannot be asked about: it is started. */
  async function startPromised(bookingId: string, sealedStart: string): Promise<boolean> {
    let outcome: StartOutcome;
    try {
      outcome = await starts.ensureStarted(bookingId, sealedStart);
    } catch (error) {
      // Out of reach: the start is stored and goes out once Temporal is back (the reconciler sends it).
      if (isTemporalUnreachable(error)) throw bookingProcessing(bookingId, processingRetryAfterSeconds);
      throw domainErrorFromTemporal(error);
    }
    // Its create answered an error and started nothing: the id was never given out.
    if (outcome === 'withdrawn') throw notFound('Booking', bookingId);
    return outcome === 'running';
  }

  /**
   * A cancel of a booking still being created is recorded with its workflow, which applies it once the seats are
   * held (the stored start goes with it when no start reached Temporal): the caller hears BOOKING_PROCESSING, and
   * a read of the booking then answers it CANCELLED. Otherwise it is answered as any command without a row.
   */
  async function cancelWhileCreating(
    actor: Actor,
    bookingId: string,
    command: { reason?: string },
  ): Promise<BookingRow> {
    const claim = await findVisibleClaim(actor, bookingId);
    if (claim.released || claim.sealedStart === null) return rowOnceCreated(actor, bookingId, claim);
    let outcome: StartOutcome;
    try {
      outcome = await starts.requestCancellation(bookingId, claim.sealedStart, command);
    } catch (error) {
      throw domainErrorFromTemporal(error);
    }
    if (outcome !== 'running') return rowOnceCreated(actor, bookingId);
    throw cancellationRecorded(bookingId, processingRetryAfterSeconds);
  }

  /**
   * A booking id with no read-model row whose create claimed a slot: still being made (BOOKING_PROCESSING),
   * ended without a booking (the reason the create got). A create whose id was given out but whose start never
   * reached Temporal is started here; one that answered an error and started nothing is NOT_FOUND.
   */
  async function answerUnfinishedCreate(
    actor: Actor,
    bookingId: string,
    claim: HoldClaim,
  ): Promise<BookingView> {
    const handle = temporal.workflow.getHandle<typeof bookingWorkflow>(bookingWorkflowId(bookingId));
    const promisedStart = claim.released ? null : claim.sealedStart;
    let running: boolean;
    try {
      running = (await handle.describe()).status.name === 'RUNNING';
    } catch (error) {
      if (promisedStart === null || !(isWorkflowGone(error) || isTemporalUnreachable(error))) {
        throw isWorkflowGone(error) ? notFound('Booking', bookingId) : domainErrorFromTemporal(error);
      }
      running = await startPromised(bookingId, promisedStart);
    }
    // The seats may have been held since the first read.
    const row = await findBookingRow(database, bookingId);
    if (row !== undefined) return viewOf(row);
    if (running) throw bookingProcessing(bookingId, processingRetryAfterSeconds);
    return answerRepeatedCreate(actor, bookingId);
  }

  async function createBooking(
    actor: Actor,
    input: CreateBookingInput,
    options: CreateBookingOptions = {},
  ): Promise<BookingView> {
    // Counted from the request's arrival: the front's own timeout keeps a margin for what runs after this call.
    const answerBy = Math.min(
      (options.receivedAt ?? Date.now()) + config.booking.createAnswerTimeoutMs,
      options.answerBy ?? Number.POSITIVE_INFINITY,
    );
    // Every check of a create's input is made here, once: only here can a bad one be refused before a workflow
    // exists. The workflow takes the command as given; the seat-in-layout foreign key backs the layout check.
    const command = validateCreateBooking(input, { maxPassengers: config.booking.maxPassengersPerBooking });
    const chosenBookingId =
      options.bookingId === undefined ? undefined : validateId(options.bookingId, 'booking_id');
    const bookingId = chosenBookingId ?? randomUUID();
    const seatNumbers = command.passengers.map((passenger) => passenger.seatNumber);
    // Both reads at once; the account's refusal still comes first when both fail.
    const [account, bookableTrip] = await Promise.allSettled([
      assertCustomerAccount(actor),
      loadBookableTrip(command.tripId, { seatNumbers, bookingId }),
    ]);
    if (account.status === 'rejected') throw account.reason;
    if (bookableTrip.status === 'rejected') throw bookableTrip.reason;
    const customerId = account.value;
    const trip = bookableTrip.value;
    assertCreateSeatsOnBus(command, trip.seatClasses);
    assertFareClassesOnSale(command.passengers, trip.farePrices);

    const requestFingerprint = cipher.blindIndex(JSON.stringify(command));
    if (trip.refusedRequestFingerprint !== null && trip.refusedRequestFingerprint !== requestFingerprint) {
      throw idempotencyKeyReused();
    }
    // A seat someone else holds, or that another create here is reserving, is refused before any workflow: a
    // burst for a few seats starts a workflow per seat rather than per request. The workflow's hold stays the
    // authority (creates through other processes race there). A retry of a booking id answers what it got before.
    const refuseEarly = async (refusal: DomainError): Promise<never> => {
      if (chosenBookingId !== undefined) {
        await openHolds.recordRefusal(customerId, bookingId, requestFingerprint);
      }
      throw refusal;
    };
    if (!trip.madeBefore && trip.seatsTaken.length > 0) await refuseEarly(seatUnavailable(trip.seatsTaken));
    const passage = seatsInFlight.enter(trip.id, seatNumbers, bookingId);
    if (!passage.entered && !trip.madeBefore) await refuseEarly(seatsBeingReserved(passage.reservedByOthers));
    const leaveSeats = () => {
      if (passage.entered) passage.leave();
    };
    let started: StartedCreate;
    try {
      started = await startCreate({
        customerId,
        bookingId,
        requestFingerprint,
        command,
        trip,
        answerBy,
      });
    } catch (error) {
      leaveSeats();
      throw error;
    }
    // The seats stay marked until the workflow has held them or failed, even when the answer goes out before.
    void started.outcome.then(leaveSeats);
    return answerCreate(actor, { bookingId, chosenBookingId, requestFingerprint, answerBy, ...started });
  }

  /** A create on its way: its stored start, the start sent, and the outcome, which never rejects (it carries the error). */
  interface StartedCreate {
    sealedStart: string;
    startOperation: WithStartWorkflowOperation<typeof bookingWorkflow>;
    outcome: Promise<{ booking: BookingState } | { error: unknown }>;
  }

  /**
   * Claims the customer's slot, storing the booking's start with the claim, then starts the booking's workflow
   * with its create update.
   */
  async function startCreate(create: {
    customerId: string;
    bookingId: string;
    requestFingerprint: string;
    command: ReturnType<typeof validateCreateBooking>;
    trip: BookableTrip;
    answerBy: number;
  }): Promise<StartedCreate> {
    const { customerId, bookingId, requestFingerprint, command, trip, answerBy } = create;
    const departureTime = trip.departureTime.toISOString();
    const workflowInput: BookingWorkflowInput = {
      bookingId,
      customerId,
      tripId: trip.id,
      routeId: trip.routeId,
      departureTime,
      originTimeZone: trip.originTimeZone,
      passengers: [...command.passengers],
      passengerIds: command.passengers.map(() => randomUUID()),
      contactEmail: command.contactEmail,
      ...(command.contactPhone === undefined ? {} : { contactPhone: command.contactPhone }),
      farePrices: trip.farePrices,
      seatClasses: trip.seatClasses,
      refundRule: defaultRefundRule,
      maxPassengers: config.booking.maxPassengersPerBooking,
      timings,
      taskQueues: queueNames,
    };
    const start: BookingStart = { input: workflowInput, requestFingerprint };
    const sealedStart = starts.seal(start);
    // One account may not hold a whole bus: the slot is taken before the workflow can hold anything. The start is
    // stored with it, so that once the booking id is given out the booking is started whatever befalls this call.
    await openHolds.claim(customerId, bookingId, sealedStart);
    // One round trip starts the workflow and waits for its create update, which answers once the seats are held
    // (the first workflow task holds them by local activity). Past `answerBy` the create answers BOOKING_PROCESSING.
    const startOperation = new WithStartWorkflowOperation<typeof bookingWorkflow>(
      bookingWorkflowType,
      bookingStartOptions(start),
    );
    // Queueing (a burst, a slow database) used the whole answer time before anything was started: nothing exists
    // yet, so the caller may be told to retry, and no booking goes on behind an error answer. An id an earlier
    // create of it already gave out is started all the same.
    if (Date.now() >= answerBy && (await openHolds.releaseUnlessAcknowledged(bookingId))) {
      throw unavailable(
        'Too many bookings are being made right now; retry shortly',
        processingRetryAfterSeconds,
      );
    }
    const outcome = temporal.workflow
      .executeUpdateWithStart(createBookingUpdate, { startWorkflowOperation: startOperation })
      .then(
        (booking): { booking: BookingState } => ({ booking }),
        (error: unknown) => ({ error }),
      );
    return { sealedStart, startOperation, outcome };
  }

  /** The create's answer: the booking once held, its refusal, or BOOKING_PROCESSING when `answerBy` comes first. */
  async function answerCreate(
    actor: Actor,
    create: {
      bookingId: string;
      chosenBookingId: string | undefined;
      requestFingerprint: string;
      answerBy: number;
    } & StartedCreate,
  ): Promise<BookingView> {
    const { bookingId, chosenBookingId, requestFingerprint, answerBy, sealedStart, startOperation, outcome } =
      create;
    const answer = await settledBy(outcome, answerBy);
    if (answer === undefined) {
      // Pointed at the booking only when it is this request's (or its start is still on its way).
      if (chosenBookingId !== undefined) {
        await assertSameCreateRequest(bookingId, requestFingerprint, { notStartedYet: 'fine' });
      }
      // The id goes out: from here on the booking is a promise, kept by whoever finds it unstarted.
      await openHolds.acknowledge(bookingId);
      settleLateCreate(bookingId, sealedStart, startOperation, outcome);
      throw bookingProcessing(bookingId, processingRetryAfterSeconds);
    }
    if ('error' in answer && answer.error instanceof WorkflowExecutionAlreadyStartedError) {
      // The booking id names a workflow that has ended: answer what its first request got.
      await assertSameCreateRequest(bookingId, requestFingerprint);
      return answerRepeatedCreate(actor, bookingId);
    }
    // Only the request that started the workflow may hear its answer: a chosen booking id may have joined another's.
    if (chosenBookingId !== undefined && (await reachedStart(startOperation))) {
      await assertSameCreateRequest(bookingId, requestFingerprint);
    }
    if ('booking' in answer) return bookingViewOfSnapshot(answer.booking);
    if (answer.error instanceof WorkflowUpdateFailedError) {
      await openHolds.release(bookingId);
      throw domainErrorFromTemporal(answer.error);
    }
    // The workflow ended between its start and the update (a fast SEAT_UNAVAILABLE): answer its outcome.
    if (isWorkflowGone(answer.error)) return answerRepeatedCreate(actor, bookingId);
    if (!(await reachedStart(startOperation))) return answerFailedStart(bookingId, answer.error);
    // The workflow has started and goes on whatever failed between this process and Temporal since.
    throw bookingProcessing(bookingId, processingRetryAfterSeconds);
  }

  async function getBooking(actor: Actor, bookingIdInput: string): Promise<BookingView> {
    const bookingId = validateId(bookingIdInput, 'booking_id');
    const row = await findVisibleBooking(actor, bookingId);
    if (row !== undefined) return viewOf(row);
    return answerUnfinishedCreate(actor, bookingId, await findVisibleClaim(actor, bookingId));
  }

  async function listBookings(
    actor: Actor,
    request: PageRequest & { status?: BookingStatus },
  ): Promise<Page<BookingView>> {
    const status = validateBookingStatusFilter(request.status);
    const window = pageWindow(bookingListing, request, { status });
    const page = await readPage(
      window,
      bookingListQuery(database, {
        // Staff list every booking; customers only their own.
        ...(isStaff(actor) ? {} : { customerId: actor.userId.toLowerCase() }),
        status,
        ...(window.after === undefined ? {} : { after: window.after }),
      }),
    );
    const items = await bookingViews(database, page.rows, cipher);
    return { items, ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }) };
  }

  async function updateBooking(
    actor: Actor,
    bookingId: string,
    input: UpdateBookingInput,
    options: { expectedVersion?: number } = {},
  ): Promise<BookingView> {
    const { expectedVersion } = options;
    if (expectedVersion !== undefined && (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1)) {
      throw validationFailed([{ field: 'expected_version', message: 'must be a whole number from 1' }]);
    }
    return sendCommand(actor, bookingId, 'update', (handle) =>
      handle.executeUpdate(updateBookingUpdate, {
        args: [{ changes: input, ...(expectedVersion === undefined ? {} : { expectedVersion }) }],
      }),
    );
  }

  async function cancelBooking(
    actor: Actor,
    bookingId: string,
    input: { reason?: unknown },
  ): Promise<BookingView> {
    const command = validateCancelBooking(input);
    return sendCommand(
      actor,
      bookingId,
      'cancel',
      (handle) => handle.executeUpdate(cancelBookingUpdate, { args: [command] }),
      (unfinishedId) => cancelWhileCreating(actor, unfinishedId, command),
    );
  }

  async function confirmPayment(
    actor: Actor,
    bookingId: string,
    input: { paymentToken?: unknown },
    options: ConfirmPaymentOptions = {},
  ): Promise<BookingView> {
    const command = validateConfirmPayment(input);
    const attemptId =
      options.attemptId === undefined ? undefined : validateId(options.attemptId, 'attempt_id');
    return sendCommand(actor, bookingId, 'confirm-payment', (handle) =>
      handle.executeUpdate(confirmPaymentUpdate, {
        args: [command],
        // Temporal answers an update id it has seen with that update's outcome: a retried attempt joins the first
        // (still charging, or its result), never a second charge.
        ...(attemptId === undefined ? {} : { updateId: `confirm-payment-${attemptId}` }),
      }),
    );
  }

  return { createBooking, getBooking, listBookings, updateBooking, cancelBooking, confirmPayment };
}
