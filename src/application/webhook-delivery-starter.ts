// Wakes one endpoint's delivery workflow for one subject through Temporal, starting it when none is running.
import type { Client } from '@temporalio/client';
import { taskQueues as standardTaskQueues, type TaskQueueNames } from '../domain/task-queues';
import type { WebhookDeliveryStarter } from '../ports/webhooks';
import {
  deliveriesWaitingSignal,
  partnerWebhookWorkflowId,
  partnerWebhookWorkflowType,
  type PartnerWebhookDeliveryInput,
} from '../workflows/partner-webhooks-shared';

export interface WebhookDeliveryStarterOptions {
  /** The deployment's queue names (the workflow and its activities run on `bookings`); the standard ones when absent. */
  taskQueues?: TaskQueueNames;
  retryScheduleSeconds: readonly number[];
}

export function createWebhookDeliveryStarter(
  client: Client,
  options: WebhookDeliveryStarterOptions,
): WebhookDeliveryStarter {
  return {
    async nudge(target) {
      const input: PartnerWebhookDeliveryInput = {
        endpointId: target.endpointId,
        subjectId: target.subjectId,
        retryScheduleSeconds: [...options.retryScheduleSeconds],
        ...(options.taskQueues === undefined ? {} : { taskQueues: options.taskQueues }),
      };
      // Signal-with-start: a running workflow hears the signal, an idle pair gets a new one that reads what waits.
      await client.workflow.signalWithStart(partnerWebhookWorkflowType, {
        workflowId: partnerWebhookWorkflowId(target),
        taskQueue: (options.taskQueues ?? standardTaskQueues).bookings,
        args: [input],
        signal: deliveriesWaitingSignal,
        signalArgs: [],
      });
    },
  };
}
