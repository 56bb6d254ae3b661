// The booking workflow's activity stubs, each family on its own task queue with its timeouts and retry policy.
import {
  proxyActivities,
  proxyLocalActivities,
  type ActivityOptions,
  type LocalActivityOptions,
  type RetryPolicy,
} from '@temporalio/workflow';
import type {
  NotificationActivities,
  PaymentActivities,
  ReadModelActivities,
  SeatActivities,
  TicketActivities,
} from '../activities/interface';
import { taskQueues as standardTaskQueues, type TaskQueueNames } from '../domain/task-queues';
import type { BookingTimings } from './shared';

/** Notifications are worth a few tries, but an unreachable mail server must not hold a booking hostage. */
const notificationMaximumAttempts = 5;

export interface BookingActivityStubs {
  seats: SeatActivities;
  /**
   * The steps a customer waits for that only write PostgreSQL, as local activities: they run on the workflow's own
   * worker inside its workflow task, with no activity task to schedule, poll and report. The seat hold of a new
   * booking and the confirmation of its seats.
   */
  localSeats: Pick<SeatActivities, 'ReserveSeats' | 'ConfirmSeats'>;
  /** The read-model write of every change, locally for the same reason. */
  localReadModel: ReadModelActivities;
  /** Issuing and revoking tickets only writes PostgreSQL too. */
  localTickets: TicketActivities;
  payments: PaymentActivities;
  notifications: NotificationActivities;
}

/**
 * Transient failures (database, gateway timeouts) retry with exponential backoff and no attempt limit: every
 * activity is idempotent, and giving up on a charge whose outcome is unknown could leave money taken without
 * a seat. Business failures are non-retryable ApplicationFailures and stop at once.
 */
export function proxyBookingActivities(
  timings: BookingTimings,
  taskQueues: TaskQueueNames = standardTaskQueues,
): BookingActivityStubs {
  const retry: RetryPolicy = {
    initialInterval: timings.activityRetryInitialIntervalMs,
    backoffCoefficient: 2,
    maximumInterval: timings.activityRetryMaximumIntervalMs,
  };
  const onQueue = (taskQueue: string, policy: RetryPolicy = retry): ActivityOptions => ({
    taskQueue,
    startToCloseTimeout: timings.activityStartToCloseMs,
    retry: policy,
  });
  const local: LocalActivityOptions = { startToCloseTimeout: timings.activityStartToCloseMs, retry };
  return {
    seats: proxyActivities<SeatActivities>(onQueue(taskQueues.seats)),
    localSeats: proxyLocalActivities<Pick<SeatActivities, 'ReserveSeats' | 'ConfirmSeats'>>(local),
    localReadModel: proxyLocalActivities<ReadModelActivities>(local),
    localTickets: proxyLocalActivities<TicketActivities>(local),
    payments: proxyActivities<PaymentActivities>(onQueue(taskQueues.payments)),
    notifications: proxyActivities<NotificationActivities>(
      onQueue(taskQueues.notifications, { ...retry, maximumAttempts: notificationMaximumAttempts }),
    ),
  };
}
