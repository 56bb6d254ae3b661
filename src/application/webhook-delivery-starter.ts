// Wakes one endpoint's delivery workflow for one subject through Temporal, starting it when none is running.
import type { Client } from '@temporalio/client';
import type { WebhookDeliveryStarter } from '../ports/webhooks';
import {
  deliveriesWaitingSignal,
  partnerWebhookWorkflowId,
  partnerWebhookWorkflowType,
  type PartnerWebhookDeliveryInput,
} from '../workflows/partner-webhooks-shared';

export interface WebhookDeliveryStarterOptions {
  taskQueue: string;
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
      };
      // Signal-with-start: a running workflow hears the signal, an idle pair gets a new one that reads what waits.
      await client.workflow.signalWithStart(partnerWebhookWorkflowType, {
        workflowId: partnerWebhookWorkflowId(target),
        taskQueue: options.taskQueue,
        args: [input],
        signal: deliveriesWaitingSignal,
        signalArgs: [],
      });
    },
  };
}
