// Booking segments over REST and gRPC against the real saga: per-leg inventory, defaults, validation, local times.
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
import { createOperationGuard } from '../../../src/api/rest/request-authorization';
import { createCatalogApplication } from '../../../src/application/catalog';
import { localDate, type SegmentRequest } from '../../../src/domain/segments';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { doublyHeldSeats } from '../../support/booking-records';
import { createCustomer } from '../../support/users';
import { createTrip, restBookingBody, type TestTrip } from '../../support/trips';
import {
  mintToken,
  startIdentityFixture,
  verifierFor,
  type IdentityFixture,
} from '../../support/identity-provider';
import { buildApp } from '../../support/rest-app';
import {
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';

/** Two shared cores serve 200 creates and their workflows: generous, since only the outcome is asserted. */
jest.setTimeout(240_000);

const concurrentCreates = 200;

let saga: SagaEnvironment;
let identity: IdentityFixture;
let certificates: TestCertificates;
/** Origin, Coimbra, Aveiro, Porto: three legs. */
let trip: TestTrip;
let customer: Actor;
let token: string;
let server: RunningGrpcServer;
let client: BookingClient;
let restApp: Koa;

beforeAll(async () => {
  saga = await startSagaEnvironment({
    environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: String(concurrentCreates + 50) },
  });
  identity = await startIdentityFixture();
  certificates = createTestCertificates();
  const verifier = verifierFor(identity);
  const verifyAccessToken: AccessTokenVerifier = (accessToken) => verifier.verifyAccessToken(accessToken);
  trip = await createTrip(saga.database, { seatCount: 16, middleStops: 2 });
  customer = await createCustomer(saga.database, saga.cipher);
  token = await mintToken(identity, {
    sub: customer.userId,
    scope: customer.scopes.join(' '),
    roles: [...customer.roles],
  });
  server = await startTestServer({ certificates, application: saga.application, verifyAccessToken });
  client = createBookingClient({
    address: `127.0.0.1:${server.port}`,
    ca: certificates.ca,
    cert: certificates.allowedClient.cert,
    key: certificates.allowedClient.key,
    token,
  });
  restApp = buildApp({
    database: saga.database,
    cipher: saga.cipher,
    operationGuard: createOperationGuard(verifier),
    bookings: saga.application,
  });
});

afterAll(async () => {
  client?.close();
  await server?.stop();
  await identity?.close();
  await saga?.stop();
  if (certificates) removeTestCertificates(certificates);
});

interface BookingJson {
  id: string;
  departure_time: string;
  price: { total: { amount_minor: number; currency: string } };
  segment: {
    boarding_stop: { code: string };
    alighting_stop: { code: string };
    departure_time: string;
    arrival_time: string;
  };
}

interface ProblemJson {
  code: string;
  detail: string;
  errors: { field: string }[];
}

/** The body of a REST answer: a booking (2xx) or a problem. */
function bodyOf(answer: { body: unknown }): BookingJson & ProblemJson {
  return answer.body as BookingJson & ProblemJson;
}

interface Segment {
  boarding?: number;
  alighting?: number;
}

function stopsOf(segment: Segment) {
  return {
    ...(segment.boarding === undefined ? {} : { boarding_stop: trip.stopCodes[segment.boarding] }),
    ...(segment.alighting === undefined ? {} : { alighting_stop: trip.stopCodes[segment.alighting] }),
  };
}

function restCreate(seatNumber: string, segment: Segment) {
  return request(restApp.callback())
    .post('/v1/bookings')
    .set('Authorization', `Bearer ${token}`)
    .set('Idempotency-Key', randomUUID())
    .send({ ...restBookingBody(trip, seatNumber), ...stopsOf(segment) });
}

function grpcCreate(seatNumber: string, segment: Segment) {
  const stops = stopsOf(segment);
  return client.createBooking({
    requestId: randomUUID(),
    tripId: trip.tripId,
    passengers: [
      { firstName: 'Ana', lastName: 'Silva', email: 'ana@example.com', seatNumber, fareClass: 'STANDARD' },
    ],
    contactEmail: 'ana@example.com',
    ...(stops.boarding_stop === undefined ? {} : { boardingStop: stops.boarding_stop }),
    ...(stops.alighting_stop === undefined ? {} : { alightingStop: stops.alighting_stop }),
  });
}

/** `OK <booking id>` or the error code of a create, over either front. */
async function restOutcome(seatNumber: string, segment: Segment): Promise<string> {
  const response = await restCreate(seatNumber, segment);
  return response.status === 201 ? `OK ${bodyOf(response).id}` : String(bodyOf(response).code);
}

async function grpcOutcome(seatNumber: string, segment: Segment): Promise<string> {
  try {
    return `OK ${(await grpcCreate(seatNumber, segment)).booking!.id}`;
  } catch (error) {
    if (!(error instanceof BookingServiceCallError)) throw error;
    return error.reason ?? status[error.code];
  }
}

async function activeLegs(seatNumber: string): Promise<string[]> {
  const rows: { legs: string }[] = await saga
    .database('seat_allocations')
    .where({ trip_id: trip.tripId, seat_number: seatNumber })
    .whereIn('state', ['HELD', 'BOOKED'])
    .orderBy('legs')
    .select('legs');
  return rows.map((row) => row.legs);
}

it(`lets exactly one of ${concurrentCreates} concurrent creates of one seat on segments sharing a leg win, over REST and gRPC`, async () => {
  // Every segment here covers the middle leg (Coimbra → Aveiro).
  const segments: Segment[] = [{}, { boarding: 1 }, { alighting: 2 }, { boarding: 1, alighting: 2 }];
  const outcomes = await Promise.all(
    Array.from({ length: concurrentCreates }, (_, index) => {
      const segment = segments[index % segments.length];
      return index % 2 === 0 ? restOutcome('1A', segment) : grpcOutcome('1A', segment);
    }),
  );
  const winners = outcomes.filter((outcome) => outcome.startsWith('OK '));
  expect(winners).toHaveLength(1);
  expect(outcomes.filter((outcome) => outcome === 'SEAT_UNAVAILABLE')).toHaveLength(concurrentCreates - 1);
  expect(await doublyHeldSeats(saga.database, trip.tripId)).toEqual([]);
  expect(await activeLegs('1A')).toHaveLength(1);
});

it('lets one seat be booked on adjacent segments, one over REST and one over gRPC', async () => {
  expect(await restOutcome('1B', { alighting: 1 })).toMatch(/^OK /);
  expect(await grpcOutcome('1B', { boarding: 1, alighting: 2 })).toMatch(/^OK /);
  expect(await restOutcome('1B', { boarding: 2 })).toMatch(/^OK /);
  expect(await activeLegs('1B')).toEqual(['[0,1)', '[1,2)', '[2,3)']);
  // Any segment sharing a leg with those is refused, naming the seat and the leg.
  const refused = await restCreate('1B', { boarding: 1 });
  expect(refused.status).toBe(409);
  expect(bodyOf(refused).code).toBe('SEAT_UNAVAILABLE');
  expect(bodyOf(refused).detail).toContain(`1B is taken on ${trip.stopCodes[1]}→${trip.stopCodes[2]}`);
});

it('books the whole route for an old client that sends no segment, with local times at both ends', async () => {
  const response = await restCreate('2A', {});
  expect(response.status).toBe(201);
  const [origin, , , destination] = trip.stopCodes;
  expect(bodyOf(response).segment).toMatchObject({
    boarding_stop: { code: origin, city: 'Lisbon', time_zone: 'Europe/Lisbon' },
    alighting_stop: { code: destination, city: 'Porto', time_zone: 'Europe/Lisbon' },
  });
  expect(bodyOf(response).segment.departure_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
  expect(Date.parse(bodyOf(response).segment.departure_time)).toBe(
    trip.departureTime.getTime() - (trip.departureTime.getTime() % 1000),
  );
  expect(Date.parse(bodyOf(response).segment.arrival_time)).toBe(
    Date.parse(bodyOf(response).segment.departure_time) + 210 * 60_000,
  );
  expect(await activeLegs('2A')).toEqual(['[0,3)']);

  const overGrpc = await grpcCreate('2B', {});
  expect(overGrpc.booking?.segment?.boardingStop?.code).toBe(origin);
  expect(overGrpc.booking?.segment?.alightingStop?.code).toBe(destination);
  expect(await activeLegs('2B')).toEqual(['[0,3)']);
});

it('prices a segment by its share of the route and departs from the boarding stop', async () => {
  const response = await restCreate('3A', { boarding: 1, alighting: 2 });
  expect(response.status).toBe(201);
  // 70 of 210 minutes of a 25.00 EUR route.
  expect(bodyOf(response).price.total).toEqual({ amount_minor: 830, currency: 'EUR' });
  const seconds = (timestamp: string) => Math.floor(Date.parse(timestamp) / 1000);
  expect(seconds(bodyOf(response).departure_time)).toBe(seconds(bodyOf(response).segment.departure_time));
  expect(Date.parse(bodyOf(response).segment.departure_time) - trip.departureTime.getTime()).toBeGreaterThan(
    69 * 60_000,
  );
});

it('refuses stops off the route or out of travel order the same way over REST and gRPC, naming the field', async () => {
  const offRoute = await request(restApp.callback())
    .post('/v1/bookings')
    .set('Authorization', `Bearer ${token}`)
    .set('Idempotency-Key', randomUUID())
    .send({ ...restBookingBody(trip, '4A'), boarding_stop: 'NOWHERE1' });
  expect(offRoute.status).toBe(400);
  expect(bodyOf(offRoute).code).toBe('VALIDATION_FAILED');
  expect(bodyOf(offRoute).errors.map((error: { field: string }) => error.field)).toEqual(['boarding_stop']);

  const reversed = await restCreate('4A', { boarding: 2, alighting: 1 });
  expect(reversed.status).toBe(400);
  expect(bodyOf(reversed).errors.map((error: { field: string }) => error.field)).toEqual(['alighting_stop']);

  for (const stops of [
    { boardingStop: 'NOWHERE1' },
    { boardingStop: trip.stopCodes[2], alightingStop: trip.stopCodes[1] },
  ]) {
    const failure = await client
      .createBooking({
        requestId: randomUUID(),
        tripId: trip.tripId,
        passengers: [
          {
            firstName: 'Ana',
            lastName: 'Silva',
            email: 'ana@example.com',
            seatNumber: '4A',
            fareClass: 'STANDARD',
          },
        ],
        contactEmail: 'ana@example.com',
        ...stops,
      })
      .then(
        () => undefined,
        (error: unknown) => error as BookingServiceCallError,
      );
    expect(failure).toBeInstanceOf(BookingServiceCallError);
    expect(`${status[failure!.code]}/${failure!.reason}`).toBe('INVALID_ARGUMENT/VALIDATION_FAILED');
  }
});

it('frees the seat of a cancelled whole-route booking for the segments within it', async () => {
  const whole = await restCreate('4B', {});
  expect(await restOutcome('4B', { alighting: 1 })).toBe('SEAT_UNAVAILABLE');
  const cancelled = await request(restApp.callback())
    .put(`/v1/bookings/${bodyOf(whole).id}/cancel`)
    .set('Authorization', `Bearer ${token}`)
    .set('Idempotency-Key', randomUUID())
    .send({});
  expect(cancelled.status).toBe(200);
  expect(await restOutcome('4B', { alighting: 1 })).toMatch(/^OK /);
  expect(await grpcOutcome('4B', { boarding: 1 })).toMatch(/^OK /);
  expect(await activeLegs('4B')).toEqual(['[0,1)', '[1,3)']);
});

describe('create → pay → change segment → cancel', () => {
  it('runs over REST with the local times at the stops', async () => {
    const auth = { Authorization: `Bearer ${token}` };
    const api = request(restApp.callback());
    const created = bodyOf(await restCreate('3B', { alighting: 1 }));
    const paid = await api
      .post(`/v1/bookings/${created.id}/payment`)
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({ payment_token: 'tok_visa' });
    expect(paid.status).toBe(200);
    const changed = await api
      .patch(`/v1/bookings/${created.id}`)
      .set(auth)
      .set('If-Match', String(paid.headers.etag))
      .set('Idempotency-Key', randomUUID())
      .send({ alighting_stop: trip.stopCodes[3] });
    expect(changed.status).toBe(200);
    expect(bodyOf(changed).segment.alighting_stop.code).toBe(trip.stopCodes[3]);
    expect(bodyOf(changed).price.total.amount_minor).toBe(2500);
    expect(await activeLegs('3B')).toEqual(['[0,1)', '[1,3)']);
    const cancelled = await api
      .put(`/v1/bookings/${created.id}/cancel`)
      .set(auth)
      .set('Idempotency-Key', randomUUID())
      .send({});
    expect(cancelled.status).toBe(200);
    expect(await activeLegs('3B')).toEqual([]);
    process.stdout.write(
      `REST flow: ${[created, paid.body, changed.body, cancelled.body]
        .map((body) => {
          const booking = body as BookingJson & { status: string; amount_paid: { amount_minor: number } };
          return `${booking.status} ${booking.segment.boarding_stop.code} ${booking.segment.departure_time} → ${booking.segment.alighting_stop.code} ${booking.segment.arrival_time} total ${booking.price.total.amount_minor} paid ${booking.amount_paid.amount_minor}`;
        })
        .join('\n  ')}\n`,
    );
  });

  it('runs over gRPC, a shorter segment refunding the difference', async () => {
    const created = (await grpcCreate('3C', { boarding: 0 })).booking!;
    const paid = (await client.confirmPayment({ bookingId: created.id, paymentToken: 'tok_visa' })).booking!;
    const changed = (
      await client.updateBooking({
        bookingId: created.id,
        expectedVersion: paid.version,
        boardingStop: trip.stopCodes[2],
      })
    ).booking!;
    expect(changed.segment?.boardingStop?.code).toBe(trip.stopCodes[2]);
    expect(await activeLegs('3C')).toEqual(['[2,3)']);
    const cancelled = (await client.cancelBooking({ bookingId: created.id })).booking!;
    expect(await activeLegs('3C')).toEqual([]);
    process.stdout.write(
      `gRPC flow: ${[created, paid, changed, cancelled]
        .map(
          (booking) =>
            `${booking.status} ${booking.segment?.boardingStop?.code} ${booking.segment?.departureTime} → ${booking.segment?.alightingStop?.code} ${booking.segment?.arrivalTime} total ${booking.price?.total?.amountMinor} paid ${booking.amountPaid?.amountMinor} refunded ${booking.amountRefunded?.amountMinor}`,
        )
        .join('\n  ')}\n`,
    );
  });
});

describe('availability by segment', () => {
  it('gives per trip the seats free on every leg of the segment, its lowest price and its times', async () => {
    const catalog = createCatalogApplication({ database: saga.database });
    expect(await restOutcome('4C', { boarding: 1, alighting: 2 })).toMatch(/^OK /);
    // The travel date is the local date at the boarding stop, 70 minutes after the trip's departure per stop.
    const dateAt = (boardingPosition: number) =>
      localDate(
        new Date(trip.departureTime.getTime() + boardingPosition * 70 * 60_000).toISOString(),
        'Europe/Lisbon',
      );
    const date = dateAt(0);
    const seatOf = async (segment: SegmentRequest) => {
      const boardingPosition = Math.max(0, trip.stopCodes.indexOf(segment.boardingStopCode ?? ''));
      const availability = await catalog.getRouteAvailability(
        trip.routeId,
        dateAt(boardingPosition),
        segment,
      );
      const [tripAvailability] = availability.trips;
      return {
        seat: tripAvailability.seatMap.find((seat) => seat.seatNumber === '4C')?.status,
        price: tripAvailability.lowestPrice.amountMinor,
        departure: tripAvailability.departureTime,
      };
    };
    const [origin, coimbra, aveiro, porto] = trip.stopCodes;
    expect(await seatOf({ alightingStopCode: coimbra })).toMatchObject({ seat: 'FREE', price: 830 });
    expect(await seatOf({ boardingStopCode: aveiro })).toMatchObject({ seat: 'FREE', price: 830 });
    expect(await seatOf({ boardingStopCode: coimbra, alightingStopCode: porto })).toMatchObject({
      seat: 'TAKEN',
      price: 1670,
    });
    const whole = await seatOf({});
    expect(whole).toMatchObject({ seat: 'TAKEN', price: 2500 });
    expect(Date.parse(whole.departure)).toBe(trip.departureTime.getTime());
    const fromCoimbra = await seatOf({ boardingStopCode: coimbra });
    expect(Date.parse(fromCoimbra.departure) - trip.departureTime.getTime()).toBe(70 * 60_000);

    await expect(
      catalog.getRouteAvailability(trip.routeId, date, { boardingStopCode: 'NOWHERE1' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      fieldViolations: [{ field: 'boarding_stop' }],
    });
    await expect(
      catalog.getRouteAvailability(trip.routeId, date, {
        boardingStopCode: aveiro,
        alightingStopCode: origin,
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED', fieldViolations: [{ field: 'alighting_stop' }] });
  });
});
