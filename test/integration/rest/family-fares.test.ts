// A family (two adults, a child, a lap infant) with a discount code over REST and gRPC; the child cancelled through a quote.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createBookingClient, type BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import { createRefundQuoteApplication } from '../../../src/application/refund-quotes';
import { createDiscountCode } from '../../../src/db/discount-codes';
import type { Actor } from '../../../src/domain/actor';
import { unauthenticated } from '../../../src/domain/errors';
import { BookingStatus } from '../../../src/generated/com/example/bookings/v1/booking';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { createCustomer } from '../../support/users';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../../support/rest-app';
import {
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';

jest.setTimeout(120_000);

let saga: SagaEnvironment;
let trip: TestTrip;
let customer: Actor;
let token = '';
let restServer: RunningServer;
let grpcServer: RunningGrpcServer;
let certificates: TestCertificates;
let grpc: BookingClient;
let code = '';

beforeAll(async () => {
  saga = await startSagaEnvironment();
  trip = await createTrip(saga.database, { seatCount: 16 });
  customer = await createCustomer(saga.database, saga.cipher);
  code = `FAMILY-${randomUUID().slice(0, 6).toUpperCase()}`;
  await createDiscountCode(
    saga.database,
    {
      code,
      kind: 'percent',
      value: 10,
      validFrom: new Date(Date.now() - 3_600_000).toISOString(),
      validUntil: new Date(Date.now() + 86_400_000).toISOString(),
      routeIds: [trip.routeId],
      maxUsages: 10,
    },
    'test-agent',
  );
  const issuer = await createTokenIssuer();
  token = await issuer.issueToken({ userId: customer.userId, roles: ['customer'] });
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
    refundQuotes: createRefundQuoteApplication({ database: saga.database, bookings: saga.application }),
    verifyAccessToken: (offered) =>
      offered === 'customer'
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

/** A birth date `years` before the departure (a month earlier, so the birthday has passed). */
function bornYearsBefore(years: number): string {
  const date = new Date(trip.departureTime);
  date.setUTCFullYear(date.getUTCFullYear() - years);
  date.setUTCMonth(date.getUTCMonth() - 1);
  return date.toISOString().slice(0, 10);
}

function member(seat: string | undefined, type: string, age?: number) {
  return {
    first_name: type === 'ADULT' ? 'Ana' : 'Rui',
    last_name: 'Family',
    email: 'family@example.com',
    fare_class: 'STANDARD',
    passenger_type: type,
    ...(seat === undefined ? {} : { seat_number: seat }),
    ...(age === undefined ? {} : { birth_date: bornYearsBefore(age) }),
  };
}

async function rest(
  method: string,
  path: string,
  operationId: string,
  body?: unknown,
): Promise<ObservedResponse> {
  const response = await fetch(`${restServer.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(method === 'POST' && path === '/v1/bookings' ? { 'idempotency-key': randomUUID() } : {}),
      ...(path.endsWith('/payment') ? { 'idempotency-key': randomUUID() } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const observed = await observe(response);
  expectContract(operationId, observed);
  return observed;
}

interface PriceLineJson {
  passenger_type: string | null;
  seat_number: string;
  amount: { amount_minor: number };
  discount: { amount_minor: number } | null;
}

/** The breakdown both fronts must show: adults 100 %, child 50 %, infant free, 10 % off shared by fare. */
const expectedLines = [
  ['ADULT', 2250, 250],
  ['ADULT', 2250, 250],
  ['CHILD', 1125, 125],
  ['INFANT', 0, 0],
];

test('REST: the family booked with a code, the breakdown quoted; the child cancelled through a quote, refunded exactly that', async () => {
  const created = await rest('POST', '/v1/bookings', 'createBooking', {
    trip_id: trip.tripId,
    passengers: [
      member('1A', 'ADULT'),
      member('1B', 'ADULT'),
      member('1C', 'CHILD', 8),
      member(undefined, 'INFANT', 1),
    ],
    contact_email: 'family@example.com',
    discount_code: code.toLowerCase(),
    expected_total: { amount_minor: 5625, currency: 'EUR' },
  });
  expect(created.status).toBe(201);
  const booking = created.body as {
    id: string;
    passengers: { id: string; passenger_type: string }[];
    price: { lines: PriceLineJson[]; total: { amount_minor: number }; discount: { code: string } };
  };
  expect(
    booking.price.lines.map((line) => [
      line.passenger_type,
      line.amount.amount_minor,
      line.discount?.amount_minor,
    ]),
  ).toEqual(expectedLines);
  expect(booking.price).toMatchObject({
    total: { amount_minor: 5625 },
    discount: { code, kind: 'percent', value: 10 },
  });
  process.stdout.write(`family over REST: ${JSON.stringify(booking.price)}\n`);

  const paid = await rest('POST', `/v1/bookings/${booking.id}/payment`, 'confirmPayment', {
    payment_token: 'tok_visa',
  });
  expect(paid.status).toBe(200);
  const child = booking.passengers.find((traveller) => traveller.passenger_type === 'CHILD')!;
  const quoted = await rest('POST', `/v1/bookings/${booking.id}/refund-quotes`, 'createRefundQuote', {
    passenger_ids: [child.id],
  });
  expect(quoted.status).toBe(201);
  const quote = quoted.body as {
    id: string;
    total: { amount_minor: number };
    lines: { refund: { amount_minor: number } }[];
  };
  expect(quote.total.amount_minor).toBe(1125);
  const cancelled = await rest('POST', `/v1/bookings/${booking.id}/passengers/cancel`, 'cancelPassengers', {
    passenger_ids: [child.id],
    quote_id: quote.id,
  });
  expect(cancelled.status).toBe(200);
  expect(cancelled.body).toMatchObject({
    status: 'CONFIRMED',
    amount_refunded: { amount_minor: quote.total.amount_minor },
    cancelled_passengers: [{ passenger_id: child.id, refund: { amount_minor: quote.total.amount_minor } }],
  });
  process.stdout.write(
    `child cancelled over REST: quote ${quote.total.amount_minor}, refunded ${quote.total.amount_minor}\n`,
  );
});

test('gRPC: the same family and code, the same breakdown; the child cancelled through a quote, refunded exactly that', async () => {
  const grpcMember = (seat: string | undefined, type: string, age?: number) => ({
    firstName: 'Ana',
    lastName: 'Family',
    email: 'family@example.com',
    fareClass: 'STANDARD',
    passengerType: type,
    ...(seat === undefined ? {} : { seatNumber: seat }),
    ...(age === undefined ? {} : { birthDate: bornYearsBefore(age) }),
  });
  const { booking } = await grpc.createBooking({
    requestId: randomUUID(),
    tripId: trip.tripId,
    passengers: [
      grpcMember('2A', 'ADULT'),
      grpcMember('2B', 'ADULT'),
      grpcMember('2C', 'CHILD', 8),
      grpcMember(undefined, 'INFANT', 1),
    ],
    contactEmail: 'family@example.com',
    discountCode: code,
    expectedTotal: { amountMinor: 5625, currency: 'EUR' },
  });
  expect(
    booking?.price?.lines.map((line) => [
      line.passengerType,
      line.amount?.amountMinor,
      line.discount?.amountMinor,
    ]),
  ).toEqual(expectedLines);
  expect(booking?.price?.discount).toMatchObject({ code, kind: 'percent', value: 10 });
  const paid = await grpc.confirmPayment({
    bookingId: booking!.id,
    paymentToken: 'tok_visa',
    requestId: randomUUID(),
  });
  expect(paid.booking?.status).toBe(BookingStatus.BOOKING_STATUS_CONFIRMED);
  const child = booking!.passengers.find((traveller) => traveller.passengerType === 'CHILD')!;
  const { quote } = await grpc.quoteRefund({ bookingId: booking!.id, passengerIds: [child.id] });
  expect(quote?.total?.amountMinor).toBe(1125);
  const cancelled = await grpc.cancelPassengers({
    bookingId: booking!.id,
    passengerIds: [child.id],
    quoteId: quote!.id,
    requestId: randomUUID(),
  });
  expect(cancelled.booking?.amountRefunded?.amountMinor).toBe(quote?.total?.amountMinor);
  expect(cancelled.booking?.cancelledPassengers.map((passenger) => passenger.passengerId)).toEqual([
    child.id,
  ]);
  process.stdout.write(
    `family over gRPC: total ${booking?.price?.total?.amountMinor}; child quote ${quote?.total?.amountMinor}, refunded ${cancelled.booking?.amountRefunded?.amountMinor}\n`,
  );
});
