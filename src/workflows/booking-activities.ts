// The booking workflow's activity stubs, each family on its own task queue with its timeouts and retry policy.
import { proxyActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type {
  NotificationActivities,
  PaymentActivities,
  ReadModelActivities,
  SeatActivities,
} from '../activities/interface';
import { taskQueues as standardTaskQueues, type TaskQueueNames } from '../domain/task-queues';
import type { BookingTimings } from './shared';

/** Notifications are worth a few tries, but an unreachable mail server must not hold a booking hostage. */
const notificationMaximumAttempts = 5;

export interface BookingActivityStubs {
  seats: SeatActivities;
  payments: PaymentActivities;
  notifications: NotificationActivities;
  readModel: ReadModelActivities;
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
  return {
    seats: proxyActivities<SeatActivities>(onQueue(taskQueues.seats)),
    payments: proxyActivities<PaymentActivities>(onQueue(taskQueues.payments)),
    notifications: proxyActivities<NotificationActivities>(
      onQueue(taskQueues.notifications, { ...retry, maximumAttempts: notificationMaximumAttempts }),
    ),
    readModel: proxyActivities<ReadModelActivities>(onQueue(taskQueues.bookings)),
  };
}
