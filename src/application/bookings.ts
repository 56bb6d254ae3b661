// The booking application both fronts call: creates (create-booking.ts), reads from the read model, commands as updates.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal as temporalProto } from '@temporalio/proto';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Actor } from '../domain/actor';
import type { BookingState, BookingStatus } from '../domain/booking';
import {
  bookingProcessing,
  bookingStateConflict,
  cancellationRecorded,
  commandInProgress,
  commandNotStarted,
  holdExpired,
  notFound,
  validationFailed,
  type BookingCommandName,
  type DomainError,
} from '../domain/errors';
import { isTerminal } from '../domain/lifecycle';
import { segmentChangeTerms, type SegmentChangeTerms, type SegmentRequest } from '../domain/segments';
import { isStaff } from '../domain/roles';
import { tripCancelledRefusal } from '../domain/trip-cancellation';
import { taskQueues, type TaskQueueNames } from '../domain/task-queues';
import { assertQuoteUsable, type RefundQuote } from '../domain/refund-quotes';
import {
  validateBookingStatusFilter,
  validateCancelBooking,
  validateCancelPassengers,
  validateConfirmPayment,
  validateId,
  type UpdateBookingInput,
} from '../domain/validation';
import { readTripSegmentTerms } from '../db/bookable-trips';
import { openHoldClaimsFromConfig, type HoldClaim } from '../db/booking-hold-claims';
import {
  bookingListing,
  bookingViewOfSnapshot,
  bookingViews,
  findBookingRow,
  readBookingPage,
  type BookingRow,
  type BookingView,
} from '../db/booking-read-model';
import { pageWindow } from '../db/paging';
import { readTripCancellationMark } from '../db/trip-cancellations';
import {
  standaloneBackgroundFailureReporter,
  type ReportBackgroundFailure,
} from '../observability/background-failures';
import type { FieldCipher } from '../security/field-encryption';
import type { bookingWorkflow } from '../workflows/booking';
import {
  bookingWorkflowId,
  cancelBookingUpdate,
  cancelPassengersUpdate,
  confirmPaymentUpdate,
  updateBookingUpdate,
  type BookingTimings,
  type CancelPassengersRequest,
} from '../workflows/shared';
import { createSeatsInFlight } from './seats-in-flight';
import {
  answerEndedCreate,
  processingRetryAfterSeconds,
  viewOf as viewOfRow,
  type BookingContext,
} from './booking-context';
import { createBookingStarts, type StartOutcome } from './booking-starts';
import { answerByOf } from './command-options';
import { settledBy } from './create-answers';
import { createBooking } from './create-booking';
import type {
  BookingApplication,
  CommandOptions,
  ConfirmPaymentOptions,
  Page,
  PageRequest,
} from './interface';
import { domainErrorFromTemporal, isTemporalUnreachable, isWorkflowGone } from './temporal-outcomes';
import { createTripCancellationApplication } from './trip-cancellations';
import { readRefundQuote } from '../db/refund-quotes';
import type { WebhookDeliveryStarter } from '../ports/webhooks';

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
  /** Hears the outcomes of commands that finished after their answer was sent. */
  logger?: CommandLogger;
  /** Told of failures nobody waits for; by default they go to `logger` and a counter of their own. */
  reportFailure?: ReportBackgroundFailure;
  /** Wakes the delivery workflows of partner events an operator's trip cancellation records. */
  webhookDeliveries?: WebhookDeliveryStarter;
  /** Where a partial cancellation reads the refund quote it names; the stored quotes (db/refund-quotes) by default. */
  readQuote?: (quoteId: string) => Promise<RefundQuote | undefined>;
}

const admittedStage =
  temporalProto.api.enums.v1.UpdateWorkflowExecutionLifecycleStage
    .UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED;

/** Where late outcomes are told: the process's logger (pino's signature). */
interface CommandLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** What each command is called in BOOKING_STATE_CONFLICT errors, for a workflow that has already ended. */
type CommandAction = 'confirm-payment' | 'cancel' | 'update' | 'cancel-passengers';

const commandNames: Record<CommandAction, BookingCommandName> = {
  'confirm-payment': 'payment',
  update: 'change',
  cancel: 'cancellation',
  'cancel-passengers': 'cancellation',
};

export function createBookingApplication(dependencies: BookingApplicationDependencies): BookingApplication {
  const { config, database, temporal, cipher } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const queueNames = dependencies.taskQueues ?? taskQueues;
  const timings: BookingTimings = {
    holdDurationMs: config.booking.holdDurationSeconds * 1000,
    changeCutoffMs: config.booking.changeCutoffSeconds * 1000,
    noShowGraceMs: config.booking.noShowGraceSeconds * 1000,
    ...defaultActivityTimings,
    ...dependencies.timings,
  };
  const openHolds = openHoldClaimsFromConfig(config, database, {
    holdDurationMs: timings.holdDurationMs,
    now,
  });
  const starts = createBookingStarts({ temporal, cipher, claims: openHolds });
  const context: BookingContext = {
    config,
    database,
    temporal,
    cipher,
    holdClaims: openHolds,
    starts,
    seatsInFlight: createSeatsInFlight(),
    timings,
    taskQueues: queueNames,
    now,
    reportFailure: dependencies.reportFailure ?? standaloneBackgroundFailureReporter(dependencies.logger),
  };
  const viewOf = (row: BookingRow) => viewOfRow(context, row);

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

  /** A workflow that has ended cannot take commands; say why in the booking's own terms. */
  function endedBookingError(row: BookingRow, action: CommandAction): DomainError {
    const refused = action === 'cancel-passengers' ? 'cancel' : action;
    if (row.status === 'EXPIRED' && refused !== 'cancel') {
      return holdExpired((row.hold_expires_at ?? row.updated_at).toISOString());
    }
    return bookingStateConflict(row.status, refused);
  }

  /**
   * A change of a booking whose trip the operator cancelled is refused before anything moves (the cancellation
   * itself still goes through): the trip's mark in PostgreSQL is read by whichever process serves it. A repeat of a
   * change the workflow took before the mark still answers that change's outcome.
   */
  async function assertTripRuns(
    row: BookingRow,
    handle: WorkflowHandle<typeof bookingWorkflow>,
    updateId: string | undefined,
  ): Promise<void> {
    const trip = await readTripCancellationMark(database, row.trip_id);
    if (trip?.status !== 'CANCELLED') return;
    if (updateId !== undefined && (await updateWasSent(handle, updateId))) return;
    throw tripCancelledRefusal(row.trip_id, trip.cancellationReason);
  }

  /** Whether the workflow knows an update by this id (running or finished); its outcome is then the answer. */
  async function updateWasSent(
    handle: WorkflowHandle<typeof bookingWorkflow>,
    updateId: string,
  ): Promise<boolean> {
    try {
      await temporal.workflowService.pollWorkflowExecutionUpdate({
        namespace: temporal.options.namespace,
        updateRef: { workflowExecution: { workflowId: handle.workflowId }, updateId },
        identity: temporal.options.identity,
        // Admitted is the earliest stage: the poll answers at once for any update the workflow has.
        waitPolicy: { lifecycleStage: admittedStage },
      });
      return true;
    } catch (error) {
      if (isWorkflowGone(error)) return false;
      throw domainErrorFromTemporal(error);
    }
  }

  /**
   * Hands a command to the booking's workflow and answers by the command's answer time with what was done: the
   * booking; its refusal; BOOKING_PROCESSING naming the command when the workflow has it and is still at work (it
   * goes on, and a repeat of the request joins it by its update id); UNAVAILABLE only when nothing was sent.
   */
  async function sendCommand(
    actor: Actor,
    bookingIdInput: string,
    action: CommandAction,
    options: CommandOptions,
    send: (
      handle: WorkflowHandle<typeof bookingWorkflow>,
      row: BookingRow,
      named: { updateId?: string },
    ) => Promise<BookingState>,
    whileCreating: (bookingId: string) => Promise<BookingRow> = (bookingId) =>
      rowOnceCreated(actor, bookingId),
  ): Promise<BookingView> {
    const answerBy = answerByOf(options, config.booking.createAnswerTimeoutMs);
    // Temporal answers an update id it has seen with that update's outcome: a repeated request joins the first
    // (still running, or its result), never a second charge or change.
    const updateId =
      options.commandId === undefined
        ? undefined
        : `${action}-${validateId(options.commandId, 'command_id')}`;
    const bookingId = validateId(bookingIdInput, 'booking_id');
    const row = (await findVisibleBooking(actor, bookingId)) ?? (await whileCreating(bookingId));
    // Cancelling is idempotent (as the contracts promise): a repeated cancel answers the cancelled booking.
    if (action === 'cancel' && row.status === 'CANCELLED') return viewOf(row);
    if (isTerminal(row.status)) throw endedBookingError(row, action);
    const handle = temporal.workflow.getHandle<typeof bookingWorkflow>(bookingWorkflowId(row.id));
    // A payment's own check is ProcessPayment's, next to the charge: it costs the payment no extra round trip.
    if (action === 'update') await assertTripRuns(row, handle, updateId);
    // The last moment to honour the answer time by doing nothing: once sent, the command is seen through.
    if (Date.now() >= answerBy) throw commandNotStarted();
    const outcome = send(handle, row, updateId === undefined ? {} : { updateId }).then(
      (snapshot): { view: BookingView } => ({ view: bookingViewOfSnapshot(snapshot) }),
      (error: unknown) => ({ error }),
    );
    const answer = await settledBy(outcome, answerBy);
    if (answer === undefined) {
      reportLateOutcome(row.id, action, outcome);
      throw commandInProgress(row.id, commandNames[action], processingRetryAfterSeconds);
    }
    if ('view' in answer) return answer.view;
    const { error } = answer;
    if (isWorkflowGone(error)) {
      const latest = (await findBookingRow(database, row.id)) ?? row;
      if (action === 'cancel' && latest.status === 'CANCELLED') return viewOf(latest);
      throw isTerminal(latest.status) ? endedBookingError(latest, action) : notFound('Booking', row.id);
    }
    throw domainErrorFromTemporal(error);
  }

  /** Nobody waits for a late command's outcome any more: it is logged, and a repeat of the request answers it. */
  function reportLateOutcome(
    bookingId: string,
    action: CommandAction,
    outcome: Promise<{ view: BookingView } | { error: unknown }>,
  ): void {
    void outcome.then((late) => {
      const line = { bookingId, command: commandNames[action] };
      if ('view' in late) {
        dependencies.logger?.info({ ...line, status: late.view.status }, 'command finished after its answer');
        return;
      }
      const refusal = domainErrorFromTemporal(late.error);
      dependencies.logger?.warn(
        { ...line, code: refusal.code, message: refusal.message },
        'command failed after its answer',
      );
    });
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
    return answerEndedCreate(context, actor, bookingId);
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
    const page = await readBookingPage(database, window, {
      // Staff list every booking; customers only their own.
      ...(isStaff(actor) ? {} : { customerId: actor.userId.toLowerCase() }),
      status,
    });
    const items = await bookingViews(database, page.rows, cipher);
    return { items, ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }) };
  }

  async function updateBooking(
    actor: Actor,
    bookingId: string,
    input: UpdateBookingInput,
    options: CommandOptions & { expectedVersion?: number } = {},
  ): Promise<BookingView> {
    const { expectedVersion } = options;
    if (expectedVersion !== undefined && (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1)) {
      throw validationFailed([{ field: 'expected_version', message: 'must be a whole number from 1' }]);
    }
    return sendCommand(actor, bookingId, 'update', options, async (handle, row, named) => {
      const segmentChange = await segmentChangeOf(row, input);
      return handle.executeUpdate(updateBookingUpdate, {
        args: [
          {
            changes: input,
            ...(expectedVersion === undefined ? {} : { expectedVersion }),
            ...(segmentChange === undefined ? {} : { segmentChange }),
          },
        ],
        ...named,
      });
    });
  }

  /**
   * The terms of a segment change the update asks for (a boarding or alighting stop), from the trip's route and
   * fares; undefined when it asks for none. The workflow checks the rest of the update against the booking.
   */
  async function segmentChangeOf(
    row: BookingRow,
    input: UpdateBookingInput,
  ): Promise<SegmentChangeTerms | undefined> {
    const request = segmentRequestOf(input);
    if (request === undefined) return undefined;
    const terms = await readTripSegmentTerms(database, row.trip_id);
    if (terms === undefined) throw notFound('Trip', row.trip_id);
    return segmentChangeTerms({
      stops: terms.stops,
      current: row.segment ?? undefined,
      request,
      tripFarePrices: terms.farePrices,
      tripDeparture: terms.departureTime.toISOString(),
      now: now().toISOString(),
    });
  }

  async function cancelBooking(
    actor: Actor,
    bookingId: string,
    input: { reason?: unknown },
    options: CommandOptions = {},
  ): Promise<BookingView> {
    const command = validateCancelBooking(input);
    return sendCommand(
      actor,
      bookingId,
      'cancel',
      options,
      (handle, _row, named) => handle.executeUpdate(cancelBookingUpdate, { args: [command], ...named }),
      (unfinishedId) => cancelWhileCreating(actor, unfinishedId, command),
    );
  }

  /**
   * A quote named is read and checked against the booking as the read model has it now (its booking, passengers and
   * version, and its time); the workflow checks the version again when the update arrives.
   */
  async function cancelPassengers(
    actor: Actor,
    bookingId: string,
    input: { passengerIds?: unknown; quoteId?: unknown; reason?: unknown },
    options: CommandOptions = {},
  ): Promise<BookingView> {
    const { quoteId, ...command } = validateCancelPassengers(input, {
      maxPassengers: config.booking.maxPassengersPerBooking,
    });
    return sendCommand(actor, bookingId, 'cancel-passengers', options, async (handle, row, named) => {
      const request: CancelPassengersRequest = { ...command };
      if (quoteId !== undefined) {
        const quote = await (dependencies.readQuote ?? ((id) => readRefundQuote(database, id)))(quoteId);
        if (quote === undefined) throw notFound('Refund quote', quoteId);
        assertQuoteUsable(quote, {
          bookingId: row.id,
          passengerIds: command.passengerIds,
          now: now().toISOString(),
          bookingVersion: row.version,
        });
        request.quote = quote;
      }
      return handle.executeUpdate(cancelPassengersUpdate, { args: [request], ...named });
    });
  }

  async function confirmPayment(
    actor: Actor,
    bookingId: string,
    input: { paymentToken?: unknown; paymentMethod?: unknown },
    options: ConfirmPaymentOptions = {},
  ): Promise<BookingView> {
    const command = validateConfirmPayment(input);
    // The payment attempt is the command: a retried attempt joins the first, never a second charge.
    const { attemptId, ...timing } = options;
    return sendCommand(
      actor,
      bookingId,
      'confirm-payment',
      { ...timing, ...(attemptId === undefined ? {} : { commandId: attemptId }) },
      (handle, _row, named) => handle.executeUpdate(confirmPaymentUpdate, { args: [command], ...named }),
    );
  }

  return {
    ...createTripCancellationApplication({
      database: dependencies.database,
      temporal: dependencies.temporal,
      ...(dependencies.taskQueues === undefined ? {} : { taskQueues: dependencies.taskQueues }),
      ...(dependencies.now === undefined ? {} : { now: dependencies.now }),
      answerTimeoutMs: config.booking.createAnswerTimeoutMs,
      ...(dependencies.logger === undefined ? {} : { logger: dependencies.logger }),
      ...(dependencies.webhookDeliveries === undefined
        ? {}
        : { webhookDeliveries: dependencies.webhookDeliveries }),
    }),
    createBooking: (actor, input, options) => createBooking(context, actor, input, options),
    getBooking,
    listBookings,
    updateBooking,
    cancelBooking,
    cancelPassengers,
    confirmPayment,
  };
}

/**
 * The stops an update names for a segment change, read as the update's validation reads them; undefined when it
 * names none. A malformed code is left for that validation to refuse, naming the field.
 */
function segmentRequestOf(input: UpdateBookingInput): SegmentRequest | undefined {
  const code = (value: unknown) =>
    typeof value === 'string' && /^[A-Z0-9]{2,12}$/.test(value) ? value : undefined;
  const boardingStopCode = code(input.boardingStop);
  const alightingStopCode = code(input.alightingStop);
  if (boardingStopCode === undefined && alightingStopCode === undefined) return undefined;
  return {
    ...(boardingStopCode === undefined ? {} : { boardingStopCode }),
    ...(alightingStopCode === undefined ? {} : { alightingStopCode }),
  };
}
