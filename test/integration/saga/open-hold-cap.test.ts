// The per-customer cap on open holds holds under concurrency: across requests, fronts and API processes.
import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { BookingServiceCallError, createBookingClient } from '../../../src/api/grpc/client';
import type { Actor } from '../../../src/domain/actor';
import { startApiProcess, type ApiProcess } from '../../support/api-process';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { actorOf, createCustomer, insertLoginUser } from '../../support/users';
import { errorCodeOf } from '../../support/outcomes';

// Two child processes (tsx) and the saga's workers take a while to start on a busy machine.
jest.setTimeout(180_000);

const cap = 5;
const creates = 20;
// One issuer for both processes: the signing keys in PostgreSQL are the issuer's, so either accepts the other's tokens.
const issuer = `https://issuer-${randomUUID()}.open-hold-cap.example`;

let saga: SagaEnvironment;
let trip: TestTrip;
let apiProcesses: ApiProcess[] = [];

beforeAll(async () => {
  const environment = { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: String(cap) };
  saga = await startSagaEnvironment({ environment });
  trip = await createTrip(saga.database, { seatCount: 40 });
  // Two processes, each with its own connection pool and Temporal client, as two API replicas behind a balancer.
  apiProcesses = await Promise.all(
    [1, 2].map(() =>
      startApiProcess({
        configuration: { ...environment, IDP_ISSUER: issuer },
        taskQueueNames: saga.taskQueueNames,
      }),
    ),
  );
});

afterAll(async () => {
  await Promise.allSettled(apiProcesses.map((apiProcess) => apiProcess.stop()));
  await saga?.database('identity_signing_keys').where({ issuer }).delete();
  await saga?.stop();
});

/** `created`, `rate-limited`, or a description of anything else, which fails the tally. */
type Outcome = string;

async function createOverRest(apiProcess: ApiProcess, token: string, seat: string): Promise<Outcome> {
  const response = await fetch(`${apiProcess.restBaseUrl}/v1/bookings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
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
    }),
  });
  const body = (await response.json()) as { code?: string };
  if (response.status === 201) return 'created';
  if (response.status === 429 && body.code === 'RATE_LIMITED') return 'rate-limited';
  return `REST ${response.status} ${JSON.stringify(body)}`;
}

async function createOverGrpc(apiProcess: ApiProcess, token: string, seat: string): Promise<Outcome> {
  const client = createBookingClient({ address: apiProcess.grpcAddress, insecure: true, token });
  try {
    await client.createBooking(
      {
        tripId: trip.tripId,
        passengers: [
          {
            firstName: 'Ana',
            lastName: 'Silva',
            email: 'ana@example.com',
            seatNumber: seat,
            fareClass: 'STANDARD',
          },
        ],
        contactEmail: 'ana@example.com',
      },
      { timeoutMs: 60_000 },
    );
    return 'created';
  } catch (error) {
    if (!(error instanceof BookingServiceCallError)) throw error;
    // RESOURCE_EXHAUSTED with reason RATE_LIMITED, as REST's 429.
    if (error.code === status.RESOURCE_EXHAUSTED && error.reason === 'RATE_LIMITED') return 'rate-limited';
    return `gRPC ${error.code} ${error.reason} ${error.message}`;
  } finally {
    client.close();
  }
}

async function heldBookingsOf(customer: Actor): Promise<number> {
  const rows = await saga
    .database('bookings')
    .where({ customer_id: customer.userId, status: 'PENDING_PAYMENT' })
    .count<{ count: string }[]>('id as count');
  return Number(rows[0].count);
}

test('twenty concurrent creates of one customer over two API processes, REST and gRPC, hold only the cap', async () => {
  const account = await insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] });
  const customer = actorOf(account);
  const token = await apiProcesses[0].signIn(account.email, account.password);
  const seats = trip.seatNumbers.slice(0, creates);

  // Half to each process, and in each process half over REST and half over gRPC, all at once.
  const outcomes = await Promise.all(
    seats.map((seat, index) => {
      const apiProcess = apiProcesses[index % 2];
      return Math.floor(index / 2) % 2 === 0
        ? createOverRest(apiProcess, token, seat)
        : createOverGrpc(apiProcess, token, seat);
    }),
  );

  const tally = outcomes.reduce<Record<string, number>>(
    (counts, outcome) => ({ ...counts, [outcome]: (counts[outcome] ?? 0) + 1 }),
    {},
  );
  expect(tally).toEqual({ created: cap, 'rate-limited': creates - cap });
  expect(await heldBookingsOf(customer)).toBe(cap);
  // Refused creates started no workflow: no seat beyond the cap's is held.
  const heldSeats = await saga
    .database('seat_allocations')
    .where({ trip_id: trip.tripId, state: 'HELD' })
    .count<{ count: string }[]>('id as count');
  expect(Number(heldSeats[0].count)).toBe(cap);
});

test('a retried create (same booking id) at the cap lands on its booking and takes no second slot', async () => {
  const customer = await createCustomer(saga.database, saga.cipher);
  const seats = trip.seatNumbers.slice(creates, creates + cap + 1);
  const bookingId = randomUUID();
  const first = await saga.application.createBooking(customer, bookingRequest(trip, [seats[0]]), {
    bookingId,
  });
  for (const seat of seats.slice(1, cap)) {
    await saga.application.createBooking(customer, bookingRequest(trip, [seat]));
  }

  const retried = await saga.application.createBooking(customer, bookingRequest(trip, [seats[0]]), {
    bookingId,
  });

  expect(retried).toMatchObject({ id: first.id, status: 'PENDING_PAYMENT' });
  expect(await heldBookingsOf(customer)).toBe(cap);
  expect(
    await errorCodeOf(saga.application.createBooking(customer, bookingRequest(trip, [seats[cap]]))),
  ).toBe('RATE_LIMITED');
});

test('a create that ended without a booking frees its slot', async () => {
  const customer = await createCustomer(saga.database, saga.cipher);
  const seats = trip.seatNumbers.slice(creates + cap + 1);
  for (const seat of seats.slice(0, cap - 1)) {
    await saga.application.createBooking(customer, bookingRequest(trip, [seat]));
  }
  // The seat is already held by this customer's first booking: the workflow ends without a booking.
  expect(await errorCodeOf(saga.application.createBooking(customer, bookingRequest(trip, [seats[0]])))).toBe(
    'SEAT_UNAVAILABLE',
  );

  const last = await saga.application.createBooking(customer, bookingRequest(trip, [seats[cap - 1]]));

  expect(last.status).toBe('PENDING_PAYMENT');
  expect(await heldBookingsOf(customer)).toBe(cap);
});
