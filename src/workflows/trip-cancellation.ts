// The trip-cancellation workflow: after the trip is marked cancelled, every open booking is cancelled by its own workflow.
import {
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { TripCancellationActivities } from '../activities/interface';
import {
  countOutcome,
  doneCount,
  emptyCounts,
  progressLine,
  remainingCount,
  type FailedBookingCancellation,
  type TripCancellationCounts,
} from '../domain/trip-cancellation';
import { taskQueues as standardTaskQueues } from '../domain/task-queues';
import { bookingWorkflowId } from './shared';
import {
  tripCancellationProgressMemoKey,
  tripCancellationProgressQuery,
  type TripCancellationInput,
  type TripCancellationProgress,
} from './trip-cancellation-shared';

/**
 * Runs after the trip's mark committed, so no booking of the trip can open any more: pages through the bookings open
 * at the mark (listed with it, whatever they did since) in id order and asks each booking's workflow to cancel (a bounded number at once). A booking that could
 * not be cancelled after its attempts is reported, not retried forever. Continues as new when its history grows;
 * the counts, the failures and the page's position travel with it.
 */
export async function tripCancellationWorkflow(
  input: TripCancellationInput,
): Promise<TripCancellationProgress> {
  const { tuning } = input;
  const queue = (input.taskQueues ?? standardTaskQueues).bookings;
  const scan = proxyActivities<
    Pick<TripCancellationActivities, 'CountOpenTripBookings' | 'ListOpenTripBookings'>
  >({
    taskQueue: queue,
    startToCloseTimeout: tuning.activityStartToCloseMs,
    retry: { initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 30_000 },
  });
  const { CancelTripBooking } = proxyActivities<Pick<TripCancellationActivities, 'CancelTripBooking'>>({
    taskQueue: queue,
    startToCloseTimeout: tuning.activityStartToCloseMs,
    retry: {
      initialInterval: 1000,
      backoffCoefficient: 2,
      maximumInterval: 30_000,
      maximumAttempts: tuning.maximumAttemptsPerBooking,
    },
  });

  let finished = false;
  const failures: FailedBookingCancellation[] = [...(input.carried?.failures ?? [])];
  let afterBookingId = input.carried?.afterBookingId;
  let counts: TripCancellationCounts = input.carried?.counts ?? emptyCounts(input.openAtMark ?? 0);

  const progress = (): TripCancellationProgress => ({
    tripId: input.tripId,
    reason: input.reason,
    cancelledAt: input.cancelledAt,
    status: finished ? 'FINISHED' : 'RUNNING',
    counts,
    done: doneCount(counts),
    remaining: remainingCount(counts, finished),
    failures,
  });
  setHandler(tripCancellationProgressQuery, progress);
  // The current details follow every booking (they are not history); the memo, a history event each time, follows
  // every page.
  const showDetails = () => setCurrentDetails(progressLine(counts, finished));
  const show = () => {
    showDetails();
    upsertMemo({
      [tripCancellationProgressMemoKey]: {
        status: finished ? 'FINISHED' : 'RUNNING',
        done: doneCount(counts),
        cancelled: counts.cancelled,
        alreadyEnded: counts.alreadyEnded,
        failed: counts.failed,
        remaining: remainingCount(counts, finished),
      },
    });
  };

  if (input.carried === undefined) {
    counts = emptyCounts(await scan.CountOpenTripBookings({ tripId: input.tripId }));
  }
  show();

  const cancelOne = async (bookingId: string): Promise<void> => {
    try {
      const answer = await CancelTripBooking({
        tripId: input.tripId,
        bookingId,
        reason: input.reason,
        bookingWorkflowId: bookingWorkflowId(bookingId),
        updateId: workflowInfo().workflowId,
      });
      counts = countOutcome(counts, answer.outcome);
    } catch (error) {
      counts = countOutcome(counts, 'FAILED');
      failures.push({ bookingId, reason: failureMessage(error) });
    }
  };

  let handledThisRun = 0;
  for (;;) {
    const page = await scan.ListOpenTripBookings({
      tripId: input.tripId,
      limit: tuning.pageSize,
      ...(afterBookingId === undefined ? {} : { afterBookingId }),
    });
    if (page.length === 0) break;
    await inBatches(page, tuning.parallelism, async (bookingId) => {
      await cancelOne(bookingId);
      showDetails();
    });
    show();
    afterBookingId = page[page.length - 1];
    handledThisRun += page.length;
    if (workflowInfo().continueAsNewSuggested || handledThisRun >= tuning.bookingsPerRun) {
      await continueAsNew<typeof tripCancellationWorkflow>({
        ...input,
        carried: { counts, failures, ...(afterBookingId === undefined ? {} : { afterBookingId }) },
      });
    }
  }
  finished = true;
  show();
  return progress();
}

/** Runs `work` over `items`, at most `parallelism` at once, each starting as soon as a slot frees. */
async function inBatches<T>(
  items: readonly T[],
  parallelism: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallelism, items.length)) }, lane));
}

/** The innermost message of an activity failure: what went wrong with the booking, for the operator's list. */
function failureMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
