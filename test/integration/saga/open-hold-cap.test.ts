// The per-customer cap on open holds holds under concurrency: across requests, fronts and API processes.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { BookingServiceCallError, createBookingClient } from '../../../src/api/grpc/client';
import type { Actor } from '../../../src/domain/actor';
import { scopesForRoles } from '../../../src/security/policy';
import { startApiProcess, type ApiProcess } from '../../support/api-process-launcher';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga-environment';
import {
  bookingRequest,
  createSagaCustomer,
  createSagaTrip,
  errorCodeOf,
  type SagaTrip,
} from '../../support/saga-fixtures';

// Two child processes (tsx) and the saga's workers take a while to start on a busy machine.
jest.setTimeout(180_000);

const cap = 5;
const creates = 20;
const issuer = `https://issuer-${randomUUID()}.open-hold-cap.example`;
const audience = 'bus-booking-api';

let saga: SagaEnvironment;
let trip: SagaTrip;
let apiProcesses: ApiProcess[] = [];
let signToken: (subject: string) => Promise<string>;

beforeAll(async () => {
  const environment = { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: String(cap) };
  saga = await startSagaEnvironment({ environment });
  trip = await createSagaTrip(saga.database, { seatCount: 40 });
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const keyId = `open-hold-cap-${randomUUID()}`;
  const signingKey = { ...(await exportJWK(publicKey)), kid: keyId, alg: 'RS256', use: 'sig' };
  signToken = (subject) =>
    new SignJWT({ scope: scopesForRoles(['customer']).join(' '), roles: ['customer'] })
      .setProtectedHeader({ alg: 'RS256', kid: keyId, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
  // Two processes, each with its own connection pool and Temporal client, as two API replicas behind a balancer.
  apiProcesses = await Promise.all(
    [1, 2].map(() =>
      startApiProcess({
        configuration: environment,
        taskQueueNames: saga.taskQueueNames,
        issuer,
        signingKey,
      }),
    ),
  );
});

afterAll(async () => {
  await Promise.allSettled(apiProcesses.map((apiProcess) => apiProcess.stop()));
  await saga?.stop();
});

type Outcome = 'created' | 'rate-limited' | string;

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
    if (error.code === 8 && error.reason === 'RATE_LIMITED') return 'rate-limited';
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
  const customer = await createSagaCustomer(saga.database, saga.cipher);
  const token = await signToken(customer.userId);
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

test('a retried create (same request id) at the cap lands on its booking and takes no second slot', async () => {
  const customer = await createSagaCustomer(saga.database, saga.cipher);
  const seats = trip.seatNumbers.slice(creates, creates + cap + 1);
  const requestId = randomUUID();
  const first = await saga.application.createBooking(customer, bookingRequest(trip, [seats[0]]), {
    requestId,
  });
  for (const seat of seats.slice(1, cap)) {
    await saga.application.createBooking(customer, bookingRequest(trip, [seat]));
  }

  const retried = await saga.application.createBooking(customer, bookingRequest(trip, [seats[0]]), {
    requestId,
  });

  expect(retried).toMatchObject({ id: first.id, status: 'PENDING_PAYMENT' });
  expect(await heldBookingsOf(customer)).toBe(cap);
  expect(
    await errorCodeOf(saga.application.createBooking(customer, bookingRequest(trip, [seats[cap]]))),
  ).toBe('RATE_LIMITED');
});

test('a create that ended without a booking frees its slot', async () => {
  const customer = await createSagaCustomer(saga.database, saga.cipher);
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
