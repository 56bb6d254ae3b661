// Partner webhooks delivered durably: a receiver down for a while, then up; a worker killed mid-delivery.
import { expect } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createPartnerEventSweep } from '../../../src/application/partner-event-sweep';
import { scheduleStartReconciliation } from '../../../src/application/start-reconciler';
import { createWebhookDeliveryStarter } from '../../../src/application/webhook-delivery-starter';
import { partnerEventTypes } from '../../../src/domain/partner-events';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { startCrashWorker, type CrashWorker } from '../../support/crash-worker';
import { eventually } from '../../support/outcomes';
import {
  firstArrivalsByBooking,
  startPartnerReceiver,
  type PartnerReceiver,
} from '../../support/partner-receiver';
import { useSagaTestBed } from '../../support/saga';
import { bookingRequest } from '../../support/trips';

jest.setTimeout(180_000);

/** The Standard Webhooks schedule's shape in seconds, so a receiver that is down for seconds is retried in time. */
const shortSchedule = '0,1,1,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2';

const testBed = useSagaTestBed(
  { seatCount: 12 },
  {
    environment: {
      WEBHOOK_RETRY_SCHEDULE_SECONDS: shortSchedule,
      WEBHOOK_ALLOW_LIST: '127.0.0.1',
      WEBHOOK_ALLOW_HTTP: 'true',
    },
  },
);

let crashingWorker: CrashWorker | undefined;
const receivers: PartnerReceiver[] = [];

afterAll(async () => {
  await crashingWorker?.stop();
  await Promise.all(receivers.map((receiver) => receiver.down()));
});

function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** An endpoint of the customer's (the partner account that makes the bookings), subscribed to every event type. */
async function registerEndpoint(
  database: Knex,
  cipher: FieldCipher,
  partnerId: string,
  url: string,
  secret: string,
): Promise<string> {
  const id = randomUUID();
  // Only this endpoint hears the customer's bookings: earlier tests' endpoints are retired first.
  await database('webhook_endpoints')
    .where({ partner_id: partnerId })
    .update({ deleted_at: database.fn.now() });
  await database('webhook_endpoints').insert({
    id,
    partner_id: partnerId,
    url,
    event_types: [...partnerEventTypes],
    secret: cipher.encrypt(secret),
  });
  return id;
}

/** The sequences the endpoint must receive for a booking: every event of it recorded with a delivery to it. */
async function expectedSequences(database: Knex, endpointId: string, bookingId: string): Promise<number[]> {
  const rows: { sequence: number }[] = await database('webhook_deliveries')
    .where({ endpoint_id: endpointId, subject_id: bookingId })
    .orderBy('sequence')
    .select('sequence');
  return rows.map((row) => row.sequence);
}

async function deliveryStates(database: Knex, endpointId: string): Promise<Record<string, number>> {
  const rows: { status: string; count: string }[] = await database('webhook_deliveries')
    .where({ endpoint_id: endpointId })
    .groupBy('status')
    .select('status', database.raw('count(*) as count'));
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

/** Three bookings with everything a partner hears of: paid and confirmed, one changed, one cancelled with a refund. */
async function bookAndChange(seats: string[][]): Promise<string[]> {
  const { saga, trip, customer } = testBed;
  const ids: string[] = [];
  for (const seatNumbers of seats) {
    const booking = await saga.application.createBooking(customer, bookingRequest(trip, seatNumbers));
    await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
    ids.push(booking.id);
  }
  await saga.application.cancelBooking(customer, ids[0], { reason: 'plans changed' });
  return ids;
}

async function expectDeliveredInOrder(
  receiver: PartnerReceiver,
  endpointId: string,
  bookingIds: readonly string[],
): Promise<void> {
  const { database } = testBed.saga;
  await eventually(
    () => deliveryStates(database, endpointId),
    (states) => (states.pending ?? 0) === 0 && (states.delivered ?? 0) > 0,
    { timeoutMs: 90_000, intervalMs: 250 },
  );
  expect(await deliveryStates(database, endpointId)).toEqual({ delivered: expect.any(Number) });
  expect(receiver.received.every((delivery) => delivery.verified)).toBe(true);
  const arrivals = firstArrivalsByBooking(receiver.received);
  for (const bookingId of bookingIds) {
    const expected = await expectedSequences(database, endpointId, bookingId);
    // Every event (paid and confirmed; the cancelled one refunded and cancelled too), each once, in order.
    expect(expected.length).toBeGreaterThanOrEqual(bookingId === bookingIds[0] ? 4 : 2);
    expect({ bookingId, sequences: arrivals.get(bookingId) }).toEqual({ bookingId, sequences: expected });
  }
  // A duplicate is only ever the same message again: same id, same body.
  const bodies = new Map<string, string>();
  for (const delivery of receiver.received) {
    const body = JSON.stringify([delivery.type, delivery.data]);
    expect(bodies.get(delivery.webhookId) ?? body).toBe(body);
    bodies.set(delivery.webhookId, body);
  }
}

test('a receiver down for a while, then up: every event delivered, in order per booking, duplicates only by id', async () => {
  const { saga, customer } = testBed;
  const secret = newSecret();
  const receiver = await startPartnerReceiver({ secret, startDown: true });
  receivers.push(receiver);
  const endpointId = await registerEndpoint(
    saga.database,
    saga.cipher,
    customer.userId,
    receiver.url,
    secret,
  );

  const bookingIds = await bookAndChange([['1A'], ['1B'], ['1C', '1D']]);
  // Down: attempts fail and are retried on the schedule, the log says so, nothing is delivered.
  const failing = await eventually(
    () =>
      saga
        .database('webhook_deliveries')
        .where({ endpoint_id: endpointId })
        .where('attempts', '>=', 2)
        .count<{ count: string }[]>({ count: '*' }),
    (rows) => Number(rows[0]?.count ?? 0) >= 3,
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  expect(Number(failing[0]?.count)).toBeGreaterThanOrEqual(3);
  const attempt: { status_code: number | null; error: string | null } | undefined = await saga
    .database('webhook_attempts as attempt')
    .join('webhook_deliveries as delivery', 'delivery.id', 'attempt.delivery_id')
    .where('delivery.endpoint_id', endpointId)
    .first('attempt.status_code', 'attempt.error');
  expect(attempt).toMatchObject({ status_code: null, error: expect.stringMatching(/ECONNREFUSED|refused/i) });
  expect(await deliveryStates(saga.database, endpointId)).not.toHaveProperty('delivered');

  await receiver.up();
  await expectDeliveredInOrder(receiver, endpointId, bookingIds);
});

test('a worker killed during deliveries: a fresh worker delivers every event, in order per booking', async () => {
  const { saga, customer } = testBed;
  await saga.stopWorkers();
  crashingWorker = await startCrashWorker({
    taskQueueNames: saga.taskQueueNames,
    workflowBundle: saga.workflowBundle,
    outboxDirectory: saga.outboxDirectory,
    killAt: 'never',
    environment: {
      WEBHOOK_RETRY_SCHEDULE_SECONDS: shortSchedule,
      WEBHOOK_ALLOW_LIST: '127.0.0.1',
      WEBHOOK_ALLOW_HTTP: 'true',
    },
  });
  const secret = newSecret();
  // Slow answers, so the kill lands while a delivery is on the wire.
  const receiver = await startPartnerReceiver({ secret, answerDelayMs: 1500 });
  receivers.push(receiver);
  const endpointId = await registerEndpoint(
    saga.database,
    saga.cipher,
    customer.userId,
    receiver.url,
    secret,
  );

  const bookingIds = await bookAndChange([['2A'], ['2B'], ['2C']]);
  await eventually(
    () => Promise.resolve(receiver.inFlight()),
    (inFlight) => inFlight > 0,
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  await crashingWorker.stop();
  const receivedBeforeKill = receiver.received.length;

  await saga.startWorkers();
  // As every API process does: wake the deliveries of events whose writer died between the commit and the signal.
  const stopSweep = scheduleStartReconciliation(
    createPartnerEventSweep({
      database: saga.database,
      webhookDeliveries: createWebhookDeliveryStarter(saga.client, {
        taskQueues: saga.taskQueueNames,
        retryScheduleSeconds: shortSchedule.split(',').map(Number),
      }),
    }),
    1000,
    () => undefined,
  );
  try {
    await expectDeliveredInOrder(receiver, endpointId, bookingIds);
  } finally {
    stopSweep();
  }
  expect(receiver.received.length).toBeGreaterThan(receivedBeforeKill);
});
