// A command's answer says what was done: accepted and still running, refused before anything moved, or its outcome.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { createActivities, createActivityDependencies } from '../../../src/activities';
import { createTripCancellationApplication } from '../../../src/application/trip-cancellations';
import { createLogger } from '../../../src/logger';
import { tripCancellationWorkflowId } from '../../../src/workflows/trip-cancellation-shared';
import { createBookingWorkers } from '../../../src/worker/booking-workers';
import { paymentLedger } from '../../support/booking-records';
import { observe, type ObservedResponse } from '../../support/rest-contract';
import {
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';
import { isolatedTaskQueues, startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { actorOf, insertUser, type TestUser } from '../../support/users';

jest.setTimeout(120_000);

/** The answer time of these tests' commands: short, so a paused worker makes it pass quickly. */
const answerTimeoutMs = 1500;

let saga: SagaEnvironment;
let server: RunningServer;
let customer: TestUser;
let agent: TestUser;
let token: string;

beforeAll(async () => {
  saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '50' } });
  const issuer = await createTokenIssuer();
  customer = await insertUser(saga.database, saga.cipher, { roles: ['customer'] });
  agent = await insertUser(saga.database, saga.cipher, { roles: ['agent'] });
  token = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  server = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: saga.applicationWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: String(answerTimeoutMs) }),
      settings: testSettings({ requestTimeoutMs: 4 * answerTimeoutMs }),
    }),
  );
});

afterAll(async () => {
  await server?.close();
  await saga?.stop();
});

async function call(
  path: string,
  options: { method: string; body?: unknown; headers?: Record<string, string> },
): Promise<ObservedResponse> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: options.method,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return observe(response);
}

interface BookingJson {
  id: string;
  status: string;
  version: number;
  passengers: { id: string; seat_number: string }[];
}

/** The same request again until it answers something other than "still running" (bounded). */
async function repeatUntilDone(send: () => Promise<ObservedResponse>): Promise<ObservedResponse> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const response = await send();
    if (response.status !== 202 || Date.now() > deadline) return response;
  }
}

async function pendingBooking(trip: TestTrip, seat: string): Promise<BookingJson> {
  const booking = await saga.application.createBooking(actorOf(customer), bookingRequest(trip, [seat]));
  return { id: booking.id, status: booking.status, version: booking.version, passengers: [] };
}

describe('a command whose answer time passes while the workflow is busy', () => {
  let trip: TestTrip;

  beforeAll(async () => {
    trip = await createTrip(saga.database, { seatCount: 12 });
  });

  afterEach(async () => {
    await saga.startWorkers();
  });

  test('a payment answers 202 naming the payment; the same Idempotency-Key then answers its one outcome', async () => {
    const booking = await pendingBooking(trip, trip.seatNumbers[0]);
    await saga.stopWorkers();
    const key = randomUUID();
    const pay = () =>
      call(`/v1/bookings/${booking.id}/payment`, {
        method: 'POST',
        body: { payment_token: 'tok_visa' },
        headers: { 'idempotency-key': key },
      });

    const first = await pay();
    expect(first.status).toBe(202);
    expect(first.headers.location).toBe(`/v1/bookings/${booking.id}`);
    expect(first.headers['retry-after']).toBe('1');
    expect(first.body).toMatchObject({ id: booking.id, status: 'PROCESSING' });
    expect((first.body as { detail: string }).detail).toMatch(/payment .* accepted and is still running/);

    await saga.startWorkers();
    const outcome = await repeatUntilDone(pay);
    expect(outcome.status).toBe(200);
    expect(outcome.body).toMatchObject({ id: booking.id, status: 'CONFIRMED' });
    // The accepted payment and its repeat are one charge.
    expect((await paymentLedger(saga.database, booking.id)).charges).toHaveLength(1);
  });

  test('a seat change answers 202 naming the change; the same Idempotency-Key then answers the one change', async () => {
    const created = await saga.application.createBooking(
      actorOf(customer),
      bookingRequest(trip, [trip.seatNumbers[1]]),
    );
    await saga.stopWorkers();
    const key = randomUUID();
    const change = () =>
      call(`/v1/bookings/${created.id}`, {
        method: 'PATCH',
        body: {
          seat_changes: [{ passenger_id: created.passengers[0].id, seat_number: trip.seatNumbers[2] }],
        },
        headers: { 'idempotency-key': key, 'if-match': `"${created.version}"` },
      });

    const first = await change();
    expect(first.status).toBe(202);
    expect((first.body as { detail: string }).detail).toMatch(/change .* accepted and is still running/);

    await saga.startWorkers();
    const outcome = await repeatUntilDone(change);
    expect(outcome.status).toBe(200);
    const changed = outcome.body as BookingJson;
    expect(changed.passengers[0].seat_number).toBe(trip.seatNumbers[2]);
    // One change: one version further, although the request went twice with a version that is now stale.
    expect(changed.version).toBe(created.version + 1);
  });

  test('a cancel answers 202 while it runs; the same cancel then answers the cancelled booking', async () => {
    const booking = await pendingBooking(trip, trip.seatNumbers[3]);
    await saga.stopWorkers();
    const key = randomUUID();
    const cancel = () =>
      call(`/v1/bookings/${booking.id}/cancel`, {
        method: 'PUT',
        body: { reason: 'Plans changed' },
        headers: { 'idempotency-key': key },
      });
    const first = await cancel();
    expect(first.status).toBe(202);
    expect((first.body as { detail: string }).detail).toMatch(
      /cancellation .* accepted and is still running/,
    );
    await saga.startWorkers();
    const outcome = await repeatUntilDone(cancel);
    expect(outcome.status).toBe(200);
    expect(outcome.body).toMatchObject({ id: booking.id, status: 'CANCELLED' });
  });
});

describe('once a trip is marked cancelled', () => {
  test('a payment is refused with the trip-cancelled error and the operator reason, and no money moves', async () => {
    const trip = await createTrip(saga.database, { seatCount: 4 });
    const booking = await pendingBooking(trip, trip.seatNumbers[0]);
    await saga.application.cancelTrip(actorOf(agent), trip.tripId, { reason: 'Snow closed the pass' });

    const refused = await call(`/v1/bookings/${booking.id}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'BOOKING_STATE_CONFLICT' });
    expect((refused.body as { detail: string }).detail).toContain('Snow closed the pass');
    expect(await saga.database('payments').where({ booking_id: booking.id })).toEqual([]);
    expect(await paymentLedger(saga.database, booking.id)).toMatchObject({ charges: [], declinedCharges: 0 });
  });

  test('a change is refused the same way', async () => {
    const trip = await createTrip(saga.database, { seatCount: 4 });
    const created = await saga.application.createBooking(
      actorOf(customer),
      bookingRequest(trip, [trip.seatNumbers[0]]),
    );
    await saga.application.cancelTrip(actorOf(agent), trip.tripId, { reason: 'Driver strike' });
    const refused = await call(`/v1/bookings/${created.id}`, {
      method: 'PATCH',
      body: { passenger_updates: [{ passenger_id: created.passengers[0].id, first_name: 'Ana' }] },
      headers: { 'if-match': '*' },
    });
    expect(refused.status).toBe(409);
    expect((refused.body as { detail: string }).detail).toContain('Driver strike');
  });
});

describe("a trip cancellation's progress", () => {
  test('counts every booking open at the mark once, also those that end on their own before the scan reaches them', async () => {
    const trip = await createTrip(saga.database, { seatCount: 8 });
    const bookings = [];
    for (const seat of trip.seatNumbers.slice(0, 6)) bookings.push(await pendingBooking(trip, seat));
    // The cancellation runs on queues no worker polls yet, so the bookings can end on their own first.
    const queues = isolatedTaskQueues();
    const cancellations = createTripCancellationApplication({
      database: saga.database,
      temporal: saga.client,
      taskQueues: queues,
      answerTimeoutMs: 5000,
    });
    const started = await cancellations.cancelTrip(actorOf(agent), trip.tripId, { reason: 'Flooded road' });
    // The first answer already counts what there is to do.
    expect(started).toMatchObject({
      status: 'RUNNING',
      counts: { openAtStart: 6, cancelled: 0, alreadyEnded: 0, failed: 0, done: 0, remaining: 6 },
    });
    for (const booking of bookings.slice(0, 2)) {
      await saga.application.cancelBooking(actorOf(customer), booking.id, { reason: 'Going by train' });
    }

    const connection = await NativeConnection.connect({ address: saga.config.temporal.address });
    const logger = createLogger({ level: 'error', name: 'trip-cancellation-worker' });
    const dependencies = createActivityDependencies(saga.config, logger);
    const workers = await createBookingWorkers({
      config: saga.config,
      connection,
      activities: createActivities(dependencies),
      logger,
      taskQueueNames: queues,
      workflowBundle: saga.workflowBundle,
    });
    const running = workers.run();
    try {
      await saga.client.workflow.getHandle(tripCancellationWorkflowId(trip.tripId)).result();
      const progress = await cancellations.getTripCancellation(actorOf(agent), trip.tripId);
      expect(progress).toMatchObject({
        status: 'FINISHED',
        counts: { openAtStart: 6, cancelled: 4, alreadyEnded: 2, failed: 0, done: 6, remaining: 0 },
      });
      const rows: { cancellation_reason: string }[] = await saga
        .database('bookings')
        .where({ trip_id: trip.tripId })
        .select('cancellation_reason');
      expect(rows.map((row) => row.cancellation_reason).sort()).toEqual([
        'Flooded road',
        'Flooded road',
        'Flooded road',
        'Flooded road',
        'Going by train',
        'Going by train',
      ]);
    } finally {
      await workers.shutdown();
      await running;
      await dependencies.close();
      await connection.close();
    }
  });
});
