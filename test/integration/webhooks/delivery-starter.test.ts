// The delivery starter against a real Temporal server: one workflow per endpoint and subject, started or signalled.
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { createWebhookDeliveryStarter } from '../../../src/application/webhook-delivery-starter';
import {
  deliveriesWaitingSignal,
  partnerWebhookWorkflowId,
  partnerWebhookWorkflowType,
} from '../../../src/workflows/partner-webhooks-shared';
import { testConfig } from '../../support/database';
import { isolatedTaskQueues } from '../../support/saga';

let connection: Connection;
let client: Client;
const started: WorkflowHandle[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: testConfig().temporal.address });
  client = new Client({ connection });
});

afterAll(async () => {
  await Promise.allSettled(started.map((handle) => handle.terminate('test over')));
  await connection?.close();
});

describe('createWebhookDeliveryStarter', () => {
  it('starts the pair’s workflow with its input and the signal, then only signals it while it runs', async () => {
    // A queue no worker polls: the workflow stays as the starter left it.
    const taskQueues = isolatedTaskQueues();
    const taskQueue = taskQueues.bookings;
    const starter = createWebhookDeliveryStarter(client, { taskQueues, retryScheduleSeconds: [0, 5, 300] });
    const target = { endpointId: randomUUID(), subjectId: randomUUID() };

    await starter.nudge(target);
    await starter.nudge(target);
    const handle = client.workflow.getHandle(partnerWebhookWorkflowId(target));
    started.push(handle);

    const description = await handle.describe();
    expect(description).toMatchObject({
      workflowId: `webhook-delivery-${target.endpointId}-${target.subjectId}`,
      type: partnerWebhookWorkflowType,
      taskQueue,
      status: { name: 'RUNNING' },
    });
    const events = (await handle.fetchHistory()).events ?? [];
    const startedEvent = events.find((event) => event.workflowExecutionStartedEventAttributes);
    const input = startedEvent?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    expect(input.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual([
      { ...target, retryScheduleSeconds: [0, 5, 300], taskQueues },
    ]);
    const signals = events.filter((event) => event.workflowExecutionSignaledEventAttributes);
    expect(signals.map((event) => event.workflowExecutionSignaledEventAttributes?.signalName)).toEqual([
      deliveriesWaitingSignal.name,
      deliveriesWaitingSignal.name,
    ]);
    // The second nudge joined the running workflow rather than starting another.
    expect(events.filter((event) => event.workflowExecutionStartedEventAttributes)).toHaveLength(1);
  });
});
