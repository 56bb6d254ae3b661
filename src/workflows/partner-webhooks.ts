// One endpoint's deliveries of one subject's events: in sequence order, each retried on the schedule until it lands.
import {
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { PartnerWebhookActivities } from '../activities/interface';
import { taskQueues as standardTaskQueues } from '../domain/task-queues';
import { deliveriesWaitingSignal, type PartnerWebhookDeliveryInput } from './partner-webhooks-shared';

/** Events of one booking tend to come in bursts (paid, confirmed, ticketed): one run takes a burst. */
const idleBeforeEnding = '10 seconds';

function activities(input: PartnerWebhookDeliveryInput): PartnerWebhookActivities {
  return proxyActivities<PartnerWebhookActivities>({
    taskQueue: (input.taskQueues ?? standardTaskQueues).bookings,
    // Above the sender's own 15 s limit, so an attempt's timeout is the endpoint's answer, not this one; short
    // enough that an attempt lost with its worker is made again soon.
    startToCloseTimeout: '25 seconds',
    // The database or this worker failing is retried here; the endpoint's failures are the schedule's business.
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
}

/**
 * Delivers the subject's pending deliveries to the endpoint one at a time, lowest sequence first, so a receiver
 * sees each booking's events in order; a delivery that keeps failing holds back the ones behind it until it lands
 * or the endpoint is disabled. Ends when idle; the next event (or a redelivery) starts it again.
 */
export async function partnerWebhookDeliveryWorkflow(input: PartnerWebhookDeliveryInput): Promise<string> {
  const { NextWebhookDelivery, DeliverWebhook } = activities(input);
  let waiting = false;
  setHandler(deliveriesWaitingSignal, () => {
    waiting = true;
  });
  let delivered = 0;
  for (;;) {
    waiting = false;
    for (;;) {
      const next = await NextWebhookDelivery({ endpointId: input.endpointId, subjectId: input.subjectId });
      if (next.kind === 'none') break;
      if (next.kind === 'stopped') return `endpoint ${next.because} after ${delivered} deliveries`;
      const outcome = await deliver(DeliverWebhook, next.deliveryId, input.retryScheduleSeconds);
      if (outcome !== undefined) return `endpoint ${outcome} after ${delivered} deliveries`;
      delivered += 1;
    }
    if (!waiting && !(await condition(() => waiting, idleBeforeEnding))) {
      return `${delivered} deliveries`;
    }
    if (workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof partnerWebhookDeliveryWorkflow>(input);
  }
}

/** Attempts one delivery until it lands (undefined) or its endpoint stops (why). */
async function deliver(
  DeliverWebhook: PartnerWebhookActivities['DeliverWebhook'],
  deliveryId: string,
  retryScheduleSeconds: number[],
): Promise<string | undefined> {
  for (let roundAttempts = 0; ; roundAttempts += 1) {
    const result = await DeliverWebhook({ deliveryId, roundAttempts, retryScheduleSeconds });
    if (result.outcome === 'delivered' || result.outcome === 'settled') return undefined;
    if (result.outcome === 'endpoint_stopped') return result.because;
    await sleep(result.delayMs);
  }
}
