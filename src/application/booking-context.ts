// What the booking application's operations share: their dependencies, and the answers creates and reads both give.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Actor } from '../domain/actor';
import { DomainError, notFound } from '../domain/errors';
import type { TaskQueueNames } from '../domain/task-queues';
import { bookingViews, findBookingRow, type BookingRow, type BookingView } from '../db/booking-read-model';
import type { OpenHoldClaims } from '../db/booking-hold-claims';
import type { ReportBackgroundFailure } from '../observability/background-failures';
import type { FieldCipher } from '../security/field-encryption';
import type { bookingWorkflow } from '../workflows/booking';
import { bookingWorkflowId, type BookingTimings } from '../workflows/shared';
import type { SeatsInFlight } from './seats-in-flight';
import type { BookingStarts } from './booking-starts';

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
  /** Told of failures nobody waits for (a create's settle after its answer): logged and counted. */
  reportFailure: ReportBackgroundFailure;
}

export async function viewOf(context: BookingContext, row: BookingRow): Promise<BookingView> {
  const [view] = await bookingViews(context.database, [row], context.cipher);
  return view;
}

/** The booking as its customer sees it, once its row exists; undefined before that or for anyone else. */
export async function ownBookingView(
  context: BookingContext,
  actor: Actor,
  bookingId: string,
): Promise<BookingView | undefined> {
  const row = await findBookingRow(context.database, bookingId);
  return row !== undefined && row.customer_id === actor.userId.toLowerCase()
    ? viewOf(context, row)
    : undefined;
}

/** A booking id whose workflow has ended: answer what the first request got. */
export async function answerEndedCreate(
  context: BookingContext,
  actor: Actor,
  bookingId: string,
): Promise<BookingView> {
  const own = await ownBookingView(context, actor, bookingId);
  if (own !== undefined) return own;
  const outcome = await context.temporal.workflow
    .getHandle<typeof bookingWorkflow>(bookingWorkflowId(bookingId))
    .result();
  if (outcome.outcome === 'NOT_BOOKED') {
    await context.holdClaims.release(bookingId);
    throw DomainError.fromJSON(outcome.error);
  }
  throw notFound('Booking', bookingId);
}
