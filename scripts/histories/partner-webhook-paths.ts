// Recordings of the partner webhook delivery workflow: delivered, retried then delivered, 410 Gone, schedule run out.
import { randomBytes, randomUUID } from 'node:crypto';
import {
  partnerWebhookWorkflowId,
  partnerWebhookWorkflowType,
} from '../../src/workflows/partner-webhooks-shared';
import {
  startLoopbackReceiver,
  type Answer,
  type LoopbackReceiver,
} from '../../test/support/loopback-receiver';
import { eventually } from '../../test/support/outcomes';
import { createTrip, bookingRequest } from '../../test/support/trips';
import type { RecordedRun, RecordingContext } from './recording';

/** The schedule the recording's workers use: three attempts a second apart, so running out takes seconds. */
export const recordedWebhookSchedule = '0,1,1';

/** What a delivery path's receiver answers, and what its workflow's history then shows. */
const deliveryPaths: Record<string, { path: string; eventTypes: string[]; answer: () => Answer }> = {
  'webhook-delivered-in-order': {
    path: 'two events of one booking, each delivered at the first attempt, in sequence order; idle, then ended',
    eventTypes: ['payment.succeeded', 'booking.confirmed'],
    answer: () => (_request, response) => response.writeHead(204).end(),
  },
  'webhook-retried-then-delivered': {
    path: 'the first attempt answered 503 with Retry-After: 1; slept, the second attempt delivered',
    eventTypes: ['booking.confirmed'],
    answer: () => {
      let answered = 0;
      return (_request, response) => {
        answered += 1;
        if (answered === 1) response.writeHead(503, { 'retry-after': '1' }).end();
        else response.writeHead(200).end();
      };
    },
  },
  'webhook-gone-endpoint-disabled': {
    path: 'the endpoint answered 410 Gone: delivery failed, endpoint disabled, the workflow ended',
    eventTypes: ['booking.confirmed'],
    answer: () => (_request, response) => response.writeHead(410).end(),
  },
  'webhook-schedule-exhausted-endpoint-disabled': {
    path: 'every attempt of the schedule answered 500: delivery failed, endpoint disabled, the workflow ended',
    eventTypes: ['booking.confirmed'],
    answer: () => (_request, response) => response.writeHead(500).end(),
  },
};

/**
 * One booking, paid, heard by four endpoints of the customer's that answer differently: each endpoint's workflow
 * for that booking is one recorded path. Needs workers with WEBHOOK_ALLOW_LIST=127.0.0.1, WEBHOOK_ALLOW_HTTP=true
 * and WEBHOOK_RETRY_SCHEDULE_SECONDS=recordedWebhookSchedule.
 */
export async function recordPartnerWebhookDeliveries(context: RecordingContext): Promise<RecordedRun[]> {
  const { saga } = context;
  const customer = await context.newCustomer();
  const receivers: LoopbackReceiver[] = [];
  try {
    const endpoints = await Promise.all(
      Object.entries(deliveryPaths).map(async ([name, deliveryPath]) => {
        const receiver = await startLoopbackReceiver({ answer: deliveryPath.answer() });
        receivers.push(receiver);
        const id = randomUUID();
        await saga.database('webhook_endpoints').insert({
          id,
          partner_id: customer.userId,
          url: `${receiver.origin}/hooks`,
          event_types: deliveryPath.eventTypes,
          secret: saga.cipher.encrypt(`whsec_${randomBytes(24).toString('base64')}`),
        });
        return { name, id, deliveryPath };
      }),
    );
    const trip = await createTrip(saga.database, { seatCount: 2 });
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, ['1A']));
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
    // Every delivery ends delivered or failed before the histories are taken.
    await eventually(
      () =>
        saga
          .database('webhook_deliveries')
          .where({ subject_id: booking.id })
          .whereIn(
            'endpoint_id',
            endpoints.map((endpoint) => endpoint.id),
          )
          .select('status'),
      (rows) => rows.length === 5 && rows.every((row: { status: string }) => row.status !== 'pending'),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    return endpoints.map(({ name, id, deliveryPath }) => ({
      name,
      workflowId: partnerWebhookWorkflowId({ endpointId: id, subjectId: booking.id }),
      workflowType: partnerWebhookWorkflowType,
      path: deliveryPath.path,
      rows: [],
      patches: [],
    }));
  } finally {
    await Promise.all(receivers.map((receiver) => receiver.stop()));
  }
}
