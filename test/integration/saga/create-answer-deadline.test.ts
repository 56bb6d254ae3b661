// No create is answered with an error while its booking goes on to exist: past its answer deadline a create
// says where the booking is (REST 202 + Location, gRPC BOOKING_PROCESSING + id), and reads tell the outcome.
import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import {
  createActivities,
  createActivityDependencies,
  type OwnedActivityDependencies,
} from '../../../src/activities';
import type { ReserveSeatsInput } from '../../../src/activities/interface';
import { createBookingClient, type BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { Actor } from '../../../src/domain/actor';
import { unauthenticated } from '../../../src/domain/errors';
import { BookingStatus } from '../../../src/generated/com/example/bookings/v1/booking';
import { createLogger } from '../../../src/logger';
import { bookingWorkflowId } from '../../../src/workflows/shared';
import { createBookingWorkers, type BookingWorkers } from '../../../src/worker/booking-workers';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createCustomer } from '../../support/users';
import { createTrip, type TestTrip } from '../../support/trips';
import { domainErrorOf, eventually } from '../../support/outcomes';
import { bookingSnapshot, testPassenger } from '../../support/activities';
import { activityKey } from '../../../src/domain/ids';
import {
  createTestCertificates,
  failureOf,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import { bearerRequests, expectContract, type ObservedResponse } from '../../support/rest-contract';
import {
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';

jest.setTimeout(120_000);

/**
 * Holds every ReserveSeats back while closed, as a burst or a backlog of expired holds does on a real worker:
 * the booking's workflow has started, its seats are not held yet.
 */
class ReserveSeatsGate {
  private opened: Promise<void> = Promise.resolve();
  private openGate: () => void = () => undefined;

  close(): void {
    this.opened = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  open(): void {
    this.openGate();
  }

  passed(): Promise<void> {
    return this.opened;
  }
}

const gate = new ReserveSeatsGate();
let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let activityDependencies: OwnedActivityDependencies;
let workerConnection: NativeConnection;
let workers: BookingWorkers;
let running: Promise<void>;
let restServer: RunningServer;
let restToken: string;
let certificates: TestCertificates;
let grpcServer: RunningGrpcServer;
let grpcClient: BookingClient;
let nextSeat = 0;
/** ReserveSeats without the gate: a hold made as another API process's create would make it. */
let reserveSeatsUngated: (input: ReserveSeatsInput) => Promise<void>;

beforeAll(async () => {
  // Long activity timeouts: a held-back ReserveSeats must not be timed out and retried while the gate is shut.
  saga = await startSagaEnvironment({ startWorkers: false, timings: { activityStartToCloseMs: 120_000 } });
  const logger = createLogger({ level: saga.config.logLevel, name: 'create-answer-deadline' });
  activityDependencies = createActivityDependencies(saga.config, logger);
  const activities = createActivities(activityDependencies);
  reserveSeatsUngated = (input) => activities.ReserveSeats(input);
  workerConnection = await NativeConnection.connect({ address: saga.config.temporal.address });
  workers = await createBookingWorkers({
    config: saga.config,
    connection: workerConnection,
    activities: {
      ...activities,
      async ReserveSeats(input: ReserveSeatsInput) {
        await gate.passed();
        return activities.ReserveSeats(input);
      },
    },
    logger,
    taskQueueNames: saga.taskQueueNames,
    workflowBundle: saga.workflowBundle,
  });
  running = workers.run();

  trip = await createTrip(saga.database, { seatCount: 24 });
  customer = await createCustomer(saga.database, saga.cipher);

  // REST: the create's answer is due well before the request timeout, as configuration requires.
  const issuer = await createTokenIssuer();
  restToken = await issuer.issueToken({ userId: customer.userId, roles: ['customer'] });
  restServer = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: saga.applicationWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: '300' }),
      settings: testSettings({ requestTimeoutMs: 5000 }),
    }),
  );

  // gRPC: the default answer timeout (8 s) is longer than the call's deadline, which bounds the answer.
  certificates = createTestCertificates();
  grpcServer = await startTestServer({
    certificates,
    application: saga.application,
    verifyAccessToken: (token) =>
      token === 'customer-token'
        ? Promise.resolve(customer)
        : Promise.reject(unauthenticated('The token is not valid')),
  });
  grpcClient = createBookingClient({
    address: `127.0.0.1:${grpcServer.port}`,
    ca: certificates.ca,
    cert: certificates.allowedClient.cert,
    key: certificates.allowedClient.key,
    token: 'customer-token',
  });
});

afterAll(async () => {
  gate.open();
  grpcClient?.close();
  await grpcServer?.stop();
  if (certificates) removeTestCertificates(certificates);
  await restServer?.close();
  await workers?.shutdown();
  await running?.catch(() => undefined);
  await activityDependencies?.close();
  await workerConnection?.close();
  await saga?.stop();
});

function freshSeat(): string {
  nextSeat += 1;
  return trip.seatNumbers[nextSeat];
}

function createBody(seat: string) {
  return {
    trip_id: trip.tripId,
    passengers: [
      {
        first_name: 'Ana',
        last_name: 'Silva',
        email: 'ana@example.com',
        seat_number: seat,
        fare_class: 'STANDARD',
      },
    ],
    contact_email: 'ana@example.com',
  };
}

const rest = bearerRequests(
  () => restServer.baseUrl,
  () => restToken,
);

interface ProcessingJson {
  id: string;
  status: string;
  retry_after_seconds: number;
}

describe('REST', () => {
  test('a create whose seats are not held by its answer deadline answers 202 with the Location of the booking it goes on to hold', async () => {
    gate.close();
    let accepted: ObservedResponse;
    try {
      accepted = await rest('/v1/bookings', { method: 'POST', body: createBody(freshSeat()) });
      expect(accepted.status).toBe(202);
      expectContract('createBooking', accepted);
      const { id } = accepted.body as ProcessingJson;
      expect(accepted.body).toMatchObject({ id, status: 'PROCESSING', retry_after_seconds: 1 });
      expect(accepted.headers).toMatchObject({ location: `/v1/bookings/${id}`, 'retry-after': '1' });

      // While the seats are still being held, the Location says so too, rather than 404.
      const stillProcessing = await rest(accepted.headers.location);
      expect(stillProcessing.status).toBe(202);
      expectContract('getBooking', stillProcessing);
      expect(stillProcessing.body).toMatchObject({ id, status: 'PROCESSING' });
    } finally {
      gate.open();
    }

    const held = await eventually(
      () => rest(accepted.headers.location),
      (response) => response.status !== 202,
    );
    expect(held.status).toBe(200);
    expectContract('getBooking', held);
    expect(held.body).toMatchObject({ id: (accepted.body as ProcessingJson).id, status: 'PENDING_PAYMENT' });
  });

  test('the /api twin points its 202 at the /api path of the booking', async () => {
    gate.close();
    try {
      const accepted = await rest('/api/bookings', { method: 'POST', body: createBody(freshSeat()) });
      expect(accepted.status).toBe(202);
      expectContract('createBookingApi', accepted);
      expect(accepted.headers.location).toBe(`/api/bookings/${(accepted.body as ProcessingJson).id}`);
    } finally {
      gate.open();
    }
  });

  test('a retry with the same Idempotency-Key after a 202 lands on the same booking and answers it once held', async () => {
    const headers = { 'idempotency-key': `answer-deadline-${Date.now()}` };
    const body = createBody(freshSeat());
    gate.close();
    let first: ObservedResponse;
    try {
      first = await rest('/v1/bookings', { method: 'POST', body, headers });
      expect(first.status).toBe(202);
      const retryWhileProcessing = await rest('/v1/bookings', { method: 'POST', body, headers });
      expect(retryWhileProcessing.status).toBe(202);
      expect(retryWhileProcessing.body).toMatchObject({ id: (first.body as ProcessingJson).id });
    } finally {
      gate.open();
    }

    const retried = await eventually(
      () => rest('/v1/bookings', { method: 'POST', body, headers }),
      (response) => response.status !== 202,
    );
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({ id: (first.body as ProcessingJson).id, status: 'PENDING_PAYMENT' });
    const sameSeat = await saga
      .database('passengers')
      .join('bookings', 'bookings.id', 'passengers.booking_id')
      .where({ 'bookings.trip_id': trip.tripId, 'passengers.seat_number': body.passengers[0].seat_number })
      .count<{ count: string }[]>('passengers.id as count');
    expect(Number(sameSeat[0].count)).toBe(1);
  });

  test('a booking whose create answered 202 and then found its seat taken answers the reason, and frees its slot', async () => {
    const seat = freshSeat();
    gate.close();
    let accepted: ObservedResponse;
    try {
      accepted = await rest('/v1/bookings', { method: 'POST', body: createBody(seat) });
      expect(accepted.status).toBe(202);
      // Meanwhile another booking holds the seat (a create through another API process, which this process's
      // early refusal cannot see): the first create's workflow finds it taken.
      const taker = bookingSnapshot({ ...trip, customerId: customer.userId }, [testPassenger(seat)]);
      await reserveSeatsUngated({
        bookingId: taker.id,
        tripId: trip.tripId,
        seats: taker.passengers.map((passenger) => ({
          passengerId: passenger.id,
          seatNumber: passenger.seatNumber,
          fareClass: passenger.fareClass,
        })),
        holdExpiresAt: taker.holdExpiresAt,
        idempotencyKey: activityKey(taker.id, 'reserve-seats', taker.version),
        booking: taker,
      });
    } finally {
      gate.open();
    }

    const outcome = await eventually(
      () => rest(accepted.headers.location),
      (response) => response.status !== 202,
    );
    expect(outcome.status).toBe(409);
    expect(outcome.body).toMatchObject({ code: 'SEAT_UNAVAILABLE' });
    const claim = await eventually(
      () =>
        saga
          .database('booking_hold_claims')
          .where({ booking_id: (accepted.body as ProcessingJson).id })
          .first<{ state: string } | undefined>('state'),
      (row) => row?.state === 'RELEASED',
    );
    expect(claim?.state).toBe('RELEASED');
  });
});

describe('the application', () => {
  test('a create whose answer time was spent queueing before its start starts nothing, frees its slot and answers UNAVAILABLE', async () => {
    const bookingId = randomUUID();
    const failure = await domainErrorOf(
      saga.applicationWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: '300' }).createBooking(
        customer,
        {
          tripId: trip.tripId,
          passengers: [
            {
              firstName: 'Ana',
              lastName: 'Silva',
              email: 'ana@example.com',
              seatNumber: freshSeat(),
              fareClass: 'STANDARD',
            },
          ],
          contactEmail: 'ana@example.com',
        },
        // As under a burst: the request arrived longer ago than its whole answer time.
        { bookingId, receivedAt: Date.now() - 1000 },
      ),
    );
    expect(failure?.code).toBe('UNAVAILABLE');
    await expect(saga.client.workflow.getHandle(bookingWorkflowId(bookingId)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    const claim = await saga
      .database('booking_hold_claims')
      .where({ booking_id: bookingId })
      .first<{ state: string } | undefined>('state');
    expect(claim?.state).toBe('RELEASED');
  });
});

describe('a claim withdrawn by another create of its id', () => {
  test('is not promised again: the late create answers UNAVAILABLE instead of giving out the id', async () => {
    const bookingId = randomUUID();
    // A customer of its own: the booking goes on once the gate opens, and holds one of its owner's slots.
    const owner = await createCustomer(saga.database, saga.cipher);
    gate.close();
    try {
      const answer = domainErrorOf(
        saga.applicationWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: '1500' }).createBooking(
          owner,
          {
            tripId: trip.tripId,
            passengers: [
              {
                firstName: 'Ana',
                lastName: 'Silva',
                email: 'ana@example.com',
                seatNumber: freshSeat(),
                fareClass: 'STANDARD',
              },
            ],
            contactEmail: 'ana@example.com',
          },
          { bookingId },
        ),
      );
      const claims = () => saga.database('booking_hold_claims').where({ booking_id: bookingId });
      await eventually(
        () => claims().first<{ state: string } | undefined>('state'),
        (row) => row?.state === 'CLAIMED',
      );
      // What a concurrent create of the same id does when its own start fails and it answers an error.
      await claims().update({ state: 'RELEASED' });

      expect((await answer)?.code).toBe('UNAVAILABLE');
      expect(await claims().first<{ state: string } | undefined>('state')).toEqual({ state: 'RELEASED' });
    } finally {
      gate.open();
    }
  });
});

describe('gRPC', () => {
  test('a create whose seats are not held before its deadline fails BOOKING_PROCESSING with the id GetBooking then answers', async () => {
    gate.close();
    let bookingId: string | undefined;
    try {
      const failure = await failureOf(
        grpcClient.createBooking(
          {
            tripId: trip.tripId,
            passengers: [
              {
                firstName: 'Ana',
                lastName: 'Silva',
                email: 'ana@example.com',
                seatNumber: freshSeat(),
                fareClass: 'STANDARD',
              },
            ],
            contactEmail: 'ana@example.com',
          },
          { timeoutMs: 4000 },
        ),
      );
      expect(failure.code).toBe(status.UNAVAILABLE);
      expect(failure.reason).toBe('BOOKING_PROCESSING');
      expect(failure.statusDetails?.retryDelayMs).toBe(1000);
      bookingId = failure.statusDetails?.errorInfo?.metadata.bookingId;
      expect(bookingId).toMatch(/^[0-9a-f-]{36}$/);

      const stillProcessing = await failureOf(grpcClient.getBooking({ bookingId }));
      expect([status[stillProcessing.code], stillProcessing.reason]).toEqual([
        'UNAVAILABLE',
        'BOOKING_PROCESSING',
      ]);
    } finally {
      gate.open();
    }

    const held = await eventually(
      () => grpcClient.getBooking({ bookingId }).catch(() => undefined),
      (response) => response !== undefined,
    );
    expect(held?.booking).toMatchObject({
      id: bookingId,
      status: BookingStatus.BOOKING_STATUS_PENDING_PAYMENT,
    });
  });
});
