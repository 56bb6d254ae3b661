// Integration: every BookingService RPC over mutual TLS against the real saga (Temporal, PostgreSQL) and real JWTs.
import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import request from 'supertest';
import type Koa from 'koa';
import {
  BookingServiceCallError,
  createBookingClient,
  type BookingClient,
} from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { AccessTokenVerifier } from '../../../src/api/grpc/caller-authorization';
import type { Actor } from '../../../src/domain/actor';
import {
  BookingStatus,
  PaymentStatus,
  type Booking,
} from '../../../src/generated/com/example/bookings/v1/booking';
import type { PassengerInput } from '../../../src/generated/com/example/bookings/v1/booking_service';
import { createOperationGuard } from '../../../src/api/rest/request-authorization';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { activeSeatsOf, paymentLedger, seatHolders } from '../../support/booking-records';
import { createCustomer } from '../../support/users';
import { createTrip, standardPriceMinor, type TestTrip } from '../../support/trips';
import { eventually } from '../../support/outcomes';
import {
  mintToken,
  startIdentityFixture,
  verifierFor,
  type IdentityFixture,
} from '../../support/identity-provider';
import { buildApp } from '../../support/rest-app';
import { asRestJson } from '../../support/rest-json';
import {
  createTestCertificates,
  failureOf,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';

let saga: SagaEnvironment;
let identity: IdentityFixture;
let certificates: TestCertificates;
let trip: TestTrip;
let customer: Actor;
let server: RunningGrpcServer;
let shortHoldServer: RunningGrpcServer;
let slowServer: RunningGrpcServer;
/** The slow server's latest verification, and the creates that got past verification to the application. */
const lateCreates = { verified: Promise.resolve(), started: 0 };
let restApp: Koa;
const clients: BookingClient[] = [];
const tokens: Record<'customer' | 'otherCustomer' | 'readOnly', string> = {
  customer: '',
  otherCustomer: '',
  readOnly: '',
};

function clientOf(target: RunningGrpcServer, token = tokens.customer): BookingClient {
  const client = createBookingClient({
    address: `127.0.0.1:${target.port}`,
    ca: certificates.ca,
    cert: certificates.allowedClient.cert,
    key: certificates.allowedClient.key,
    token,
  });
  clients.push(client);
  return client;
}

/** `status name / ErrorInfo reason` of a failed call, e.g. `FAILED_PRECONDITION/SEAT_UNAVAILABLE`; `OK` if none. */
async function outcomeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return 'OK';
  } catch (error) {
    if (!(error instanceof BookingServiceCallError)) throw error;
    return `${status[error.code]}/${error.reason}`;
  }
}

function passenger(seatNumber: string, overrides: Partial<PassengerInput> = {}): Partial<PassengerInput> {
  return {
    firstName: 'Ana',
    lastName: 'Silva',
    email: 'ana.silva@example.com',
    seatNumber,
    fareClass: 'STANDARD',
    ...overrides,
  };
}

async function create(client: BookingClient, seatNumbers: string[]): Promise<Booking> {
  const response = await client.createBooking({
    requestId: randomUUID(),
    tripId: trip.tripId,
    passengers: seatNumbers.map((seatNumber) => passenger(seatNumber)),
    contactEmail: 'contact@example.com',
  });
  return response.booking!;
}

function tokenFor(actor: Actor, scopes = actor.scopes): Promise<string> {
  return mintToken(identity, { sub: actor.userId, scope: scopes.join(' '), roles: [...actor.roles] });
}

beforeAll(async () => {
  saga = await startSagaEnvironment();
  identity = await startIdentityFixture();
  certificates = createTestCertificates();
  const verifier = verifierFor(identity);
  const verifyAccessToken: AccessTokenVerifier = (token) => verifier.verifyAccessToken(token);
  trip = await createTrip(saga.database, { seatCount: 40 });
  customer = await createCustomer(saga.database, saga.cipher);
  const otherCustomer = await createCustomer(saga.database, saga.cipher);
  tokens.customer = await tokenFor(customer);
  tokens.otherCustomer = await tokenFor(otherCustomer);
  tokens.readOnly = await tokenFor(customer, ['bookings:read']);

  server = await startTestServer({ certificates, application: saga.application, verifyAccessToken });
  shortHoldServer = await startTestServer({
    certificates,
    application: saga.applicationWith({ BOOKING_HOLD_SECONDS: '2' }),
    verifyAccessToken,
  });
  // Token verification that outlasts the caller's deadline as the server measures it (from when the call reached
  // it), to prove a late change is never started; the application counts the creates that reach it.
  slowServer = await startTestServer({
    certificates,
    application: {
      ...saga.application,
      createBooking: (...args) => {
        lateCreates.started += 1;
        return saga.application.createBooking(...args);
      },
    },
    verifyAccessToken: (token) => {
      // Not a wait for state: the gap is what the server must see between the call's arrival and its start.
      const verified = new Promise((resolve) => setTimeout(resolve, 400)).then(() =>
        verifyAccessToken(token),
      );
      lateCreates.verified = verified.then(
        () => undefined,
        () => undefined,
      );
      return verified;
    },
  });
  restApp = buildApp({
    database: saga.database,
    cipher: saga.cipher,
    operationGuard: createOperationGuard(verifier),
    bookings: saga.application,
  });
});

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.allSettled([server?.stop(), shortHoldServer?.stop(), slowServer?.stop()]);
  await identity?.close();
  await saga?.stop();
  if (certificates) removeTestCertificates(certificates);
});

describe('happy paths', () => {
  it('creates, reads, lists, changes, pays for and cancels a booking', async () => {
    const client = clientOf(server);

    const created = await create(client, ['1A', '1B']);
    expect(created).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_PENDING_PAYMENT,
      customerId: customer.userId,
      tripId: trip.tripId,
      routeId: trip.routeId,
      version: 1,
      price: { total: { amountMinor: 2 * standardPriceMinor, currency: 'EUR' } },
      payment: { status: PaymentStatus.PAYMENT_STATUS_NONE },
    });
    expect(created.holdExpiresAt).toBeInstanceOf(Date);
    expect(await activeSeatsOf(saga.database, created.id)).toEqual(['1A:HELD', '1B:HELD']);

    const read = await client.getBooking({ bookingId: created.id });
    expect(read.booking).toEqual(created);

    const listed = await client.listBookings({ status: BookingStatus.BOOKING_STATUS_PENDING_PAYMENT });
    expect(listed.bookings.map((booking) => booking.id)).toContain(created.id);

    const moved = await client.updateBooking({
      bookingId: created.id,
      expectedVersion: 1,
      seatChanges: [{ passengerId: created.passengers[1].id, seatNumber: '2B' }],
    });
    expect(moved.booking).toMatchObject({ version: 2 });
    expect(moved.booking!.passengers.map((item) => item.seatNumber).sort()).toEqual(['1A', '2B']);
    expect(await activeSeatsOf(saga.database, created.id)).toEqual(['1A:HELD', '2B:HELD']);

    const paid = await client.confirmPayment({
      bookingId: created.id,
      paymentToken: 'tok_visa',
      requestId: randomUUID(),
    });
    expect(paid.booking).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_CONFIRMED,
      amountPaid: { amountMinor: 2 * standardPriceMinor },
      payment: { status: PaymentStatus.PAYMENT_STATUS_CAPTURED, method: 'visa •••• 4242' },
    });
    expect(paid.booking!.holdExpiresAt).toBeUndefined();

    const cancelled = await client.cancelBooking({ bookingId: created.id, reason: 'plans changed' });
    expect(cancelled.booking).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_CANCELLED,
      cancellationReason: 'plans changed',
      amountRefunded: { amountMinor: 2 * standardPriceMinor },
    });
    expect(cancelled.booking!.cancelledAt).toBeInstanceOf(Date);
    expect(await activeSeatsOf(saga.database, created.id)).toEqual([]);
    expect(await paymentLedger(saga.database, created.id)).toMatchObject({
      charges: [2 * standardPriceMinor],
      refunds: [2 * standardPriceMinor],
    });
  });

  it('returns the same booking as REST, field for field', async () => {
    const client = clientOf(server);
    const created = await create(client, ['3A']);
    await client.confirmPayment({ bookingId: created.id, paymentToken: 'tok_visa' });
    const overGrpc = (await client.getBooking({ bookingId: created.id })).booking!;
    const overRest = await request(restApp.callback())
      .get(`/v1/bookings/${created.id}`)
      .set('Authorization', `Bearer ${tokens.customer}`)
      .expect(200);
    expect(asRestJson(overGrpc)).toEqual(overRest.body);
  });
});

describe('request_id on ConfirmPayment', () => {
  it('a retry with the same request_id answers the first attempt, declined or paid, and never charges again', async () => {
    const client = clientOf(server);
    const booking = await create(client, ['10A']);

    const declinedAttempt = {
      bookingId: booking.id,
      paymentToken: 'tok_chargeDeclined',
      requestId: randomUUID(),
    };
    expect(await outcomeOf(client.confirmPayment(declinedAttempt))).toBe(
      'FAILED_PRECONDITION/PAYMENT_DECLINED',
    );
    expect(await outcomeOf(client.confirmPayment(declinedAttempt))).toBe(
      'FAILED_PRECONDITION/PAYMENT_DECLINED',
    );
    expect((await paymentLedger(saga.database, booking.id)).declinedCharges).toBe(1);

    const paidAttempt = { bookingId: booking.id, paymentToken: 'tok_visa', requestId: randomUUID() };
    const paid = await client.confirmPayment(paidAttempt);
    expect(paid.booking).toMatchObject({ status: BookingStatus.BOOKING_STATUS_CONFIRMED });
    const retried = await client.confirmPayment(paidAttempt);
    expect(retried.booking).toEqual(paid.booking);
    // The same request id with another token is still the first attempt, answered as it ended.
    expect((await client.confirmPayment({ ...paidAttempt, paymentToken: 'tok_mastercard' })).booking).toEqual(
      paid.booking,
    );
    // A new request id is a new attempt, which a confirmed booking refuses.
    expect(await outcomeOf(client.confirmPayment({ ...paidAttempt, requestId: randomUUID() }))).toBe(
      'FAILED_PRECONDITION/BOOKING_STATE_CONFLICT',
    );
    expect(await paymentLedger(saga.database, booking.id)).toMatchObject({
      charges: [standardPriceMinor],
      declinedCharges: 1,
    });
  });
});

describe('error codes', () => {
  it('CreateBooking: VALIDATION_FAILED with field violations, SEAT_UNAVAILABLE holding nothing, NOT_FOUND', async () => {
    const client = clientOf(server);
    const invalid = await failureOf(
      client.createBooking({
        tripId: trip.tripId,
        passengers: [passenger('99Z', { email: 'not-an-email' })],
        contactEmail: 'contact@example.com',
      }),
    );
    expect(`${status[invalid.code]}/${invalid.reason}`).toBe('INVALID_ARGUMENT/VALIDATION_FAILED');
    expect(invalid.fieldViolations.map((violation) => violation.field).sort()).toEqual([
      'passengers[0].email',
      'passengers[0].seat_number',
    ]);

    const holder = await create(client, ['4A']);
    const otherClient = clientOf(server, tokens.otherCustomer);
    expect(
      await outcomeOf(
        otherClient.createBooking({
          tripId: trip.tripId,
          passengers: [passenger('4B'), passenger('4A')],
          contactEmail: 'contact@example.com',
        }),
      ),
    ).toBe('FAILED_PRECONDITION/SEAT_UNAVAILABLE');
    expect(await seatHolders(saga.database, trip.tripId)).toMatchObject({ '4A': holder.id });
    expect((await seatHolders(saga.database, trip.tripId))['4B']).toBeUndefined();

    expect(
      await outcomeOf(
        client.createBooking({
          tripId: randomUUID(),
          passengers: [passenger('1A')],
          contactEmail: 'contact@example.com',
        }),
      ),
    ).toBe('NOT_FOUND/NOT_FOUND');
  });

  it('GetBooking: NOT_FOUND for another customer, VALIDATION_FAILED for a malformed id', async () => {
    const booking = await create(clientOf(server), ['5A']);
    const otherClient = clientOf(server, tokens.otherCustomer);
    expect(await outcomeOf(otherClient.getBooking({ bookingId: booking.id }))).toBe('NOT_FOUND/NOT_FOUND');
    expect(await outcomeOf(otherClient.getBooking({ bookingId: 'not-a-uuid' }))).toBe(
      'INVALID_ARGUMENT/VALIDATION_FAILED',
    );
  });

  it('UpdateBooking: VERSION_MISMATCH, SEAT_UNAVAILABLE, BOOKING_STATE_CONFLICT', async () => {
    const client = clientOf(server);
    const booking = await create(client, ['6A']);
    await create(client, ['6B']);
    const passengerId = booking.passengers[0].id;
    expect(
      await outcomeOf(
        client.updateBooking({
          bookingId: booking.id,
          expectedVersion: 7,
          seatChanges: [{ passengerId, seatNumber: '6C' }],
        }),
      ),
    ).toBe('ABORTED/VERSION_MISMATCH');
    expect(
      await outcomeOf(
        client.updateBooking({ bookingId: booking.id, seatChanges: [{ passengerId, seatNumber: '6B' }] }),
      ),
    ).toBe('FAILED_PRECONDITION/SEAT_UNAVAILABLE');
    expect(await activeSeatsOf(saga.database, booking.id)).toEqual(['6A:HELD']);

    await client.cancelBooking({ bookingId: booking.id });
    expect(
      await outcomeOf(
        client.updateBooking({ bookingId: booking.id, seatChanges: [{ passengerId, seatNumber: '6D' }] }),
      ),
    ).toBe('FAILED_PRECONDITION/BOOKING_STATE_CONFLICT');
  });

  it('ConfirmPayment: PAYMENT_DECLINED keeps the booking payable; BOOKING_STATE_CONFLICT once cancelled', async () => {
    const client = clientOf(server);
    const booking = await create(client, ['7A']);
    expect(
      await outcomeOf(client.confirmPayment({ bookingId: booking.id, paymentToken: 'tok_chargeDeclined' })),
    ).toBe('FAILED_PRECONDITION/PAYMENT_DECLINED');
    const declined = (await client.getBooking({ bookingId: booking.id })).booking!;
    expect(declined).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_PENDING_PAYMENT,
      payment: { status: PaymentStatus.PAYMENT_STATUS_DECLINED, declineReason: 'card_declined' },
    });

    await client.cancelBooking({ bookingId: booking.id });
    expect(await outcomeOf(client.confirmPayment({ bookingId: booking.id, paymentToken: 'tok_visa' }))).toBe(
      'FAILED_PRECONDITION/BOOKING_STATE_CONFLICT',
    );
  });

  it('ConfirmPayment after the hold lapsed: HOLD_EXPIRED; CancelBooking of the expired booking: BOOKING_STATE_CONFLICT', async () => {
    const client = clientOf(shortHoldServer);
    const booking = await create(client, ['8A']);
    await eventually(
      async () => (await client.getBooking({ bookingId: booking.id })).booking!.status,
      (current) => current === BookingStatus.BOOKING_STATUS_EXPIRED,
    );
    expect(await outcomeOf(client.confirmPayment({ bookingId: booking.id, paymentToken: 'tok_visa' }))).toBe(
      'FAILED_PRECONDITION/HOLD_EXPIRED',
    );
    expect(await outcomeOf(client.cancelBooking({ bookingId: booking.id }))).toBe(
      'FAILED_PRECONDITION/BOOKING_STATE_CONFLICT',
    );
    expect(await paymentLedger(saga.database, booking.id)).toMatchObject({ charges: [] });
  });

  it('ListBookings: VALIDATION_FAILED for a page token it did not issue', async () => {
    expect(await outcomeOf(clientOf(server).listBookings({ pageToken: 'garbage' }))).toBe(
      'INVALID_ARGUMENT/VALIDATION_FAILED',
    );
  });

  it('every RPC: UNAUTHENTICATED without a token, PERMISSION_DENIED without the scope', async () => {
    const anonymous = clientOf(server, '');
    const readOnly = clientOf(server, tokens.readOnly);
    const bookingId = randomUUID();
    const calls = {
      CreateBooking: (client: BookingClient) => client.createBooking({ tripId: trip.tripId }),
      GetBooking: (client: BookingClient) => client.getBooking({ bookingId }),
      ListBookings: (client: BookingClient) => client.listBookings({}),
      UpdateBooking: (client: BookingClient) => client.updateBooking({ bookingId }),
      CancelBooking: (client: BookingClient) => client.cancelBooking({ bookingId }),
      ConfirmPayment: (client: BookingClient) =>
        client.confirmPayment({ bookingId, paymentToken: 'tok_visa' }),
    };
    const outcomes: Record<string, string[]> = {};
    for (const [name, call] of Object.entries(calls)) {
      outcomes[name] = [await outcomeOf(call(anonymous)), await outcomeOf(call(readOnly))];
    }
    const unauthenticated = 'UNAUTHENTICATED/UNAUTHENTICATED';
    const denied = 'PERMISSION_DENIED/PERMISSION_DENIED';
    expect(outcomes).toEqual({
      CreateBooking: [unauthenticated, denied],
      GetBooking: [unauthenticated, 'NOT_FOUND/NOT_FOUND'],
      ListBookings: [unauthenticated, 'OK'],
      UpdateBooking: [unauthenticated, denied],
      CancelBooking: [unauthenticated, denied],
      ConfirmPayment: [unauthenticated, denied],
    });
  });
});

describe('deadlines end to end', () => {
  it('a CreateBooking whose deadline passes before it starts gets DEADLINE_EXCEEDED and holds nothing', async () => {
    const failure = await failureOf(
      clientOf(slowServer).createBooking(
        {
          requestId: randomUUID(),
          tripId: trip.tripId,
          passengers: [passenger('9A')],
          contactEmail: 'contact@example.com',
        },
        { timeoutMs: 150 },
      ),
    );
    expect(status[failure.code]).toBe('DEADLINE_EXCEEDED');
    await lateCreates.verified;
    // The handler decides in the turn its verification ends; one more turn of the event loop lets it act.
    await new Promise((resolve) => setImmediate(resolve));
    expect(lateCreates.started).toBe(0);
    expect((await seatHolders(saga.database, trip.tripId))['9A']).toBeUndefined();
  });
});
