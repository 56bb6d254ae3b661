// Definitions shared by the trip-cancellation workflow and its callers: ids, input, progress query, memo keys.
import { defineQuery } from '@temporalio/workflow';
import type { FailedBookingCancellation, TripCancellationCounts } from '../domain/trip-cancellation';
import type { TaskQueueNames } from '../domain/task-queues';

/** One cancellation per trip: a second call finds the first by this id. */
export function tripCancellationWorkflowId(tripId: string): string {
  return `trip-cancellation-${tripId}`;
}

export const tripCancellationWorkflowType = 'tripCancellationWorkflow';

/** The workflow list's line for a trip's cancellation (its static summary, set at start). */
export function tripCancellationSummary(tripId: string, reason: string): string {
  return `Cancellation of trip ${tripId}: ${reason}`;
}

export interface TripCancellationTuning {
  /** Open bookings listed per page. */
  pageSize: number;
  /** Booking cancellations in flight at once. */
  parallelism: number;
  /** Bookings handled by one run before it continues as new (sooner when Temporal suggests it). */
  bookingsPerRun: number;
  activityStartToCloseMs: number;
  /** Attempts at one booking's cancellation before it is reported as failed. */
  maximumAttemptsPerBooking: number;
}

export const defaultTripCancellationTuning: TripCancellationTuning = {
  pageSize: 100,
  parallelism: 20,
  bookingsPerRun: 500,
  activityStartToCloseMs: 30_000,
  maximumAttemptsPerBooking: 10,
};

/** Where a run left off: handed to the next run by continue-as-new. */
export interface TripCancellationCarry {
  counts: TripCancellationCounts;
  /** The last booking id handled: the next page starts after it. */
  afterBookingId?: string;
  failures: FailedBookingCancellation[];
}

export interface TripCancellationInput {
  tripId: string;
  reason: string;
  cancelledAt: string;
  tuning: TripCancellationTuning;
  /** Where the activities run; the standard `taskQueues` when absent. */
  taskQueues?: TaskQueueNames;
  /** Bookings listed at the mark, so the progress says so before the first count (absent in older starts). */
  openAtMark?: number;
  carried?: TripCancellationCarry;
}

export interface TripCancellationProgress {
  tripId: string;
  reason: string;
  cancelledAt: string;
  status: 'RUNNING' | 'FINISHED';
  counts: TripCancellationCounts;
  done: number;
  remaining: number;
  failures: FailedBookingCancellation[];
}

export const tripCancellationProgressQuery =
  defineQuery<TripCancellationProgress>('TripCancellationProgress');

/** Memo key of the progress counts, shown on the workflow's page in the Web UI. */
export const tripCancellationProgressMemoKey = 'progress';
