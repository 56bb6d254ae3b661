// What the history recordings share: the recorded paths' description, direct workflow starts, a payment held mid-way.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { bookingStartOptions } from '../../src/application/booking-starts';
import type { BookingApplication } from '../../src/application/interface';
import type { Actor } from '../../src/domain/actor';
import type { bookingWorkflow } from '../../src/workflows/booking';
import {
  bookingWorkflowId,
  bookingWorkflowType,
  createBookingUpdate,
  type BookingWorkflowInput,
} from '../../src/workflows/shared';
import type { SagaEnvironment } from '../../test/support/saga';

/** The rows of the lifecycle table in docs/design.md ("Lifecycle"), by the names its first column gives them. */
export type LifecycleRow =
  | 'create'
  | 'create-seat-taken'
  | 'payment-approved'
  | 'payment-declined'
  | 'hold-expired'
  | 'cancel-pending'
  | 'cancel-while-being-made'
  | 'cancel-confirmed'
  | 'cancel-passengers'
  | 'change'
  | 'change-segment'
  | 'boarding-scan'
  | 'no-shows'
  | 'trip-cancelled'
  | 'payment-after-trip-cancelled'
  | 'charge-under-way-at-trip-cancel'
  | 'create-after-trip-cancelled'
  | 'payment-requires-action'
  | 'payment-action-succeeded'
  | 'payment-action-failed'
  | 'late-money-kept'
  | 'late-money-refunded'
  | 'cancel-during-payment-action'
  | 'payment-incident'
  | 'completed';

/** One history file as the manifest (index.json) lists it. */
export interface HistoryEntry {
  file: string;
  workflowType: string;
  /** The path the workflow took, in words: its steps and compensations. */
  path: string;
  rows: LifecycleRow[];
  /** The patch markers the history carries: the new branches it took. */
  patches: string[];
}

/** A workflow run a recording produced, to be written as `<name>.json`. */
export interface RecordedRun extends Omit<HistoryEntry, 'file'> {
  name: string;
  workflowId: string;
  /** A particular run (a workflow that continued as new); the latest when absent. */
  runId?: string;
}

export interface RecordingContext {
  saga: SagaEnvironment;
  /** A customer of the recording's own: the paths run at once, and one customer's open holds are capped. */
  newCustomer(): Promise<Actor>;
  agent: Actor;
  /** The saga's application with a hold of a few seconds. */
  shortHold: BookingApplication;
}

export function bookingHandle(saga: SagaEnvironment, bookingId: string) {
  return saga.client.workflow.getHandle<typeof bookingWorkflow>(bookingWorkflowId(bookingId));
}

/**
 * The start input of a booking the application made, for a new booking id on `seatNumbers`: how a workflow is
 * started directly for what the application never starts itself (a seat taken between its check and the hold,
 * a cancel that arrives before the start, a fare rule the application does not sell).
 */
export async function inputLike(
  saga: SagaEnvironment,
  templateBookingId: string,
  seatNumbers: readonly string[],
): Promise<BookingWorkflowInput> {
  const history = await bookingHandle(saga, templateBookingId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const template = await decodeFromPayloadsAtIndex<BookingWorkflowInput>(
    saga.client.options.loadedDataConverter,
    0,
    started?.input?.payloads,
  );
  return {
    ...template,
    bookingId: randomUUID(),
    passengers: template.passengers.map((passenger, index) => ({
      ...passenger,
      seatNumber: seatNumbers[index],
    })),
    passengerIds: template.passengers.map(() => randomUUID()),
  };
}

export function startOptionsFor(input: BookingWorkflowInput) {
  return bookingStartOptions({ input, requestFingerprint: `recorded-${input.bookingId}` });
}

/** Starts a booking's workflow as the create does and waits for its answer, seats held or not. */
export async function startDirectly(saga: SagaEnvironment, input: BookingWorkflowInput): Promise<string> {
  const handle = await saga.client.workflow.start<typeof bookingWorkflow>(
    bookingWorkflowType,
    startOptionsFor(input),
  );
  await handle
    .executeUpdate(createBookingUpdate, { args: [{ requestFingerprint: `recorded-${input.bookingId}` }] })
    .catch(() => undefined);
  return input.bookingId;
}

const chargesTable = 'payment_simulator.charges';

/**
 * Holds every new charge at the payment gateway's ledger until `release`: a ProcessPayment that has passed its
 * checks waits there, so something can happen between its checks and its charge's answer (a trip's mark, a hold
 * that lapses). `whileHeld` gets a function that waits until a charge is waiting.
 */
export async function withChargesHeld<T>(
  database: Knex,
  whileHeld: (chargeWaiting: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const transaction = await database.transaction();
  try {
    await transaction.raw(`LOCK TABLE ${chargesTable} IN EXCLUSIVE MODE`);
    return await whileHeld(() => untilChargeWaits(database));
  } finally {
    await transaction.commit();
  }
}

async function untilChargeWaits(database: Knex): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const waiting: { rows: { count: string }[] } = await database.raw(
      `SELECT count(*) AS count FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'payment_simulator' AND c.relname = 'charges' AND NOT l.granted`,
    );
    if (Number(waiting.rows[0].count) > 0) return;
    if (Date.now() > deadline) throw new Error('no charge came to the held ledger');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
