// What the payment reconciliation's workflow shares with its schedule's maker: its type name and its input.
import type { TaskQueueNames } from '../domain/task-queues';

export const paymentReconciliationWorkflowType = 'paymentReconciliationWorkflow';

export interface PaymentReconciliationWorkflowInput {
  /** How far back each pass compares (PAYMENT_RECONCILE_INTERVAL_MINUTES and the hold, from configuration). */
  lookbackSeconds: number;
  /** Where the activity runs; the standard queues when absent. */
  taskQueues?: TaskQueueNames;
}
