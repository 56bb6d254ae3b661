// A booking id given out with 202 is a promise: a start lost after the answer, or with the API process, still happens.
import { randomUUID } from 'node:crypto';
import { Client, WorkflowNotFoundError, type WorkflowClientInterceptor } from '@temporalio/client';
import { createBookingApplication } from '../../../src/application/bookings';
import { createStartReconciler } from '../../../src/application/start-reconciler';
import type { Actor } from '../../../src/domain/actor';
import { createBookingDataConverter } from '../../../src/security/temporal-payload-codec';
import { bookingWorkflowId } from '../../../src/workflows/shared';
import { startApiProcess, type ApiProcess } from '../../support/api-process';
import { openHoldClaimsFromConfig } from '../../../src/db/booking-hold-claims';
import { activeSeatsOf } from '../../support/booking-records';
import { isolatedTestCipher } from '../../support/database';
import { eventually } from '../../support/outcomes';
import { bearerRequests, expectContract } from '../../support/rest-contract';
import {
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { startTcpGate, type TcpGate } from '../../support/tcp-gate';
import { createTrip, restBookingBody, type TestTrip } from '../../support/trips';
import { createCustomer, insertLoginUser } from '../../support/users';

jest.setTimeout(180_000);

const answerTimeoutMs = 300;

/**
 * Lets every start through, or, from `loseStarts` until `stopLosing`, sends each in a form Temporal refuses before
 * starting anything, the create's update-with-start only once the test has had its 202 (`answerReceived`): the
 * start is lost after the create answered, as when a saturated frontend refuses the calls, and so is the create's
 * own second try.
 */
class StartLoser {
  private losing = false;
  private answered: Promise<void> = Promise.resolve();
  private answer = (): void => undefined;
  readonly lost: string[] = [];

  loseStarts(): void {
    this.losing = true;
    this.answered = new Promise((resolve) => {
      this.answer = resolve;
    });
  }

  answerReceived(): void {
    this.answer();
  }

  stopLosing(): void {
    this.losing = false;
  }

  interceptor(): WorkflowClientInterceptor {
    return {
      startUpdateWithStart: async (input, next) => {
        if (!this.losing) return next(input);
        await this.answered;
        this.lost.push(input.workflowStartOptions.workflowId);
        return next({ ...input, workflowStartOptions: { ...input.workflowStartOptions, taskQueue: '' } });
      },
      start: async (input, next) => {
        if (!this.losing) return next(input);
        this.lost.push(input.options.workflowId);
        return next({ ...input, options: { ...input.options, taskQueue: '' } });
      },
    };
  }
}

const startLoser = new StartLoser();
let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let restServer: RunningServer;
let token: string;

beforeAll(async () => {
  saga = await startSagaEnvironment();
  trip = await createTrip(saga.database, { seatCount: 12 });
  customer = await createCustomer(saga.database, saga.cipher);
  const losingClient = new Client({
    connection: saga.connection,
    namespace: saga.config.temporal.namespace,
    dataConverter: createBookingDataConverter(saga.config),
    interceptors: { workflow: [startLoser.interceptor()] },
  });
  const issuer = await createTokenIssuer();
  token = await issuer.issueToken({ userId: customer.userId, roles: ['customer'] });
  restServer = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: createBookingApplication({
        config: saga.configWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: String(answerTimeoutMs) }),
        database: saga.database,
        temporal: losingClient,
        cipher: saga.cipher,
        timings: saga.timings,
        taskQueues: saga.taskQueueNames,
      }),
      settings: testSettings({ requestTimeoutMs: 5000 }),
    }),
  );
});

afterAll(async () => {
  await restServer?.close();
  await saga?.stop();
});

const rest = bearerRequests(
  () => restServer.baseUrl,
  () => token,
);

/** The create's start, and its own second try, were sent and failed: no workflow exists for the booking. */
async function expectStartLost(bookingId: string): Promise<void> {
  const workflowId = bookingWorkflowId(bookingId);
  await eventually(
    () => Promise.resolve(startLoser.lost.filter((lost) => lost === workflowId).length),
    (tries) => tries >= 2,
  );
  startLoser.stopLosing();
  await expect(saga.client.workflow.getHandle(bookingWorkflowId(bookingId)).describe()).rejects.toThrow(
    WorkflowNotFoundError,
  );
}

async function bookingRowsHolding(seat: string): Promise<string[]> {
  const rows = await saga
    .database('passengers')
    .join('bookings', 'bookings.id', 'passengers.booking_id')
    .where({ 'bookings.trip_id': trip.tripId, 'passengers.seat_number': seat })
    .select<{ id: string }[]>('bookings.id');
  return rows.map((row) => row.id);
}

test('a create answered 202 whose start then fails: GET answers the booking, never 404, and a retry with the same key makes exactly one booking', async () => {
  const seat = trip.seatNumbers[0];
  const headers = { 'idempotency-key': `lost-start-${randomUUID()}` };
  const body = restBookingBody(trip, seat);
  startLoser.loseStarts();
  const accepted = await rest('/v1/bookings', { method: 'POST', body, headers });
  startLoser.answerReceived();
  expect(accepted.status).toBe(202);
  expectContract('createBooking', accepted);
  const bookingId = (accepted.body as { id: string }).id;
  await expectStartLost(bookingId);

  // The read finds the promised booking unstarted and starts it: PROCESSING until the seats are held, never 404.
  const reads: number[] = [];
  const held = await eventually(
    async () => {
      const read = await rest(accepted.headers.location);
      reads.push(read.status);
      return read;
    },
    (read) => read.status !== 202,
  );
  expect(reads).not.toContain(404);
  expect(held.status).toBe(200);
  expect(held.body).toMatchObject({ id: bookingId, status: 'PENDING_PAYMENT' });

  const retried = await rest('/v1/bookings', { method: 'POST', body, headers });
  expect(retried.status).toBe(201);
  expect(retried.body).toMatchObject({ id: bookingId, status: 'PENDING_PAYMENT' });
  expect(await bookingRowsHolding(seat)).toEqual([bookingId]);
  expect(await activeSeatsOf(saga.database, bookingId)).toEqual([`${seat}:HELD`]);
});

test('a lost start that nobody reads is started by the reconciler, past an older one it cannot decrypt', async () => {
  const seat = trip.seatNumbers[1];
  const config = saga.configWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: String(answerTimeoutMs) });
  // Sealed under a key this process was never given (a key retired from ENCRYPTION_KEYS too early).
  const unreadableId = randomUUID();
  await openHoldClaimsFromConfig(config, saga.database, { now: () => new Date() }).claim(
    customer.userId,
    unreadableId,
    isolatedTestCipher('retired').encrypt('{}'),
  );
  startLoser.loseStarts();
  const accepted = await rest('/v1/bookings', { method: 'POST', body: restBookingBody(trip, seat) });
  startLoser.answerReceived();
  expect(accepted.status).toBe(202);
  const bookingId = (accepted.body as { id: string }).id;
  await expectStartLost(bookingId);

  const unreadable = new Set<string>();
  const reconciler = createStartReconciler({
    config,
    database: saga.database,
    temporal: saga.client,
    cipher: saga.cipher,
    onUnreadable: (id) => unreadable.add(id),
  });
  await eventually(
    () => reconciler.reconcile().then(() => activeSeatsOf(saga.database, bookingId)),
    (seats) => seats.length > 0,
  );
  expect(await activeSeatsOf(saga.database, bookingId)).toEqual([`${seat}:HELD`]);
  // Passed over and kept as a promise for a process that holds its key; never started, never dropped.
  expect(unreadable).toContain(unreadableId);
  const kept = await saga
    .database('booking_hold_claims')
    .where({ booking_id: unreadableId })
    .first<{ state: string }>('state');
  expect(kept?.state).toBe('PROMISED');
  await expect(saga.client.workflow.getHandle(bookingWorkflowId(unreadableId)).describe()).rejects.toThrow(
    WorkflowNotFoundError,
  );
  await openHoldClaimsFromConfig(config, saga.database, { now: () => new Date() }).release(unreadableId);
  // Once its row exists, the claim is settled: later passes leave it alone.
  await reconciler.reconcile();
  const claim = await saga
    .database('booking_hold_claims')
    .where({ booking_id: bookingId })
    .first<{ state: string }>('state');
  expect(claim?.state).toBe('STARTED');
});

test('a cancel of a booking whose start was lost starts it with the cancel: it ends CANCELLED, its seat released', async () => {
  const seat = trip.seatNumbers[3];
  startLoser.loseStarts();
  const accepted = await rest('/v1/bookings', { method: 'POST', body: restBookingBody(trip, seat) });
  startLoser.answerReceived();
  expect(accepted.status).toBe(202);
  const bookingId = (accepted.body as { id: string }).id;
  await expectStartLost(bookingId);

  const cancel = await rest(`${accepted.headers.location}/cancel`, {
    method: 'PUT',
    body: { reason: 'no longer travelling' },
  });
  expect(cancel.status).toBe(202);
  expectContract('cancelBooking', cancel);
  const cancelled = await eventually(
    () => rest(accepted.headers.location),
    (read) => read.status === 200 && (read.body as { status: string }).status === 'CANCELLED',
  );
  expect(cancelled.body).toMatchObject({ id: bookingId, cancellation_reason: 'no longer travelling' });
  expect(await activeSeatsOf(saga.database, bookingId)).toEqual([]);
});

describe('the API process killed right after answering 202', () => {
  const issuer = `https://issuer-${randomUUID()}.lost-start.example`;
  let gate: TcpGate;
  const apiProcesses: ApiProcess[] = [];

  afterAll(async () => {
    await Promise.allSettled(apiProcesses.map((apiProcess) => apiProcess.stop()));
    await gate?.close();
    await saga?.database('identity_signing_keys').where({ issuer }).delete();
  });

  test('the booking it named is started by another API process, without anyone reading it', async () => {
    const seat = trip.seatNumbers[2];
    const configuration = {
      IDP_ISSUER: issuer,
      BOOKING_CREATE_ANSWER_TIMEOUT_MS: '1000',
      BOOKING_START_RECONCILE_SECONDS: '1',
    };
    // Its Temporal calls go nowhere: the create's start cannot have left the process when the 202 goes out.
    gate = await startTcpGate(saga.config.temporal.address, { open: false });
    const doomed = await startApiProcess({
      configuration,
      taskQueueNames: saga.taskQueueNames,
      temporalAddress: gate.address,
    });
    apiProcesses.push(doomed);
    const user = await insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] });
    const bearer = await doomed.signIn(user.email, user.password);

    const accepted = await bearerRequests(
      () => doomed.restBaseUrl,
      () => bearer,
    )('/v1/bookings', { method: 'POST', body: restBookingBody(trip, seat) });
    await doomed.kill();
    expect(accepted.status).toBe(202);
    const bookingId = (accepted.body as { id: string }).id;
    await expect(saga.client.workflow.getHandle(bookingWorkflowId(bookingId)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );

    const survivor = await startApiProcess({ configuration, taskQueueNames: saga.taskQueueNames });
    apiProcesses.push(survivor);
    const seats = await eventually(
      () => activeSeatsOf(saga.database, bookingId),
      (held) => held.length > 0,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(seats).toEqual([`${seat}:HELD`]);
    const read = await bearerRequests(
      () => survivor.restBaseUrl,
      () => bearer,
    )(`/v1/bookings/${bookingId}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: bookingId, status: 'PENDING_PAYMENT' });
  });
});
