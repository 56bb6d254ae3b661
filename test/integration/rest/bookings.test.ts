// The booking operations over HTTP against the real saga (Temporal workers, PostgreSQL): each operation's
// answers and error codes, ETag / If-Match, Location, and Idempotency-Key replay.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { paymentLedger } from '../../support/booking-records';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import {
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';
import { insertUser, type TestUser } from '../../support/users';
import { eventually } from '../../support/outcomes';

// Starting the saga's workers (a webpack bundle) and driving Temporal take longer than jest's default.
jest.setTimeout(120_000);

let saga: SagaEnvironment;
let database: Knex;
let trip: TestTrip;
let server: RunningServer;
let shortHoldServer: RunningServer;
let cappedServer: RunningServer;
let customer: TestUser;
let otherCustomer: TestUser;
let agent: TestUser;
const tokens: Record<string, string> = {};
let nextSeat = 0;
let issuer: Awaited<ReturnType<typeof createTokenIssuer>>;

beforeAll(async () => {
  // Many holds stay open in this file; the per-customer cap has a test (and a server) of its own.
  saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '200' } });
  database = saga.database;
  trip = await createTrip(database, { seatCount: 48, premiumRows: 1 });
  issuer = await createTokenIssuer();
  customer = await insertUser(database, saga.cipher, { roles: ['customer'] });
  otherCustomer = await insertUser(database, saga.cipher, { roles: ['customer'] });
  agent = await insertUser(database, saga.cipher, { roles: ['agent'] });
  tokens.customer = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  tokens.other = await issuer.issueToken({ userId: otherCustomer.id, roles: ['customer'] });
  tokens.agent = await issuer.issueToken({ userId: agent.id, roles: ['agent'] });
  tokens.readOnly = await issuer.issueToken({
    userId: customer.id,
    roles: ['customer'],
    scopes: ['bookings:read'],
  });
  const common = { database, cipher: saga.cipher, operationGuard: issuer.operationGuard };
  server = await startServer(buildApp({ ...common, bookings: saga.application }));
  shortHoldServer = await startServer(
    buildApp({
      ...common,
      bookings: saga.applicationWith({ BOOKING_HOLD_SECONDS: '2' }),
      settings: testSettings(),
    }),
  );
  cappedServer = await startServer(
    buildApp({ ...common, bookings: saga.applicationWith({ BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '1' }) }),
  );
});

afterAll(async () => {
  await server?.close();
  await shortHoldServer?.close();
  await cappedServer?.close();
  await saga?.stop();
});

/** Seats no other test of this file has used (the first row is PREMIUM). */
function freshSeats(count: number): string[] {
  const seats = trip.seatNumbers.slice(4 + nextSeat, 4 + nextSeat + count);
  nextSeat += count;
  return seats;
}

function createBody(seats: string[], overrides: Record<string, unknown> = {}) {
  return {
    trip_id: trip.tripId,
    passengers: seats.map((seat, index) => ({
      first_name: `Passenger${index + 1}`,
      last_name: 'Silva',
      email: `passenger${index + 1}@example.com`,
      seat_number: seat,
      fare_class: 'STANDARD',
    })),
    contact_email: 'contact@example.com',
    contact_phone: '+351912345678',
    ...overrides,
  };
}

interface Call {
  method?: string;
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  base?: RunningServer;
}

async function call(path: string, options: Call = {}): Promise<ObservedResponse> {
  const token = options.token === undefined ? tokens.customer : options.token;
  const headers: Record<string, string> = { ...options.headers };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${(options.base ?? server).baseUrl}${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return observe(response);
}

interface BookingJson {
  id: string;
  status: string;
  version: number;
  passengers: { id: string; seat_number: string }[];
  hold_expires_at: string | null;
  cancellation_reason: string | null;
  payment: { status: string; method: string | null };
}

async function createBooking(seats: string[], token = tokens.customer): Promise<BookingJson> {
  const response = await call('/v1/bookings', { method: 'POST', body: createBody(seats), token });
  expect(response.status).toBe(201);
  return response.body as BookingJson;
}

function codeOf(response: ObservedResponse): string | undefined {
  return (response.body as { code?: string }).code;
}

/** As if the API process had died after doing the work, before storing its answer: in flight, lock past. */
async function abandonKey(userId: string, key: string): Promise<void> {
  const updated = await database('idempotency_keys')
    .where({ customer_id: userId, key })
    .update({
      state: 'IN_FLIGHT',
      response_status: null,
      response_body: null,
      response_headers: null,
      locked_until: database.raw(`now() - interval '1 second'`),
    });
  expect(updated).toBe(1);
}

describe('POST /v1/bookings (createBooking)', () => {
  it('holds the seats and answers 201 with Location, ETag and the pending booking', async () => {
    const seats = freshSeats(2);
    const response = await call('/v1/bookings', { method: 'POST', body: createBody(seats) });
    expectContract('createBooking', response);
    expect(response.status).toBe(201);
    const booking = response.body as BookingJson;
    expect(response.headers.location).toBe(`/v1/bookings/${booking.id}`);
    expect(response.headers.etag).toBe('"1"');
    expect(booking).toMatchObject({ status: 'PENDING_PAYMENT', version: 1, payment: { status: 'NONE' } });
    expect(booking.passengers.map((passenger) => passenger.seat_number)).toEqual(seats);
    expect(booking.hold_expires_at).not.toBeNull();
  });

  it('links the new booking under /api when created through /api', async () => {
    const response = await call('/api/bookings', { method: 'POST', body: createBody(freshSeats(1)) });
    expectContract('createBookingApi', response);
    expect(response.headers.location).toBe(`/api/bookings/${(response.body as BookingJson).id}`);
  });

  it('answers 409 SEAT_UNAVAILABLE for a taken seat and holds nothing', async () => {
    const seats = freshSeats(1);
    await createBooking(seats);
    const response = await call('/v1/bookings', {
      method: 'POST',
      body: createBody([...seats, ...freshSeats(1)]),
      token: tokens.other,
    });
    expectContract('createBooking', response);
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('SEAT_UNAVAILABLE');
    const held = await database('bookings').where({ customer_id: otherCustomer.id }).count({ count: '*' });
    expect(Number(held[0].count)).toBe(0);
  });

  it('answers 404 NOT_FOUND for an unknown trip', async () => {
    const response = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1), { trip_id: randomUUID() }),
    });
    expectContract('createBooking', response);
    expect(response.status).toBe(404);
    expect(codeOf(response)).toBe('NOT_FOUND');
  });

  it('answers 400 for rules only the application knows, such as a seat given twice', async () => {
    const [seat] = freshSeats(1);
    const response = await call('/v1/bookings', { method: 'POST', body: createBody([seat, seat]) });
    expectContract('createBooking', response);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'passengers[0].seat_number' }, { field: 'passengers[1].seat_number' }],
    });
  });

  it('answers 429 RATE_LIMITED with Retry-After past the cap on open holds per customer', async () => {
    const holder = await insertUser(database, saga.cipher, { roles: ['customer'] });
    const token = await issuer.issueToken({ userId: holder.id, roles: ['customer'] });
    const first = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      token,
      base: cappedServer,
    });
    expect(first.status).toBe(201);
    const second = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      token,
      base: cappedServer,
    });
    expectContract('createBooking', second);
    expect([second.status, codeOf(second)]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('answers 401 without a token and 403 without the bookings:write scope', async () => {
    const anonymous = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      token: null,
    });
    expectContract('createBooking', anonymous);
    expect(anonymous.status).toBe(401);
    const readOnly = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      token: tokens.readOnly,
    });
    expectContract('createBooking', readOnly);
    expect(readOnly.status).toBe(403);
  });
});

describe('Idempotency-Key on POST /v1/bookings', () => {
  it('replays the first response to a repeat with the same key and body, creating one booking', async () => {
    const key = randomUUID();
    const body = createBody(freshSeats(1));
    const first = await call('/v1/bookings', { method: 'POST', body, headers: { 'idempotency-key': key } });
    const again = await call('/v1/bookings', {
      method: 'POST',
      body,
      headers: { 'idempotency-key': key, 'x-request-id': 'the-retry' },
    });
    expectContract('createBooking', again);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-request-id']).toBe('the-retry');
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED to the same key with another body', async () => {
    const key = randomUUID();
    await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      headers: { 'idempotency-key': key },
    });
    const response = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      headers: { 'idempotency-key': key },
    });
    expectContract('createBooking', response);
    expect(response.status).toBe(422);
    expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('lets simultaneous repeats create one booking, answering 409 IDEMPOTENCY_KEY_IN_USE meanwhile', async () => {
    const key = randomUUID();
    const body = createBody(freshSeats(1));
    const responses = await Promise.all(
      Array.from({ length: 4 }, () =>
        call('/v1/bookings', { method: 'POST', body, headers: { 'idempotency-key': key } }),
      ),
    );
    const created = responses.filter((response) => response.status === 201);
    expect(
      responses.map((response) => response.status).filter((status) => status !== 201 && status !== 409),
    ).toEqual([]);
    const inUse = responses.filter((response) => response.status === 409);
    expect(created.length + inUse.length).toBe(4);
    expect(new Set(created.map((response) => (response.body as BookingJson).id)).size).toBe(1);
    for (const response of inUse) {
      expectContract('createBooking', response);
      expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(response.headers['retry-after']).toBe('1');
    }
  });

  it('keeps keys per customer: another customer’s identical key is a new request', async () => {
    const key = randomUUID();
    const mine = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      headers: { 'idempotency-key': key },
    });
    const theirs = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      headers: { 'idempotency-key': key },
      token: tokens.other,
    });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect((theirs.body as BookingJson).id).not.toBe((mine.body as BookingJson).id);
  });

  it('a retry taking over the key of a create whose process died lands on the booking it started', async () => {
    const key = randomUUID();
    const body = createBody(freshSeats(1));
    const create = () => call('/v1/bookings', { method: 'POST', body, headers: { 'idempotency-key': key } });
    const first = await create();
    expect(first.status).toBe(201);
    await abandonKey(customer.id, key);

    const retried = await create();
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body).toEqual(first.body);
    const seat = body.passengers[0].seat_number;
    const holders = await database('seat_allocations')
      .where({ trip_id: trip.tripId, seat_number: seat })
      .whereIn('state', ['HELD', 'BOOKED'])
      .pluck('booking_id');
    expect(holders).toEqual([(first.body as BookingJson).id]);
  });
});

describe('GET /v1/bookings (listBookings)', () => {
  it('lists only the caller’s bookings, filtered and paged', async () => {
    const mine = [
      await createBooking(freshSeats(1), tokens.other),
      await createBooking(freshSeats(1), tokens.other),
    ];
    const all = await call('/v1/bookings?status=PENDING_PAYMENT', { token: tokens.other });
    expectContract('listBookings', all);
    const listed = (all.body as { bookings: BookingJson[] }).bookings.map((booking) => booking.id);
    expect(listed).toEqual(expect.arrayContaining(mine.map((booking) => booking.id)));
    const customerIds = await database('bookings').whereIn('id', listed).distinct().pluck('customer_id');
    expect(customerIds).toEqual([otherCustomer.id]);

    const firstPage = await call('/api/bookings?page_size=1', { token: tokens.other });
    expectContract('listBookingsApi', firstPage);
    const { bookings, next_page_token: token } = firstPage.body as {
      bookings: BookingJson[];
      next_page_token: string;
    };
    expect(bookings).toHaveLength(1);
    const secondPage = await call(`/api/bookings?page_size=1&page_token=${encodeURIComponent(token)}`, {
      token: tokens.other,
    });
    expect((secondPage.body as { bookings: BookingJson[] }).bookings[0].id).not.toBe(bookings[0].id);

    const confirmed = await call('/v1/bookings?status=CONFIRMED', { token: tokens.other });
    expect((confirmed.body as { bookings: BookingJson[] }).bookings).toEqual([]);
  });

  it('answers 400 to a bad filter, page size or page token, 401 and 403 as the guard decides', async () => {
    for (const query of ['status=LOST', 'page_size=0', 'page_token=%21%21']) {
      const response = await call(`/v1/bookings?${query}`);
      expectContract('listBookings', response);
      expect(response.status).toBe(400);
    }
    expect((await call('/v1/bookings', { token: null })).status).toBe(401);
  });
});

describe('GET /v1/bookings/{booking_id} (getBooking)', () => {
  it('returns the booking with its version as ETag, to its owner and to staff', async () => {
    const booking = await createBooking(freshSeats(1));
    const mine = await call(`/v1/bookings/${booking.id}`);
    expectContract('getBooking', mine);
    expect(mine.headers.etag).toBe(`"${booking.version}"`);
    expect(mine.body).toEqual(booking);
    const staff = await call(`/api/bookings/${booking.id}`, { token: tokens.agent });
    expectContract('getBookingApi', staff);
    expect(staff.status).toBe(200);
  });

  it('answers 404 for another customer’s booking exactly as for a missing one, 400 for a bad id', async () => {
    const booking = await createBooking(freshSeats(1));
    const foreign = await call(`/v1/bookings/${booking.id}`, { token: tokens.other });
    expectContract('getBooking', foreign);
    expect(foreign.status).toBe(404);
    const missing = await call(`/v1/bookings/${randomUUID()}`, { token: tokens.other });
    expect(missing.status).toBe(404);
    expect(Object.keys(foreign.body as object).sort()).toEqual(Object.keys(missing.body as object).sort());
    const malformed = await call('/v1/bookings/42');
    expectContract('getBooking', malformed);
    expect(malformed.status).toBe(400);
  });
});

describe('PATCH /v1/bookings/{booking_id} (updateBooking)', () => {
  it('changes a seat when If-Match carries the current ETag, and moves the ETag on', async () => {
    const booking = await createBooking(freshSeats(1));
    const [newSeat] = freshSeats(1);
    const response = await call(`/v1/bookings/${booking.id}`, {
      method: 'PATCH',
      headers: { 'if-match': `"${booking.version}"` },
      body: { seat_changes: [{ passenger_id: booking.passengers[0].id, seat_number: newSeat }] },
    });
    expectContract('updateBooking', response);
    expect(response.status).toBe(200);
    expect((response.body as BookingJson).passengers[0].seat_number).toBe(newSeat);
    expect(response.headers.etag).toBe(`"${booking.version + 1}"`);
  });

  it('answers 412 VERSION_MISMATCH with the current ETag to a stale If-Match', async () => {
    const booking = await createBooking(freshSeats(1));
    const rename = (version: number, lastName: string) =>
      call(`/v1/bookings/${booking.id}`, {
        method: 'PATCH',
        headers: { 'if-match': `"${version}"` },
        body: { passenger_updates: [{ passenger_id: booking.passengers[0].id, last_name: lastName }] },
      });
    expect((await rename(booking.version, 'Santos')).status).toBe(200);
    const stale = await rename(booking.version, 'Costa');
    expectContract('updateBooking', stale);
    expect(stale.status).toBe(412);
    expect(codeOf(stale)).toBe('VERSION_MISMATCH');
    expect(stale.headers.etag).toBe(`"${booking.version + 1}"`);
  });

  it('takes If-Match: * as a match for whatever version is current (RFC 9110)', async () => {
    const booking = await createBooking(freshSeats(1));
    const rename = (lastName: string) =>
      call(`/v1/bookings/${booking.id}`, {
        method: 'PATCH',
        headers: { 'if-match': '*' },
        body: { passenger_updates: [{ passenger_id: booking.passengers[0].id, last_name: lastName }] },
      });
    const first = await rename('Santos');
    expectContract('updateBooking', first);
    expect([first.status, first.headers.etag]).toEqual([200, `"${booking.version + 1}"`]);
    const second = await rename('Costa');
    expect([second.status, second.headers.etag]).toEqual([200, `"${booking.version + 2}"`]);
    expect((second.body as BookingJson).passengers[0]).toMatchObject({ last_name: 'Costa' });
  });

  it('answers 428 without If-Match (RFC 6585), before looking at the rest of the request', async () => {
    const booking = await createBooking(freshSeats(1));
    for (const body of [
      { passenger_updates: [{ passenger_id: booking.passengers[0].id, last_name: 'Santos' }] },
      {},
    ]) {
      const response = await call(`/v1/bookings/${booking.id}`, { method: 'PATCH', body });
      expectContract('updateBooking', response);
      expect(response.status).toBe(428);
      expect(response.body).toMatchObject({
        status: 428,
        title: 'Precondition required',
        code: 'VALIDATION_FAILED',
        errors: [{ field: 'If-Match' }],
      });
    }
    const unchanged = await call(`/v1/bookings/${booking.id}`);
    expect(unchanged.headers.etag).toBe(`"${booking.version}"`);
  });

  it('answers 409 for a taken seat or a cancelled booking, 404 for a foreign booking', async () => {
    const booking = await createBooking(freshSeats(1));
    const [takenSeat] = freshSeats(1);
    await createBooking([takenSeat], tokens.other);
    const change = (headers: Record<string, string>, token = tokens.customer) =>
      call(`/v1/bookings/${booking.id}`, {
        method: 'PATCH',
        headers,
        token,
        body: { seat_changes: [{ passenger_id: booking.passengers[0].id, seat_number: takenSeat }] },
      });
    const taken = await change({ 'if-match': '"1"' });
    expectContract('updateBooking', taken);
    expect([taken.status, codeOf(taken)]).toEqual([409, 'SEAT_UNAVAILABLE']);

    const foreign = await change({ 'if-match': '"1"' }, tokens.other);
    expect(foreign.status).toBe(404);

    await call(`/v1/bookings/${booking.id}/cancel`, { method: 'PUT' });
    const cancelled = await change({ 'if-match': '"2"' });
    expectContract('updateBooking', cancelled);
    expect([cancelled.status, codeOf(cancelled)]).toEqual([409, 'BOOKING_STATE_CONFLICT']);
  });
});

describe('PUT /v1/bookings/{booking_id}/cancel (cancelBooking)', () => {
  it('cancels with a reason, and a repeat answers 200 with the booking unchanged', async () => {
    const booking = await createBooking(freshSeats(1));
    const first = await call(`/v1/bookings/${booking.id}/cancel`, {
      method: 'PUT',
      body: { reason: 'Plans changed' },
    });
    expectContract('cancelBooking', first);
    expect(first.body).toMatchObject({
      status: 'CANCELLED',
      cancellation_reason: 'Plans changed',
      hold_expires_at: null,
    });
    const repeat = await call(`/api/bookings/${booking.id}/cancel`, { method: 'PUT' });
    expectContract('cancelBookingApi', repeat);
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(first.body);
  });

  it('answers 400 to an unknown field and 404 for another customer’s booking', async () => {
    const booking = await createBooking(freshSeats(1));
    const unknownField = await call(`/v1/bookings/${booking.id}/cancel`, {
      method: 'PUT',
      body: { refund: 'all' },
    });
    expectContract('cancelBooking', unknownField);
    expect(unknownField.status).toBe(400);
    const foreign = await call(`/v1/bookings/${booking.id}/cancel`, { method: 'PUT', token: tokens.other });
    expectContract('cancelBooking', foreign);
    expect(foreign.status).toBe(404);
  });
});

describe('POST /v1/bookings/{booking_id}/payment (confirmPayment)', () => {
  it('confirms and charges once, replaying the answer to a repeat with the same Idempotency-Key', async () => {
    const booking = await createBooking(freshSeats(1));
    const key = randomUUID();
    const pay = () =>
      call(`/v1/bookings/${booking.id}/payment`, {
        method: 'POST',
        body: { payment_token: 'tok_visa' },
        headers: { 'idempotency-key': key },
      });
    const first = await pay();
    expectContract('confirmPayment', first);
    expect(first.body).toMatchObject({
      status: 'CONFIRMED',
      payment: { status: 'CAPTURED', method: 'visa •••• 4242' },
    });
    expect(first.headers.etag).toBe(`"${(first.body as BookingJson).version}"`);
    const again = await pay();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await paymentLedger(database, booking.id)).charges).toHaveLength(1);

    const otherBody = await call(`/api/bookings/${booking.id}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_mastercard' },
      headers: { 'idempotency-key': key },
    });
    expectContract('confirmPaymentApi', otherBody);
    expect([otherBody.status, codeOf(otherBody)]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
  });

  it('a retry taking over the key of a payment whose process died answers that payment, charging once', async () => {
    const booking = await createBooking(freshSeats(1));
    const key = randomUUID();
    const pay = () =>
      call(`/v1/bookings/${booking.id}/payment`, {
        method: 'POST',
        body: { payment_token: 'tok_visa' },
        headers: { 'idempotency-key': key },
      });
    const first = await pay();
    expect(first.status).toBe(200);
    await abandonKey(customer.id, key);

    const retried = await pay();
    expectContract('confirmPayment', retried);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body).toEqual(first.body);
    expect((await paymentLedger(database, booking.id)).charges).toHaveLength(1);
  });

  it('answers 402 PAYMENT_DECLINED and keeps the hold, so a later payment succeeds', async () => {
    const booking = await createBooking(freshSeats(1));
    const declined = await call(`/v1/bookings/${booking.id}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_chargeDeclined' },
    });
    expectContract('confirmPayment', declined);
    expect([declined.status, codeOf(declined)]).toEqual([402, 'PAYMENT_DECLINED']);
    const paid = await call(`/v1/bookings/${booking.id}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
    });
    expect((paid.body as BookingJson).status).toBe('CONFIRMED');
  });

  it('answers 409 BOOKING_STATE_CONFLICT for a cancelled booking and 404 for a foreign one', async () => {
    const booking = await createBooking(freshSeats(1));
    const foreign = await call(`/v1/bookings/${booking.id}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
      token: tokens.other,
    });
    expectContract('confirmPayment', foreign);
    expect(foreign.status).toBe(404);
    await call(`/v1/bookings/${booking.id}/cancel`, { method: 'PUT' });
    const cancelled = await call(`/v1/bookings/${booking.id}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
    });
    expectContract('confirmPayment', cancelled);
    expect([cancelled.status, codeOf(cancelled)]).toEqual([409, 'BOOKING_STATE_CONFLICT']);
  });

  it('answers 409 HOLD_EXPIRED once the hold has lapsed', async () => {
    const created = await call('/v1/bookings', {
      method: 'POST',
      body: createBody(freshSeats(1)),
      base: shortHoldServer,
    });
    expect(created.status).toBe(201);
    const bookingId = (created.body as BookingJson).id;
    await eventually(
      async () => (await call(`/v1/bookings/${bookingId}`, { base: shortHoldServer })).body as BookingJson,
      (booking) => booking.status === 'EXPIRED',
      { intervalMs: 100 },
    );
    const late = await call(`/v1/bookings/${bookingId}/payment`, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
      base: shortHoldServer,
    });
    expectContract('confirmPayment', late);
    expect([late.status, codeOf(late)]).toEqual([409, 'HOLD_EXPIRED']);
  });

  it('answers 400 to a card number instead of a gateway token', async () => {
    const booking = await createBooking(freshSeats(1));
    const response = await call(`/v1/bookings/${booking.id}/payment`, {
      method: 'POST',
      body: { payment_token: '4242424242424242' },
    });
    expectContract('confirmPayment', response);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ errors: [{ field: 'payment_token' }] });
  });
});
