// POST /v1/bookings/{booking_id}/passengers/cancel and BookingService.CancelPassengers against the real saga: answers and bad input.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { createBookingClient, type BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { BookingView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import { unauthenticated } from '../../../src/domain/errors';
import { BookingStatus } from '../../../src/generated/com/example/bookings/v1/booking';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, standardPriceMinor, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../../support/rest-app';
import {
  createTestCertificates,
  failureOf,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';

jest.setTimeout(120_000);

let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let otherCustomer: Actor;
let restServer: RunningServer;
let grpcServer: RunningGrpcServer;
let certificates: TestCertificates;
let grpc: BookingClient;
const tokens: Record<'customer' | 'other', string> = { customer: '', other: '' };
let nextSeat = 0;

beforeAll(async () => {
  saga = await startSagaEnvironment();
  trip = await createTrip(saga.database, { seatCount: 40 });
  customer = await createCustomer(saga.database, saga.cipher);
  otherCustomer = await createCustomer(saga.database, saga.cipher);
  const issuer = await createTokenIssuer();
  tokens.customer = await issuer.issueToken({ userId: customer.userId, roles: ['customer'] });
  tokens.other = await issuer.issueToken({ userId: otherCustomer.userId, roles: ['customer'] });
  restServer = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: saga.application,
    }),
  );
  certificates = createTestCertificates();
  grpcServer = await startTestServer({
    certificates,
    application: saga.application,
    verifyAccessToken: (token) =>
      token === 'customer'
        ? Promise.resolve(customer)
        : Promise.reject(unauthenticated('The token is not valid')),
  });
  grpc = createBookingClient({
    address: `127.0.0.1:${grpcServer.port}`,
    ca: certificates.ca,
    cert: certificates.allowedClient.cert,
    key: certificates.allowedClient.key,
    token: 'customer',
  });
});

afterAll(async () => {
  grpc?.close();
  await grpcServer?.stop();
  await restServer?.close();
  await saga?.stop();
  if (certificates) removeTestCertificates(certificates);
});

async function family(owner = customer): Promise<BookingView> {
  const seats = trip.seatNumbers.slice(nextSeat, nextSeat + 3);
  nextSeat += 3;
  const pending = await saga.application.createBooking(owner, bookingRequest(trip, seats));
  return saga.application.confirmPayment(owner, pending.id, { paymentToken: 'tok_visa' });
}

async function cancelOverRest(
  bookingId: string,
  body: unknown,
  token = tokens.customer,
  prefix = '/v1',
): Promise<ObservedResponse> {
  const response = await fetch(`${restServer.baseUrl}${prefix}/bookings/${bookingId}/passengers/cancel`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const observed = await observe(response);
  expectContract(prefix === '/v1' ? 'cancelPassengers' : 'cancelPassengersApi', observed);
  return observed;
}

function problemOf(response: ObservedResponse): {
  code?: string;
  errors?: { field: string; message: string }[];
} {
  return response.body as { code?: string; errors?: { field: string; message: string }[] };
}

describe('REST', () => {
  it('cancels one passenger and answers the booking without them, with what came back', async () => {
    const booking = await family();
    const [, leaving] = booking.passengers;

    const response = await cancelOverRest(booking.id, { passenger_ids: [leaving.id], reason: 'Ill' });

    expect(response.status).toBe(200);
    expect(response.headers.etag).toBe(`"${booking.version + 1}"`);
    expect(response.body).toMatchObject({
      status: 'CONFIRMED',
      price: { total: { amount_minor: 2 * standardPriceMinor } },
      cancelled_passengers: [
        {
          passenger_id: leaving.id,
          paid: { amount_minor: standardPriceMinor, currency: 'EUR' },
          refund: { amount_minor: standardPriceMinor, currency: 'EUR' },
        },
      ],
    });
    const ids = (response.body as { passengers: { id: string }[] }).passengers.map(
      (passenger) => passenger.id,
    );
    expect(ids).not.toContain(leaving.id);
  });

  it('cancels the last passengers through /api: the booking is cancelled', async () => {
    const booking = await family();
    const response = await cancelOverRest(
      booking.id,
      { passenger_ids: booking.passengers.map((passenger) => passenger.id) },
      tokens.customer,
      '/api',
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'CANCELLED' });
  });

  it('answers 400 naming the field: empty list, duplicates, malformed ids, unknown and another booking’s passenger', async () => {
    const booking = await family();
    const other = await family();
    const [first] = booking.passengers;

    const empty = await cancelOverRest(booking.id, { passenger_ids: [] });
    expect([empty.status, problemOf(empty).errors?.map((error) => error.field)]).toEqual([
      400,
      ['passenger_ids'],
    ]);
    const missing = await cancelOverRest(booking.id, { reason: 'x' });
    expect([missing.status, problemOf(missing).errors?.map((error) => error.field)]).toEqual([
      400,
      ['passenger_ids'],
    ]);
    const twice = await cancelOverRest(booking.id, { passenger_ids: [first.id, first.id] });
    expect([twice.status, problemOf(twice).code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(problemOf(twice).errors?.[0].field).toMatch(/^passenger_ids/);
    const malformed = await cancelOverRest(booking.id, { passenger_ids: [first.id, 'not-a-uuid'] });
    expect([malformed.status, problemOf(malformed).errors?.map((error) => error.field)]).toEqual([
      400,
      ['passenger_ids[1]'],
    ]);
    const unknown = await cancelOverRest(booking.id, { passenger_ids: [randomUUID()] });
    expect([unknown.status, problemOf(unknown).errors]).toEqual([
      400,
      [{ field: 'passenger_ids[0]', message: 'no passenger with this id belongs to the booking' }],
    ]);
    const foreign = await cancelOverRest(booking.id, { passenger_ids: [first.id, other.passengers[0].id] });
    expect([foreign.status, problemOf(foreign).errors]).toEqual([
      400,
      [{ field: 'passenger_ids[1]', message: 'no passenger with this id belongs to the booking' }],
    ]);
    const unknownField = await cancelOverRest(booking.id, { passenger_ids: [first.id], refund: 'all' });
    expect(unknownField.status).toBe(400);

    // Nothing moved: the booking is as it was.
    expect(await saga.application.getBooking(customer, booking.id)).toEqual(booking);
  });

  it('answers 404 for another customer’s booking and for an unknown quote', async () => {
    const booking = await family();
    const [first] = booking.passengers;
    const foreign = await cancelOverRest(booking.id, { passenger_ids: [first.id] }, tokens.other);
    expect([foreign.status, problemOf(foreign).code]).toEqual([404, 'NOT_FOUND']);
    const unknownQuote = await cancelOverRest(booking.id, {
      passenger_ids: [first.id],
      quote_id: randomUUID(),
    });
    expect([unknownQuote.status, problemOf(unknownQuote).code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('gRPC', () => {
  it('cancels one passenger and answers the booking without them', async () => {
    const booking = await family();
    const [leaving] = booking.passengers;

    const { booking: answer } = await grpc.cancelPassengers({
      bookingId: booking.id,
      passengerIds: [leaving.id],
      requestId: randomUUID(),
    });

    expect(answer).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_CONFIRMED,
      cancelledPassengers: [
        {
          passengerId: leaving.id,
          paid: { amountMinor: standardPriceMinor, currency: 'EUR' },
          refund: { amountMinor: standardPriceMinor, currency: 'EUR' },
        },
      ],
    });
    expect(answer?.passengers.map((passenger) => passenger.id)).not.toContain(leaving.id);
  });

  it('fails INVALID_ARGUMENT naming the field for bad input, NOT_FOUND for another customer’s booking', async () => {
    const booking = await family();
    const other = await family(otherCustomer);
    const [first] = booking.passengers;
    const violations = async (passengerIds: string[]) => {
      const failure = await failureOf(grpc.cancelPassengers({ bookingId: booking.id, passengerIds }));
      return [status[failure.code], failure.fieldViolations.map((violation) => violation.field)];
    };

    expect(await violations([])).toEqual(['INVALID_ARGUMENT', ['passenger_ids']]);
    expect(await violations([first.id, first.id])).toEqual(['INVALID_ARGUMENT', ['passenger_ids[1]']]);
    expect(await violations(['not-a-uuid'])).toEqual(['INVALID_ARGUMENT', ['passenger_ids[0]']]);
    expect(await violations([randomUUID()])).toEqual(['INVALID_ARGUMENT', ['passenger_ids[0]']]);
    expect(await violations([first.id, other.passengers[0].id])).toEqual([
      'INVALID_ARGUMENT',
      ['passenger_ids[1]'],
    ]);
    const foreign = await failureOf(grpc.cancelPassengers({ bookingId: other.id, passengerIds: [first.id] }));
    expect(status[foreign.code]).toBe('NOT_FOUND');
    expect(await saga.application.getBooking(customer, booking.id)).toEqual(booking);
  });
});
