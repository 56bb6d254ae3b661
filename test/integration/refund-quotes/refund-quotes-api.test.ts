// Refund quotes over the real fronts: the REST app as main.ts composes it and the gRPC server, on paid bookings of the saga.
import { randomUUID } from 'node:crypto';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { expect } from '@jest/globals';
import {
  BookingServiceCallError,
  createBookingClient,
  type BookingClient,
} from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { BookingView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import {
  GetRefundQuoteRequest,
  QuoteRefundRequest,
  type RefundQuote,
} from '../../../src/generated/com/example/bookings/v1/refund_quote';
import { scopesForRoles } from '../../../src/security/policy';
import {
  createTestCertificates,
  removeTestCertificates,
  type TestCertificates,
} from '../../support/grpc-server';
import { startTestServer } from '../../support/grpc-server';
import { composeTestApi, startServer, type RunningServer, type TestApi } from '../../support/rest-app';
import { bearerRequests, expectContract, type ObservedResponse } from '../../support/rest-contract';
import { asRestJson } from '../../support/rest-json';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, standardPriceMinor, type TestTrip } from '../../support/trips';
import { insertLoginUser } from '../../support/users';

jest.setTimeout(120_000);

const hourMs = 3_600_000;
const quoteValidityMs = 10 * 60_000;

let saga: SagaEnvironment;
let api: TestApi;
let server: RunningServer;
let certificates: TestCertificates;
let grpcServer: RunningGrpcServer;
let grpcClient: BookingClient;
/** Leaves in a week: the standard rule gives everything back. */
let trip: TestTrip;
/** Leaves in 24 hours and 5 minutes: the full refund ends in 5 minutes. */
let soonTrip: TestTrip;
let customer: Actor;
let customerToken: string;
let otherCustomer: Actor;
let otherToken: string;
const seatsTaken = new Map<TestTrip, number>();

const customerActor = (userId: string): Actor => ({
  userId,
  roles: ['customer'],
  scopes: scopesForRoles(['customer']),
});

beforeAll(async () => {
  saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100' } });
  api = await composeTestApi(saga);
  server = await startServer(api.app);
  certificates = createTestCertificates();
  grpcServer = await startTestServer({
    certificates,
    application: saga.application,
    refundQuotes: api.refundQuotes,
    verifyAccessToken: (token) => api.verifier.verifyAccessToken(token),
  });
  [trip, soonTrip] = await Promise.all([
    createTrip(saga.database, { seatCount: 32 }),
    createTrip(saga.database, { seatCount: 4, departureInMs: 24 * hourMs + 5 * 60_000 }),
  ]);
  const [login, otherLogin] = await Promise.all([
    insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] }),
    insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] }),
  ]);
  customer = customerActor(login.id);
  otherCustomer = customerActor(otherLogin.id);
  customerToken = (await api.identityProvider.login(login, '127.0.0.1')).access_token;
  otherToken = (await api.identityProvider.login(otherLogin, '127.0.0.1')).access_token;
  grpcClient = createBookingClient({
    address: `127.0.0.1:${grpcServer.port}`,
    ca: certificates.ca,
    cert: certificates.allowedClient.cert,
    key: certificates.allowedClient.key,
    token: customerToken,
  });
});

afterAll(async () => {
  grpcClient?.close();
  await grpcServer?.stop();
  await server?.close();
  await api?.remove();
  await saga?.stop();
  if (certificates) removeTestCertificates(certificates);
});

/** A paid booking of `passengerCount` passengers on seats no other booking of the file took. */
async function confirmedBooking(passengerCount: number, on = trip, owner = customer): Promise<BookingView> {
  const taken = seatsTaken.get(on) ?? 0;
  seatsTaken.set(on, taken + passengerCount);
  const seats = on.seatNumbers.slice(taken, taken + passengerCount);
  const pending = await saga.application.createBooking(owner, bookingRequest(on, seats));
  return saga.application.confirmPayment(owner, pending.id, { paymentToken: 'tok_visa' });
}

const asCustomer = bearerRequests(
  () => server.baseUrl,
  () => customerToken,
);
const asOtherCustomer = bearerRequests(
  () => server.baseUrl,
  () => otherToken,
);

interface QuoteJson {
  id: string;
  booking_id: string;
  booking_version: number;
  passenger_ids: string[];
  cancels_booking: boolean;
  lines: { passenger_id: string; paid: { amount_minor: number }; refund: { amount_minor: number } }[];
  total: { amount_minor: number; currency: string };
  rule: { name: string; refund_percent: number };
  quoted_at: string;
  valid_until: string;
}

function quoteOver(
  bookingId: string,
  body?: unknown,
  send = asCustomer,
): Promise<ObservedResponse & { body: unknown }> {
  return send(`/v1/bookings/${bookingId}/refund-quotes`, {
    method: 'POST',
    ...(body === undefined ? {} : { body }),
  });
}

function problemOf(response: ObservedResponse): {
  status: number;
  code?: string;
  errors?: { field: string }[];
} {
  const body = response.body as { code?: string; errors?: { field: string; message: string }[] };
  return {
    status: response.status,
    code: body.code,
    ...(body.errors === undefined ? {} : { errors: body.errors.map(({ field }) => ({ field })) }),
  };
}

const requestMessages = {
  quoteRefund: (fields: object) => QuoteRefundRequest.fromPartial(fields),
  getRefundQuote: (fields: object) => GetRefundQuoteRequest.fromPartial(fields),
};

function grpcCall<Response>(
  method: 'quoteRefund' | 'getRefundQuote',
  fields: object,
  token = customerToken,
): Promise<Response> {
  const message = requestMessages[method](fields);
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  const raw = grpcClient.raw as unknown as Record<
    string,
    (
      message: unknown,
      metadata: Metadata,
      callback: (error: ServiceError | null, response: Response) => void,
    ) => void
  >;
  return new Promise((resolve, reject) => {
    raw[method].call(grpcClient.raw, message, metadata, (error, response) => {
      if (error) reject(new BookingServiceCallError(error));
      else resolve(response);
    });
  });
}

async function grpcFailure(work: Promise<unknown>) {
  try {
    await work;
  } catch (error) {
    if (error instanceof BookingServiceCallError) {
      return {
        code: status[error.code],
        reason: error.reason,
        fields: error.fieldViolations.map((violation) => violation.field),
      };
    }
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('REST', () => {
  test('one passenger of three, a week ahead: their whole share back, held 10 minutes; read back as made', async () => {
    const booking = await confirmedBooking(3);
    const leaving = booking.passengers[1].id;

    const created = await quoteOver(booking.id, { passenger_ids: [leaving] });
    expectContract('createRefundQuote', created);
    expect(created.status).toBe(201);
    const quote = created.body as QuoteJson;
    expect(quote).toEqual({
      id: expect.any(String),
      booking_id: booking.id,
      booking_version: booking.version,
      passenger_ids: [leaving],
      cancels_booking: false,
      lines: [
        {
          passenger_id: leaving,
          paid: { amount_minor: standardPriceMinor, currency: 'EUR' },
          refund: { amount_minor: standardPriceMinor, currency: 'EUR' },
        },
      ],
      total: { amount_minor: standardPriceMinor, currency: 'EUR' },
      rule: { name: 'standard-flexible', refund_percent: 100 },
      quoted_at: expect.any(String),
      valid_until: expect.any(String),
    });
    expect(Date.parse(quote.valid_until) - Date.parse(quote.quoted_at)).toBe(quoteValidityMs);
    expect(Math.abs(Date.parse(quote.quoted_at) - Date.now())).toBeLessThan(60_000);
    expect(created.headers.location).toBe(`/v1/bookings/${booking.id}/refund-quotes/${quote.id}`);

    const read = await asCustomer(created.headers.location);
    expectContract('getRefundQuote', read);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(quote);
    // The /api twin answers the same quote.
    expect((await asCustomer(`/api/bookings/${booking.id}/refund-quotes/${quote.id}`)).body).toEqual(quote);
  });

  test('every passenger (no body): the whole booking is cancelled, each line its share', async () => {
    const booking = await confirmedBooking(3);
    const created = await quoteOver(booking.id);
    expectContract('createRefundQuote', created);
    const quote = created.body as QuoteJson;
    expect(quote.cancels_booking).toBe(true);
    expect(quote.passenger_ids).toEqual(booking.passengers.map((passenger) => passenger.id));
    expect(quote.lines.map((line) => [line.paid.amount_minor, line.refund.amount_minor])).toEqual([
      [standardPriceMinor, standardPriceMinor],
      [standardPriceMinor, standardPriceMinor],
      [standardPriceMinor, standardPriceMinor],
    ]);
    expect(quote.total).toEqual({ amount_minor: 3 * standardPriceMinor, currency: 'EUR' });

    // Naming all of them is the same quote.
    const named = (await quoteOver(booking.id, { passenger_ids: quote.passenger_ids })).body as QuoteJson;
    expect(named.cancels_booking).toBe(true);
    expect(named.total).toEqual(quote.total);
  });

  test('holds only until the rule gives another share: 24 hours before departure', async () => {
    const booking = await confirmedBooking(1, soonTrip);
    const quote = (await quoteOver(booking.id)).body as QuoteJson;
    expect(quote.rule).toEqual({ name: 'standard-flexible', refund_percent: 100 });
    expect(quote.valid_until).toBe(new Date(soonTrip.departureTime.getTime() - 24 * hourMs).toISOString());
    expect(Date.parse(quote.valid_until) - Date.parse(quote.quoted_at)).toBeLessThan(quoteValidityMs);
  });

  test('bad input is a clear error naming the field', async () => {
    const booking = await confirmedBooking(2);
    const other = await confirmedBooking(1);
    const [first, second] = booking.passengers.map((passenger) => passenger.id);
    const cases: [string, unknown, ReturnType<typeof problemOf>][] = [
      [
        'an unknown passenger',
        { passenger_ids: [first, randomUUID()] },
        { status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'passenger_ids[1]' }] },
      ],
      [
        'a passenger of another booking',
        { passenger_ids: [other.passengers[0].id] },
        { status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'passenger_ids[0]' }] },
      ],
      [
        'the same passenger twice',
        { passenger_ids: [second, second] },
        { status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'passenger_ids' }] },
      ],
      [
        'the same passenger twice, in other cases',
        { passenger_ids: [second, second.toUpperCase()] },
        { status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'passenger_ids[1]' }] },
      ],
      [
        'an empty list',
        { passenger_ids: [] },
        { status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'passenger_ids' }] },
      ],
      [
        'a malformed id',
        { passenger_ids: ['not-a-uuid'] },
        { status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'passenger_ids[0]' }] },
      ],
      [
        'an unknown field',
        { passengers: [first] },
        { status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'passengers' }] },
      ],
    ];
    const observed = [];
    for (const [name, body] of cases) {
      const answer = await quoteOver(booking.id, body);
      expectContract('createRefundQuote', answer);
      observed.push([name, body, problemOf(answer)]);
    }
    expect(observed).toEqual(cases);
    expect(problemOf(await quoteOver('not-a-booking'))).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'booking_id' }],
    });
  });

  test('another customer’s booking and quotes are 404, exactly like missing ones', async () => {
    const booking = await confirmedBooking(1);
    const quote = (await quoteOver(booking.id)).body as QuoteJson;
    const theirs = await quoteOver(booking.id, undefined, asOtherCustomer);
    expectContract('createRefundQuote', theirs);
    expect(problemOf(theirs)).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(problemOf(await quoteOver(randomUUID()))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(problemOf(await asOtherCustomer(`/v1/bookings/${booking.id}/refund-quotes/${quote.id}`))).toEqual({
      status: 404,
      code: 'NOT_FOUND',
    });

    // A quote read under another booking of the same customer, or an unknown quote, is not found either.
    const another = await confirmedBooking(1);
    for (const path of [
      `/v1/bookings/${another.id}/refund-quotes/${quote.id}`,
      `/v1/bookings/${booking.id}/refund-quotes/${randomUUID()}`,
    ]) {
      const answer = await asCustomer(path);
      expectContract('getRefundQuote', answer);
      expect(problemOf(answer)).toEqual({ status: 404, code: 'NOT_FOUND' });
    }
    expect(problemOf(await asCustomer(`/v1/bookings/${booking.id}/refund-quotes/q-1`))).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'quote_id' }],
    });
  });

  test('a cancelled booking is 409 BOOKING_STATE_CONFLICT', async () => {
    const booking = await confirmedBooking(1);
    await saga.application.cancelBooking(customer, booking.id, {});
    const answer = await quoteOver(booking.id);
    expectContract('createRefundQuote', answer);
    expect(problemOf(answer)).toEqual({ status: 409, code: 'BOOKING_STATE_CONFLICT' });
  });

  test('staff may quote any customer’s booking', async () => {
    const agent = await insertLoginUser(saga.database, saga.cipher, { roles: ['agent'] });
    const agentToken = (await api.identityProvider.login(agent, '127.0.0.1')).access_token;
    const booking = await confirmedBooking(1, trip, otherCustomer);
    const answer = await quoteOver(
      booking.id,
      undefined,
      bearerRequests(
        () => server.baseUrl,
        () => agentToken,
      ),
    );
    expect(answer.status).toBe(201);
    expect((answer.body as QuoteJson).booking_id).toBe(booking.id);
  });
});

describe('gRPC', () => {
  test('QuoteRefund and GetRefundQuote answer what REST answers for the same quote', async () => {
    const booking = await confirmedBooking(3);
    const leaving = [booking.passengers[2].id, booking.passengers[0].id];
    const { quote } = await grpcCall<{ quote: RefundQuote }>('quoteRefund', {
      bookingId: booking.id,
      passengerIds: leaving,
    });
    expect(quote).toMatchObject({
      bookingId: booking.id,
      bookingVersion: booking.version,
      passengerIds: leaving,
      cancelsBooking: false,
      total: { amountMinor: 2 * standardPriceMinor, currency: 'EUR' },
      rule: { name: 'standard-flexible', refundPercent: 100 },
    });
    expect(quote.lines.map((line) => line.passengerId)).toEqual(leaving);
    expect(quote.validUntil!.getTime() - quote.quotedAt!.getTime()).toBe(quoteValidityMs);

    const read = await grpcCall<{ quote: RefundQuote }>('getRefundQuote', {
      bookingId: booking.id,
      quoteId: quote.id,
    });
    expect(read.quote).toEqual(quote);
    const overRest = await asCustomer(`/v1/bookings/${booking.id}/refund-quotes/${quote.id}`);
    expect(asRestJson(read.quote)).toEqual(overRest.body);

    // An empty list is every travelling passenger (proto3 has no unset list).
    const all = await grpcCall<{ quote: RefundQuote }>('quoteRefund', { bookingId: booking.id });
    expect(all.quote.cancelsBooking).toBe(true);
    expect(all.quote.total).toEqual({ amountMinor: 3 * standardPriceMinor, currency: 'EUR' });
  });

  test('bad input fails with the status, reason and field REST names', async () => {
    const booking = await confirmedBooking(2);
    const other = await confirmedBooking(1);
    const [first] = booking.passengers.map((passenger) => passenger.id);
    const quote = (ids: string[], bookingId = booking.id, token?: string) =>
      grpcFailure(grpcCall('quoteRefund', { bookingId, passengerIds: ids }, token));
    const invalid = (field: string) => ({
      code: 'INVALID_ARGUMENT',
      reason: 'VALIDATION_FAILED',
      fields: [field],
    });
    expect(await quote([randomUUID()])).toEqual(invalid('passenger_ids[0]'));
    expect(await quote([first, other.passengers[0].id])).toEqual(invalid('passenger_ids[1]'));
    expect(await quote([first, first])).toEqual(invalid('passenger_ids[1]'));
    expect(await quote(['not-a-uuid'])).toEqual(invalid('passenger_ids[0]'));
    expect(await quote([], 'not-a-booking')).toEqual(invalid('booking_id'));
    expect(await quote([], booking.id, otherToken)).toEqual({
      code: 'NOT_FOUND',
      reason: 'NOT_FOUND',
      fields: [],
    });

    await saga.application.cancelBooking(customer, other.id, {});
    expect(await quote([], other.id)).toEqual({
      code: 'FAILED_PRECONDITION',
      reason: 'BOOKING_STATE_CONFLICT',
      fields: [],
    });
    expect(
      await grpcFailure(grpcCall('getRefundQuote', { bookingId: booking.id, quoteId: randomUUID() })),
    ).toEqual({ code: 'NOT_FOUND', reason: 'NOT_FOUND', fields: [] });
  });
});
