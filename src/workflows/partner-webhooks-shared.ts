// What the partner webhook delivery workflow and its callers share: its name, its id, its input and its signal.
import { defineSignal } from '@temporalio/workflow';
import type { TaskQueueNames } from '../domain/task-queues';

export const partnerWebhookWorkflowType = 'partnerWebhookDeliveryWorkflow';

/** One workflow per endpoint and subject, so each booking's events reach each endpoint one by one, in order. */
export function partnerWebhookWorkflowId(target: { endpointId: string; subjectId: string }): string {
  return `webhook-delivery-${target.endpointId}-${target.subjectId}`;
}

export interface PartnerWebhookDeliveryInput {
  endpointId: string;
  subjectId: string;
  /**
   * Seconds to wait before each attempt: the first is 0 (at once), and the schedule's length is the number of
   * attempts. The Standard Webhooks schedule unless configured otherwise (tests use seconds).
   */
  retryScheduleSeconds: number[];
  /** The deployment's queue names; the standard ones when absent. Its activities run on the bookings queue. */
  taskQueues?: TaskQueueNames;
}

/** Deliveries wait for this endpoint and subject (new events, a redelivery, an endpoint enabled again). */
export const deliveriesWaitingSignal = defineSignal('DeliveriesWaiting');
