// Trip cancellation for both fronts: mark the trip cancelled, start its one cancellation workflow, report its progress.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Actor } from '../domain/actor';
import { commandNotStarted, notFound, permissionDenied } from '../domain/errors';
import { isStaff } from '../domain/roles';
import { taskQueues as standardTaskQueues, type TaskQueueNames } from '../domain/task-queues';
import {
  assertTripCancellable,
  emptyCounts,
  remainingCount,
  validateCancelTrip,
  type FailedBookingCancellation,
  type TripCancellationCounts,
} from '../domain/trip-cancellation';
import { validateId } from '../domain/validation';
import {
  countOpenBookingsOfTrip,
  markTripCancelled,
  readTripCancellationMark,
  TimedOutMark,
  type TripCancellationMark,
} from '../db/trip-cancellations';
import {
  defaultTripCancellationTuning,
  tripCancellationProgressQuery,
  tripCancellationSummary,
  tripCancellationWorkflowId,
  tripCancellationWorkflowType,
  type TripCancellationInput,
  type TripCancellationProgress,
  type TripCancellationTuning,
} from '../workflows/trip-cancellation-shared';
import { dispatchRecordedEvents } from '../db/partner-events';
import type { WebhookDeliveryStarter } from '../ports/webhooks';
import { settledBy } from './create-answers';
import { answerByOf, type AnswerTiming } from './command-options';
import { domainErrorFromTemporal, isWorkflowGone } from './temporal-outcomes';

export interface TripCancellationView {
  tripId: string;
  reason: string;
  cancelledAt: string;
  /** RUNNING while bookings are being cancelled, FINISHED once every open booking was handled. */
  status: 'RUNNING' | 'FINISHED';
  counts: TripCancellationCounts & { done: number; remaining: number };
  /** Bookings the cancellation could not end, for an operator to act on. */
  failedBookings: FailedBookingCancellation[];
}

export interface TripCancellationApplication {
  /**
   * Marks the trip cancelled (from then on no seat of it can be held or booked) and starts its cancellation.
   * Calling again answers the same cancellation (its first reason); a departed trip is BOOKING_STATE_CONFLICT.
   */
  cancelTrip(
    actor: Actor,
    tripId: string,
    input: { reason?: unknown } | undefined,
    options?: AnswerTiming,
  ): Promise<TripCancellationView>;
  /** The cancellation's status and counts; NOT_FOUND for an unknown trip or one that was not cancelled. */
  getTripCancellation(actor: Actor, tripId: string): Promise<TripCancellationView>;
}

export interface TripCancellationApplicationDependencies {
  database: Knex;
  temporal: Client;
  taskQueues?: TaskQueueNames;
  tuning?: Partial<TripCancellationTuning>;
  now?: () => Date;
  /** How long after its arrival a cancel is answered: the mark is made by then, or not at all. */
  answerTimeoutMs: number;
  /** Hears a start or a progress read that failed after the mark (the answer is the mark's then). */
  logger?: { warn(fields: object, message: string): void };
  /** Wakes the delivery workflows of the trip.cancelled partner event; the sweep does it when absent. */
  webhookDeliveries?: WebhookDeliveryStarter;
}

function viewOf(progress: TripCancellationProgress): TripCancellationView {
  return {
    tripId: progress.tripId,
    reason: progress.reason,
    cancelledAt: progress.cancelledAt,
    status: progress.status,
    counts: { ...progress.counts, done: progress.done, remaining: progress.remaining },
    failedBookings: progress.failures,
  };
}

export function createTripCancellationApplication(
  dependencies: TripCancellationApplicationDependencies,
): TripCancellationApplication {
  const { database, temporal } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const tuning = { ...defaultTripCancellationTuning, ...dependencies.tuning };
  const queues = dependencies.taskQueues ?? standardTaskQueues;

  function assertOperator(actor: Actor): void {
    // The contracts let only agents and admins call these; the application keeps the rule for any other caller.
    if (!isStaff(actor)) throw permissionDenied('Only agents and admins cancel trips');
  }

  function inputOf(tripId: string, mark: TripCancellationMark, openAtMark?: number): TripCancellationInput {
    return {
      tripId,
      reason: mark.cancellationReason ?? 'Cancelled by the operator',
      cancelledAt: (mark.cancelledAt ?? now()).toISOString(),
      tuning,
      taskQueues: queues,
      ...(openAtMark === undefined ? {} : { openAtMark }),
    };
  }

  /** The cancellation as its mark left it: every booking open then still to handle. */
  function viewAtMark(tripId: string, mark: TripCancellationMark, openAtMark: number): TripCancellationView {
    const input = inputOf(tripId, mark);
    const counts = emptyCounts(openAtMark);
    return {
      tripId,
      reason: input.reason,
      cancelledAt: input.cancelledAt,
      status: 'RUNNING',
      counts: { ...counts, done: 0, remaining: remainingCount(counts, false) },
      failedBookings: [],
    };
  }

  /**
   * Starts the trip's one cancellation workflow unless it exists, running or finished: a mark whose start was lost
   * (the process died in between) is started by the next call or read.
   */
  async function ensureStarted(
    tripId: string,
    mark: TripCancellationMark,
    openAtMark?: number,
  ): Promise<void> {
    const input = inputOf(tripId, mark, openAtMark);
    try {
      await temporal.workflow.start(tripCancellationWorkflowType, {
        workflowId: tripCancellationWorkflowId(tripId),
        taskQueue: queues.bookings,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        staticSummary: tripCancellationSummary(tripId, input.reason),
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      throw domainErrorFromTemporal(error);
    }
  }

  async function progressOf(tripId: string, mark: TripCancellationMark): Promise<TripCancellationView> {
    const handle = temporal.workflow.getHandle(tripCancellationWorkflowId(tripId));
    try {
      return viewOf(await handle.query(tripCancellationProgressQuery));
    } catch (error) {
      if (!isWorkflowGone(error)) throw domainErrorFromTemporal(error);
    }
    // Not there (yet): the start was just lost; every booking listed at the mark is still to handle.
    return viewAtMark(tripId, mark, await countOpenBookingsOfTrip(database, tripId));
  }

  return {
    async cancelTrip(actor, tripId, input, options = {}) {
      assertOperator(actor);
      const id = validateId(tripId, 'trip_id');
      const { reason } = validateCancelTrip(input);
      const answerBy = answerByOf(options, dependencies.answerTimeoutMs);
      const at = now();
      // The mark commits within half the time left, or rolls back: the caller then hears that nothing changed.
      const withinMs = (answerBy - Date.now()) / 2;
      if (withinMs <= 0) throw commandNotStarted();
      let marked;
      try {
        marked = await markTripCancelled(database, {
          tripId: id,
          reason,
          at,
          refuse: (trip) => assertTripCancellable(trip, at),
          withinMs,
        });
      } catch (error) {
        if (error instanceof TimedOutMark) throw commandNotStarted();
        throw error;
      }
      if (marked === undefined) throw notFound('Trip', id);
      if (marked.events !== undefined) {
        await dispatchRecordedEvents(database, dependencies.webhookDeliveries, marked.events, (error) =>
          dependencies.logger?.warn({ tripId: id, err: error }, 'partner events left for the sweep'),
        );
      }
      // From the mark on the answer is 202 with the cancellation: a start or a progress read that is late goes on
      // (a read of the cancellation starts it, should this start be lost).
      const atMark = viewAtMark(id, marked.mark, marked.openAtMark);
      const afterMark = <T>(step: string, work: Promise<T>, fallback: T): Promise<T> =>
        work.catch((error: unknown) => {
          dependencies.logger?.warn(
            { tripId: id, err: error },
            `trip cancellation ${step} failed after the mark`,
          );
          return fallback;
        });
      const started = afterMark(
        'start',
        ensureStarted(id, marked.mark, marked.openAtMark).then(() => true),
        false,
      );
      const startedInTime = await settledBy(started, answerBy);
      if (marked.newlyCancelled || startedInTime !== true) return atMark;
      const progress = afterMark('progress read', progressOf(id, marked.mark), atMark);
      return (await settledBy(progress, answerBy)) ?? atMark;
    },

    async getTripCancellation(actor, tripId) {
      assertOperator(actor);
      const id = validateId(tripId, 'trip_id');
      const mark = await readTripCancellationMark(database, id);
      if (mark === undefined) throw notFound('Trip', id);
      if (mark.status !== 'CANCELLED') throw notFound('Cancellation of trip', id);
      await ensureStarted(id, mark);
      return progressOf(id, mark);
    },
  };
}
