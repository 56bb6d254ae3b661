// Payment, change and cancel of a booking still being made answer as its read does; an accepted cancel is applied.
import { status } from '@grpc/grpc-js';
import { createBookingClient, type BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { Actor } from '../../../src/domain/actor';
import { unauthenticated } from '../../../src/domain/errors';
import { BookingStatus } from '../../../src/generated/com/example/bookings/v1/booking';
import { activeSeatsOf } from '../../support/booking-records';
import {
  createTestCertificates,
  failureOf,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import { eventually } from '../../support/outcomes';
import { bearerRequests, expectContract, type ObservedResponse } from '../../support/rest-contract';
import {
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, restBookingBody, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';

jest.setTimeout(180_000);

let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let restServer: RunningServer;
let token: string;
let certificates: TestCertificates;
let grpcServer: RunningGrpcServer;
let grpcClient: BookingClient;

beforeAll(async () => {
  // No worker polls until the test says so: every booking created here stays PROCESSING.
  saga = await startSagaEnvironment({ startWorkers: false });
  trip = await createTrip(saga.database, { seatCount: 12 });
  customer = await createCustomer(saga.database, saga.cipher);
  const application = saga.applicationWith({ BOOKING_CREATE_ANSWER_TIMEOUT_MS: '300' });
  const issuer = await createTokenIssuer();
  token = await issuer.issueToken({ userId: customer.userId, roles: ['customer'] });
  restServer = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: application,
      settings: testSettings({ requestTimeoutMs: 5000 }),
    }),
  );
  certificates = createTestCertificates();
  grpcServer = await startTestServer({
    certificates,
    application,
    verifyAccessToken: (presented) =>
      presented === 'customer-token'
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
  grpcClient?.close();
  await grpcServer?.stop();
  if (certificates) removeTestCertificates(certificates);
  await restServer?.close();
  await saga?.stop();
});

const rest = bearerRequests(
  () => restServer.baseUrl,
  () => token,
);

/** A booking whose create answered 202: its workflow waits for a worker, its seats are not held. */
async function processingBooking(seat: string): Promise<string> {
  const accepted = await rest('/v1/bookings', { method: 'POST', body: restBookingBody(trip, seat) });
  expect(accepted.status).toBe(202);
  return (accepted.body as { id: string }).id;
}

function expectProcessing(answer: ObservedResponse, bookingId: string): void {
  expect(answer.status).toBe(202);
  expect(answer.body).toMatchObject({ id: bookingId, status: 'PROCESSING', retry_after_seconds: 1 });
  expect(answer.headers).toMatchObject({ location: `/v1/bookings/${bookingId}`, 'retry-after': '1' });
}

const paidSeat = 0;
const changedSeat = 1;
const restCancelledSeat = 2;
const grpcCancelledSeat = 3;
const grpcPaidSeat = 4;
const bookings: Record<number, string> = {};

describe('while no worker has held the seats', () => {
  test('REST: payment and change answer 202 PROCESSING like GET, never 404', async () => {
    bookings[paidSeat] = await processingBooking(trip.seatNumbers[paidSeat]);
    bookings[changedSeat] = await processingBooking(trip.seatNumbers[changedSeat]);

    const read = await rest(`/v1/bookings/${bookings[paidSeat]}`);
    expectProcessing(read, bookings[paidSeat]);

    const payment = await rest(`/v1/bookings/${bookings[paidSeat]}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
      headers: { 'idempotency-key': `pay-${bookings[paidSeat]}` },
    });
    expectProcessing(payment, bookings[paidSeat]);
    expectContract('confirmPayment', payment);

    const change = await rest(`/v1/bookings/${bookings[changedSeat]}`, {
      method: 'PATCH',
      body: { add_passengers: restBookingBody(trip, trip.seatNumbers[5]).passengers },
      headers: { 'if-match': '"1"' },
    });
    expectProcessing(change, bookings[changedSeat]);
    expectContract('updateBooking', change);
  });

  test('REST: a cancel is accepted with 202 and recorded', async () => {
    bookings[restCancelledSeat] = await processingBooking(trip.seatNumbers[restCancelledSeat]);
    const cancel = await rest(`/v1/bookings/${bookings[restCancelledSeat]}/cancel`, {
      method: 'PUT',
      body: { reason: 'changed my plans' },
    });
    expectProcessing(cancel, bookings[restCancelledSeat]);
    expectContract('cancelBooking', cancel);
    expect((cancel.body as { detail: string }).detail).toMatch(/cancellation is recorded/);
  });

  test('gRPC: payment fails BOOKING_PROCESSING with the booking id; a cancel is recorded the same way', async () => {
    bookings[grpcPaidSeat] = await processingBooking(trip.seatNumbers[grpcPaidSeat]);
    bookings[grpcCancelledSeat] = await processingBooking(trip.seatNumbers[grpcCancelledSeat]);

    const payment = await failureOf(
      grpcClient.confirmPayment({ bookingId: bookings[grpcPaidSeat], paymentToken: 'tok_visa' }),
    );
    expect([status[payment.code], payment.reason]).toEqual(['UNAVAILABLE', 'BOOKING_PROCESSING']);
    expect(payment.statusDetails?.errorInfo?.metadata.bookingId).toBe(bookings[grpcPaidSeat]);
    expect(payment.statusDetails?.retryDelayMs).toBe(1000);

    const cancel = await failureOf(
      grpcClient.cancelBooking({ bookingId: bookings[grpcCancelledSeat], reason: 'changed my plans' }),
    );
    expect([status[cancel.code], cancel.reason]).toEqual(['UNAVAILABLE', 'BOOKING_PROCESSING']);
    expect(cancel.message).toMatch(/cancellation is recorded/);
  });
});

describe('once a worker holds the seats', () => {
  beforeAll(async () => {
    await saga.startWorkers();
  });

  test('the accepted cancels are applied: the bookings end CANCELLED with their seats released', async () => {
    for (const seat of [restCancelledSeat, grpcCancelledSeat]) {
      const cancelled = await eventually(
        () => rest(`/v1/bookings/${bookings[seat]}`),
        (read) => read.status === 200 && (read.body as { status: string }).status === 'CANCELLED',
        { timeoutMs: 60_000 },
      );
      expect(cancelled.body).toMatchObject({ cancellation_reason: 'changed my plans' });
      expect(await activeSeatsOf(saga.database, bookings[seat])).toEqual([]);
    }
    // A retried cancel answers the cancelled booking, as for any cancel.
    const again = await grpcClient.cancelBooking({ bookingId: bookings[grpcCancelledSeat] });
    expect(again.booking?.status).toBe(BookingStatus.BOOKING_STATUS_CANCELLED);
  });

  test('payment, retried after the delay, goes through', async () => {
    await eventually(
      () => rest(`/v1/bookings/${bookings[paidSeat]}`),
      (read) => read.status === 200,
      { timeoutMs: 60_000 },
    );
    const payment = await rest(`/v1/bookings/${bookings[paidSeat]}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
      headers: { 'idempotency-key': `pay-${bookings[paidSeat]}` },
    });
    expect(payment.status).toBe(200);
    expect(payment.body).toMatchObject({ id: bookings[paidSeat], status: 'CONFIRMED' });
    expect(await activeSeatsOf(saga.database, bookings[paidSeat])).toEqual([
      `${trip.seatNumbers[paidSeat]}:BOOKED`,
    ]);
  });
});
