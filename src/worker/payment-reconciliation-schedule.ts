// The payment reconciliation's Temporal schedule, created or brought up to date by every worker on `bookings`.
import {
  Client,
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type ConnectionLike,
} from '@temporalio/client';
import type { Config } from '../config';
import { taskQueues as standardTaskQueues, type TaskQueueNames } from '../domain/task-queues';
import { createBookingDataConverter } from '../security/temporal-payload-codec';
import {
  paymentReconciliationWorkflowType,
  type PaymentReconciliationWorkflowInput,
} from '../workflows/payment-reconciliation-shared';

/** One per namespace: the Web UI lists it under Schedules by this id. */
export const paymentReconciliationScheduleId = 'payment-reconciliation';

export interface PaymentReconciliationScheduleOptions {
  connection: ConnectionLike;
  config: Pick<Config, 'temporal' | 'encryption' | 'paymentReconciliation'>;
  /** The deployment's queue names; the standard ones by default. */
  taskQueueNames?: TaskQueueNames;
  /** Another id (tests keep to their own); the standard one by default. */
  scheduleId?: string;
}

/**
 * Creates the schedule, or makes an existing one match this worker's configuration (interval, window, queues):
 * every worker start does it, so a changed PAYMENT_RECONCILE_INTERVAL_MINUTES takes effect with the next roll-out,
 * and two workers starting at once both end with the same schedule. A pass still running when the next is due is
 * not overlapped (SKIP); after an outage one missed pass is caught up, not every one.
 */
export async function ensurePaymentReconciliationSchedule(
  options: PaymentReconciliationScheduleOptions,
): Promise<{ scheduleId: string; created: boolean }> {
  const { config } = options;
  const names = options.taskQueueNames ?? standardTaskQueues;
  const scheduleId = options.scheduleId ?? paymentReconciliationScheduleId;
  const client = new Client({
    connection: options.connection,
    namespace: config.temporal.namespace,
    dataConverter: createBookingDataConverter(config),
  });
  const every = config.paymentReconciliation.intervalMinutes * 60_000;
  const input: PaymentReconciliationWorkflowInput = {
    lookbackSeconds: config.paymentReconciliation.lookbackSeconds,
    ...(options.taskQueueNames === undefined ? {} : { taskQueues: names }),
  };
  const definition = {
    spec: { intervals: [{ every }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: paymentReconciliationWorkflowType,
      workflowId: scheduleId,
      taskQueue: names.bookings,
      args: [input],
      // A pass that cannot finish in this long is abandoned to the next one.
      workflowExecutionTimeout: 10 * 60_000,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: every },
  };
  try {
    await client.schedule.create({ scheduleId, ...definition });
    return { scheduleId, created: true };
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  await client.schedule.getHandle(scheduleId).update((previous) => ({
    ...previous,
    ...definition,
    policies: { ...previous.policies, ...definition.policies },
  }));
  return { scheduleId, created: false };
}
