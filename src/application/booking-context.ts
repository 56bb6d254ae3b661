// What the booking application's operations share: their dependencies, and the answers creates and reads both give.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Actor } from '../domain/actor';
import { DomainError, idempotencyKeyReused, notFound } from '../domain/errors';
import type { TaskQueueNames } from '../domain/task-queues';
import { bookingViews, findBookingRow, type BookingRow, type BookingView } from '../db/booking-read-model';
import type { OpenHoldClaims } from '../db/booking-hold-claims';
import type { FieldCipher } from '../security/field-encryption';
import type { bookingWorkflow } from '../workflows/booking';
import { bookingWorkflowId, createRequestMemoKey, type BookingTimings } from '../workflows/shared';
import type { SeatsInFlight } from './admission';
import type { BookingStarts } from './booking-starts';
import { domainErrorFromTemporal, isWorkflowGone } from './temporal-outcomes';

/** How long a client is told to wait before reading a booking whose seats are still being held. */
export const processingRetryAfterSeconds = 1;

export interface BookingContext {
  config: Pick<Config, 'booking' | 'idempotency'>;
  database: Knex;
  temporal: Client;
  cipher: FieldCipher;
  holdClaims: OpenHoldClaims;
  starts: BookingStarts;
  seatsInFlight: SeatsInFlight;
  timings: BookingTimings;
  taskQueues: TaskQueueNames;
  now: () => Date;
}

export async function viewOf(context: BookingContext, row: BookingRow): Promise<BookingView> {
  const [view] = await bookingViews(context.database, [row], context.cipher);
  return view;
}

/** A booking id whose workflow has ended: answer what the first request got. */
export async function answerEndedCreate(
  context: BookingContext,
  actor: Actor,
  bookingId: string,
): Promise<BookingView> {
  const row = await findBookingRow(context.database, bookingId);
  if (row !== undefined && row.customer_id === actor.userId.toLowerCase()) return viewOf(context, row);
  const outcome = await context.temporal.workflow
    .getHandle<typeof bookingWorkflow>(bookingWorkflowId(bookingId))
    .result();
  if (outcome.outcome === 'NOT_BOOKED') {
    await context.holdClaims.release(bookingId);
    throw DomainError.fromJSON(outcome.error);
  }
  throw notFound('Booking', bookingId);
}

/**
 * The fingerprint a booking's workflow was started with, asked of Temporal, for a create that cannot hear it from
 * the create update's validator (its workflow has ended, or its answer came too late): another request's booking
 * id is refused, not joined.
 */
export async function assertStartedBySameRequest(
  context: BookingContext,
  bookingId: string,
  requestFingerprint: string,
  options: { notStartedYet?: 'fine' } = {},
): Promise<void> {
  let memo: Record<string, unknown> | undefined;
  try {
    ({ memo } = await context.temporal.workflow.getHandle(bookingWorkflowId(bookingId)).describe());
  } catch (error) {
    if (options.notStartedYet === 'fine' && isWorkflowGone(error)) return;
    throw domainErrorFromTemporal(error);
  }
  const recorded = memo?.[createRequestMemoKey];
  if (typeof recorded === 'string' && recorded !== requestFingerprint) throw idempotencyKeyReused();
}
