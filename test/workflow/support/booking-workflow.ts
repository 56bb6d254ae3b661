// The booking workflow under a real worker on Temporal's time-skipping test server, its activities in-memory fakes.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import {
  businessFailure,
  type BookingActivities,
  type CancelPaymentInput,
  type ProcessPaymentAnswer,
  type ProcessPaymentInput,
  type SettlePaymentInput,
  type SettlePaymentResult,
  type RefundPaymentInput,
  type ReserveSeatsInput,
  type PartnerWebhookActivities,
  type PaymentReconciliationActivities,
  type TripCancellationActivities,
} from '../../../src/activities/interface';
import type { BookingState, FareClass } from '../../../src/domain/booking';
import { holdExpired, paymentDeclined, seatUnavailable } from '../../../src/domain/errors';
import { defaultRefundRule } from '../../../src/domain/fares';
import { workflowSpanSinks } from '../../../src/observability/tracing-temporal';
import type { bookingWorkflow } from '../../../src/workflows/booking';
import {
  allSearchAttributes,
  bookingSearchAttributes,
  bookingStateQuery,
  bookingWorkflowId,
  bookingWorkflowType,
  createBookingUpdate,
  requestCancellationSignal,
  type BookingTimings,
  type BookingWorkflowInput,
  type CancelBookingRequest,
} from '../../../src/workflows/shared';
import { farePrices } from '../../support/booking-states';

/** The card token the fake gateway declines; any other is approved. */
export const declinedCard = 'tok_declined';

/**
 * The card token whose payment the fake gateway leaves open for a 3-D Secure challenge (when the workflow allows
 * it), until the test plays the customer with `finishChallenge`.
 */
export const challengedCard = 'tok_threeDSecure';

/** Where a fake open payment stands: the customer's challenge, then its outcome. */
export type FakeIntentState = 'requires_action' | 'succeeded' | 'failed' | 'canceled';

const dayMs = 24 * 60 * 60 * 1000;

/** Short retries and timeouts, so a path that fails shows it in seconds. */
const fastTimings: BookingTimings = {
  holdDurationMs: 60_000,
  changeCutoffMs: 0,
  activityStartToCloseMs: 5_000,
  activityRetryInitialIntervalMs: 50,
  activityRetryMaximumIntervalMs: 200,
  // Boarding closes a second after departure, so a booking that departs completes within the test.
  noShowGraceMs: 1_000,
};

const seatClasses: Record<string, FareClass> = {
  '1A': 'PREMIUM',
  '1B': 'PREMIUM',
  '2A': 'STANDARD',
  '2B': 'STANDARD',
  '2C': 'STANDARD',
  '3A': 'STANDARD',
};

export interface ActivityCall {
  activity: string;
  input: Record<string, unknown>;
}

/** How the fakes answer one booking's activities. */
export interface FakeOutcomes {
  /** The creating ReserveSeats finds a seat taken. */
  seatTaken?: boolean;
  /** ConfirmSeats finds the hold gone (the seats went to someone else). */
  holdLapsedAtConfirmation?: boolean;
  /** The gateway approves this many charges and declines every later one. */
  approvedCharges?: number;
  /** A ReserveSeats that holds the booking's seats again (no booking snapshot) finds one taken. */
  seatTakenOnHoldAgain?: boolean;
  /** The processor refuses every refund for good (a closed card account). */
  refundsRefused?: boolean;
}

interface FakeBooking {
  outcomes: FakeOutcomes;
  calls: ActivityCall[];
  charges: number;
  /** Open payments by intent id. */
  intents: Map<string, FakeIntentState>;
}

export interface BookingOptions {
  seats?: string[];
  contactPhone?: string;
  departureInMs?: number;
  timings?: Partial<BookingTimings>;
  outcomes?: FakeOutcomes;
  /** Starts the workflow with a RequestCancellation signal, as a cancel during creation does. */
  cancelWithStart?: CancelBookingRequest;
  /** The stops the passengers board and alight at; the whole route when absent. */
  segment?: BookingWorkflowInput['segment'];
}

export interface TestBooking {
  bookingId: string;
  input: BookingWorkflowInput;
  handle: WorkflowHandle<typeof bookingWorkflow>;
  /** Every activity call so far, in order: `[activity type, input]`. */
  calls: ActivityCall[];
}

/**
 * One time-skipping server and one worker for a test file, every activity family on one task queue. Its own server,
 * because skipping time is global to a server: another file's timers must not move with this one's. Awaiting a
 * workflow's result skips time; awaiting an update's result does not (the test server does not skip for updates),
 * so a test whose update answers only after a timer fires must skip that time itself (TestWorkflowEnvironment.sleep).
 */
export class BookingWorkflowTier {
  private readonly bookings = new Map<string, FakeBooking>();
  private readonly started: TestBooking[] = [];
  private readonly taskQueue = `workflow-tier-${randomUUID()}`;
  private environment: TestWorkflowEnvironment | undefined;
  private worker: Worker | undefined;
  private running: Promise<void> | undefined;
  client!: Client;

  async start(): Promise<void> {
    const server = process.env.TEMPORAL_TEST_SERVER;
    const codePath = process.env.BOOKING_WORKFLOW_BUNDLE;
    if (server === undefined || codePath === undefined) {
      throw new Error(
        'run the workflow tier through jest --selectProjects workflow: its global setup is missing',
      );
    }
    this.environment = await startTimeSkippingServer(server);
    // The application's search attributes, registered as the dev server's --search-attribute flags would.
    await this.environment.connection.operatorService.addSearchAttributes({
      namespace: this.environment.namespace ?? 'default',
      searchAttributes: Object.fromEntries(
        allSearchAttributes.map(({ name, type }) => [
          name,
          temporal.api.enums.v1.IndexedValueType[`INDEXED_VALUE_TYPE_${type}`],
        ]),
      ),
    });
    this.client = this.environment.client;
    this.worker = await Worker.create({
      connection: this.environment.nativeConnection,
      taskQueue: this.taskQueue,
      workflowBundle: { codePath },
      activities: this.fakeActivities(),
      sinks: workflowSpanSinks(),
    });
    this.running = this.worker.run();
  }

  async stop(): Promise<void> {
    await Promise.allSettled(
      this.started.map((booking) => booking.handle.terminate('the test is over').catch(() => undefined)),
    );
    this.worker?.shutdown();
    await this.running;
    await this.environment?.teardown();
  }

  /** Moves the server's clock on: timers due meanwhile fire (an update's answer never skips time by itself). */
  async skip(ms: number): Promise<void> {
    await this.environment?.sleep(ms);
  }

  /** The server's clock, which time skipping moves ahead of the machine's. */
  private async now(): Promise<number> {
    return this.environment === undefined ? Date.now() : await this.environment.currentTimeMs();
  }

  /** Starts a booking's workflow the way the application does (search attributes included), without creating it yet. */
  async startBooking(options: BookingOptions = {}): Promise<TestBooking> {
    const bookingId = randomUUID();
    const seats = options.seats ?? ['2A'];
    const now = await this.now();
    const input: BookingWorkflowInput = {
      bookingId,
      customerId: randomUUID(),
      tripId: randomUUID(),
      routeId: 'route-lisbon-porto',
      departureTime: new Date(now + (options.departureInMs ?? 30 * dayMs)).toISOString(),
      originTimeZone: 'Europe/Lisbon',
      passengers: seats.map((seatNumber, index) => ({
        firstName: 'Ana',
        lastName: `Silva ${index + 1}`,
        email: 'ana@example.com',
        seatNumber,
        fareClass: seatClasses[seatNumber],
      })),
      passengerIds: seats.map(() => randomUUID()),
      contactEmail: 'ana@example.com',
      ...(options.contactPhone === undefined ? {} : { contactPhone: options.contactPhone }),
      ...(options.segment === undefined ? {} : { segment: options.segment }),
      farePrices,
      seatClasses,
      refundRule: defaultRefundRule,
      maxPassengers: 9,
      timings: { ...fastTimings, ...options.timings },
      taskQueues: {
        bookings: this.taskQueue,
        seats: this.taskQueue,
        payments: this.taskQueue,
        notifications: this.taskQueue,
      },
    };
    const fake: FakeBooking = {
      outcomes: options.outcomes ?? {},
      calls: [],
      charges: 0,
      intents: new Map(),
    };
    this.bookings.set(bookingId, fake);
    const startOptions = {
      workflowId: bookingWorkflowId(bookingId),
      taskQueue: this.taskQueue,
      args: [input] as [BookingWorkflowInput],
      typedSearchAttributes: bookingSearchAttributes({ ...input, status: 'PENDING_PAYMENT' }),
    };
    const handle =
      options.cancelWithStart === undefined
        ? await this.client.workflow.start<typeof bookingWorkflow>(bookingWorkflowType, startOptions)
        : await this.client.workflow.signalWithStart<typeof bookingWorkflow, [CancelBookingRequest]>(
            bookingWorkflowType,
            { ...startOptions, signal: requestCancellationSignal, signalArgs: [options.cancelWithStart] },
          );
    const booking = { bookingId, input, handle, calls: fake.calls };
    this.started.push(booking);
    return booking;
  }

  /** Starts a booking and creates it: its seats held, PENDING_PAYMENT. */
  async createBooking(options: BookingOptions = {}): Promise<TestBooking & { created: BookingState }> {
    const booking = await this.startBooking(options);
    const created = await booking.handle.executeUpdate(createBookingUpdate, {
      args: [{ requestFingerprint: 'workflow-tier' }],
    });
    return { ...booking, created };
  }

  /** The customer passes or fails the challenge of an open payment (what Stripe.js does, then the processor). */
  finishChallenge(booking: Pick<TestBooking, 'bookingId'>, intentId: string, outcome: FakeIntentState): void {
    const fake = this.bookings.get(booking.bookingId);
    if (fake?.intents.has(intentId) !== true) throw new Error(`no open payment ${intentId}`);
    fake.intents.set(intentId, outcome);
  }

  /** The booking's own activities; the trip-cancellation, reconciliation and webhook workflows' are not the booking's. */
  private fakeActivities(): Omit<
    BookingActivities,
    keyof TripCancellationActivities | keyof PaymentReconciliationActivities | keyof PartnerWebhookActivities
  > {
    const fake =
      <Input extends object, Result>(
        activity: string,
        answer: (booking: FakeBooking, input: Input) => Result,
      ) =>
      (input: Input): Promise<Result> => {
        const fields = input as Record<string, unknown>;
        const bookingId = String(fields.bookingId ?? fields.id);
        const booking = this.bookings.get(bookingId);
        if (booking === undefined) return Promise.reject(new Error(`no fake booking ${bookingId}`));
        booking.calls.push({ activity, input: fields });
        // A business outcome the answer throws reaches the workflow as the activity's failure.
        return new Promise((resolve) => resolve(answer(booking, input)));
      };
    const nothing = () => undefined;
    return {
      ReserveSeats: fake('ReserveSeats', (booking, input: ReserveSeatsInput) => {
        const taken =
          input.booking === undefined
            ? booking.outcomes.seatTakenOnHoldAgain === true
            : booking.outcomes.seatTaken === true;
        if (taken) throw businessFailure(seatUnavailable(input.seats.map((seat) => seat.seatNumber)));
      }),
      ConfirmSeats: fake('ConfirmSeats', (booking) => {
        if (booking.outcomes.holdLapsedAtConfirmation === true) {
          throw businessFailure(holdExpired(new Date().toISOString()));
        }
      }),
      ReleaseSeats: fake('ReleaseSeats', nothing),
      IssueTickets: fake('IssueTickets', nothing),
      ProcessPayment: fake('ProcessPayment', (booking, input: ProcessPaymentInput): ProcessPaymentAnswer => {
        booking.charges += 1;
        if (
          input.paymentToken === declinedCard ||
          booking.charges > (booking.outcomes.approvedCharges ?? Infinity)
        ) {
          throw businessFailure(paymentDeclined('insufficient funds'));
        }
        if (input.paymentToken === challengedCard) {
          if (input.allowAction !== true) throw businessFailure(paymentDeclined('authentication_required'));
          const intentId = `pi-${input.idempotencyKey}`;
          booking.intents.set(intentId, 'requires_action');
          return {
            open: {
              status: 'REQUIRES_ACTION',
              intentId,
              nextActionType: 'use_stripe_sdk',
              clientSecret: `${intentId}_secret_test`,
            },
            amount: input.amount,
          };
        }
        return {
          transactionId: `txn-${input.idempotencyKey}`,
          methodMasked: 'visa •••• 4242',
          amount: input.amount,
        };
      }) as BookingActivities['ProcessPayment'],
      CheckPayment: fake('CheckPayment', (booking, input: SettlePaymentInput) =>
        fakeSettlement(booking.intents.get(input.intentId), input),
      ),
      CancelPayment: fake('CancelPayment', (booking, input: CancelPaymentInput) => {
        if (booking.intents.get(input.intentId) === 'requires_action') {
          booking.intents.set(input.intentId, 'canceled');
        }
        return fakeSettlement(booking.intents.get(input.intentId), input);
      }),
      ReportPaymentIncident: fake('ReportPaymentIncident', nothing),
      RefundPayment: fake('RefundPayment', (booking, input: RefundPaymentInput) => {
        if (booking.outcomes.refundsRefused === true) {
          throw ApplicationFailure.nonRetryable('the card account is closed', 'REFUND_REJECTED');
        }
        return { refundId: `refund-${input.idempotencyKey}`, amount: input.amount };
      }),
      SendEmailNotification: fake('SendEmailNotification', nothing),
      SendSMSNotification: fake('SendSMSNotification', nothing),
      RecordBooking: fake('RecordBooking', nothing),
    };
  }
}

function fakeSettlement(state: FakeIntentState | undefined, input: SettlePaymentInput): SettlePaymentResult {
  switch (state) {
    case 'requires_action':
      return { outcome: 'OPEN', open: { status: 'REQUIRES_ACTION', intentId: input.intentId } };
    case 'succeeded':
      return {
        outcome: 'APPROVED',
        transactionId: input.intentId,
        methodMasked: 'visa •••• 3155',
        amount: input.amount,
      };
    case 'failed':
      return { outcome: 'DECLINED', reason: 'authentication_failed' };
    case 'canceled':
      return { outcome: 'CANCELED' };
    case undefined:
      throw new Error(`no payment ${input.intentId}`);
  }
}

/**
 * The SDK gives a server five seconds to answer and then kills it; a JVM on a busy machine can take longer to start.
 * Each try is a new process on a new port, so a slow start is retried, not waited on.
 */
async function startTimeSkippingServer(executable: string): Promise<TestWorkflowEnvironment> {
  const tries = 3;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({
        server: { executable: { type: 'existing-path', path: executable } },
      });
    } catch (error) {
      const slowStart = error instanceof Error && /did not start within/.test(error.message);
      if (!slowStart || attempt === tries) throw error;
    }
  }
}

/** Activity types in call order, leaving out the read-model writes every transition makes. */
export function activitiesOf(booking: Pick<TestBooking, 'calls'>): string[] {
  return booking.calls.map((call) => call.activity).filter((activity) => activity !== 'RecordBooking');
}

/** The business error code an update was answered with. */
export async function updateErrorCode(update: Promise<unknown>): Promise<string> {
  try {
    await update;
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
      return error.cause.type ?? 'no type';
    }
    throw error;
  }
  throw new Error('the update was accepted');
}

export function stateOf(booking: Pick<TestBooking, 'handle'>): Promise<BookingState | undefined> {
  return booking.handle.query(bookingStateQuery);
}

/** Core's warnings about workflows the tests end on purpose are noise here. */
export function quietRuntime(): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
    });
  } catch {
    // Installed already by another file in this jest worker.
  }
}
