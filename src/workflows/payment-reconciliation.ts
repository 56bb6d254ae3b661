// The payment reconciliation, started by its Temporal schedule: one pass, its findings as the workflow's result.
import { proxyActivities } from '@temporalio/workflow';
import type { PaymentReconciliationActivities, PaymentReconciliationResult } from '../activities/interface';
import { taskQueues as standardTaskQueues } from '../domain/task-queues';
import type { PaymentReconciliationWorkflowInput } from './payment-reconciliation-shared';

/**
 * One pass: what it mended is its result, which the Web UI shows on the run. The pass is idempotent (each outcome is
 * recorded once under a stable id), so its activity is retried freely; a pass that keeps failing leaves the
 * outcomes to the next one.
 */
export async function paymentReconciliationWorkflow(
  input: PaymentReconciliationWorkflowInput,
): Promise<PaymentReconciliationResult> {
  const { ReconcilePayments } = proxyActivities<PaymentReconciliationActivities>({
    taskQueue: (input.taskQueues ?? standardTaskQueues).payments,
    startToCloseTimeout: '2 minutes',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: 5,
    },
  });
  return ReconcilePayments({ lookbackSeconds: input.lookbackSeconds });
}
