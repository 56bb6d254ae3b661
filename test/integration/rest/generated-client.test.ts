// The generated TypeScript client (clients/typescript) drives a booking's whole life against the composed API and real workers.
import {
  bookingAnswerOf,
  createBookingServiceClient,
  successOf,
  type Booking,
  type BookingAnswer,
  type BookingServiceClient,
  type Schemas,
} from '@bus-booking/client';
import { composeTestApi, startServer, type RunningServer, type TestApi } from '../../support/rest-app';
import { eventually } from '../../support/outcomes';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { insertLoginUser, type LoginUser } from '../../support/users';

jest.setTimeout(180_000);

let saga: SagaEnvironment;
let api: TestApi;
let server: RunningServer;
let trip: TestTrip;
let customer: LoginUser;
let client: BookingServiceClient;

beforeAll(async () => {
  // No worker polls until the paused-worker test starts them: its create outlives the answer deadline.
  saga = await startSagaEnvironment({ startWorkers: false });
  trip = await createTrip(saga.database, { seatCount: 8 });
  customer = await insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] });
  // Long enough for a create to be answered 201 once workers run on a busy machine, short enough to wait out.
  api = await composeTestApi(saga, { BOOKING_CREATE_ANSWER_TIMEOUT_MS: '3000' });
  server = await startServer(api.app);
  const signIn = createBookingServiceClient({ baseUrl: server.baseUrl });
  const tokens = successOf(
    await signIn.POST('/api/auth/login', { body: { email: customer.email, password: customer.password } }),
  );
  client = createBookingServiceClient({ baseUrl: server.baseUrl, accessToken: tokens.access_token });
});

afterAll(async () => {
  await server?.close();
  await api?.remove();
  await saga?.stop();
});

function bookingOf(answer: BookingAnswer): Booking {
  if (answer.status === 202) throw new Error(`expected the booking, got 202 ${answer.processing.detail}`);
  return answer.booking;
}

function bookingRequest(seatNumber: string): Schemas['CreateBookingRequest'] {
  const passenger = { first_name: 'Ana', last_name: 'Silva', email: 'ana.silva@example.com' };
  return {
    trip_id: trip.tripId,
    passengers: [{ ...passenger, seat_number: seatNumber, fare_class: 'STANDARD' }],
    contact_email: passenger.email,
  };
}

async function createBooking(seatNumber: string): Promise<BookingAnswer> {
  return bookingAnswerOf(
    await client.POST('/v1/bookings', {
      params: { header: { 'Idempotency-Key': `generated-client-${trip.tripId}-${seatNumber}` } },
      body: bookingRequest(seatNumber),
    }),
  );
}

async function readBooking(bookingId: string): Promise<BookingAnswer> {
  return bookingAnswerOf(
    await client.GET('/v1/bookings/{booking_id}', { params: { path: { booking_id: bookingId } } }),
  );
}

/** Pays for a held booking, then cancels it; each answer is the booking itself. */
async function payAndCancel(held: Booking): Promise<void> {
  const paid = bookingOf(
    bookingAnswerOf(
      await client.POST('/v1/bookings/{booking_id}/payment', {
        params: {
          path: { booking_id: held.id },
          header: { 'Idempotency-Key': `generated-client-pay-${held.id}` },
        },
        body: { payment_token: 'tok_visa' },
      }),
    ),
  );
  expect(paid).toMatchObject({ id: held.id, status: 'CONFIRMED', payment: { status: 'CAPTURED' } });

  const cancelled = bookingOf(
    bookingAnswerOf(
      await client.PUT('/v1/bookings/{booking_id}/cancel', {
        params: { path: { booking_id: held.id } },
        body: { reason: 'Plans changed' },
      }),
    ),
  );
  expect(cancelled).toMatchObject({ id: held.id, status: 'CANCELLED', cancellation_reason: 'Plans changed' });
}

test('routes and availability are typed by the contract', async () => {
  const departureDate = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Lisbon' }).format(
    trip.departureTime,
  );
  const routes = successOf(
    await client.GET('/v1/routes', {
      // By stop code: other files add Lisbon to Porto trips on the same day, enough to fill a page by city.
      params: {
        query: { origin: trip.stopCodes[0], destination: trip.stopCodes.at(-1)!, date: departureDate },
      },
    }),
  );
  expect(routes.routes.map((route) => route.id)).toContain(trip.routeId);

  const availability = successOf(
    await client.GET('/v1/routes/{route_id}/availability', {
      params: { path: { route_id: trip.routeId }, query: { date: departureDate } },
    }),
  );
  const tripAvailability = availability.trips.find((candidate) => candidate.trip_id === trip.tripId);
  expect(tripAvailability?.seats_free).toBe(trip.seatNumbers.length);
});

test('a create past the answer deadline reads as 202 PROCESSING, then as the booking once a worker holds it', async () => {
  const accepted = await createBooking(trip.seatNumbers[0]);
  if (accepted.status !== 202) throw new Error(`expected 202 while no worker runs, got ${accepted.status}`);
  const bookingId = accepted.processing.id;
  expect(accepted).toMatchObject({
    processing: { status: 'PROCESSING' },
    location: `/v1/bookings/${bookingId}`,
    retryAfterSeconds: 1,
  });

  const stillProcessing = await readBooking(bookingId);
  expect(stillProcessing).toMatchObject({ status: 202, processing: { id: bookingId, status: 'PROCESSING' } });

  await saga.startWorkers();
  // Polled more often than the Retry-After a polite client keeps to: the test waits for the hold, not the advice.
  const read = await eventually(
    () => readBooking(bookingId),
    (answer) => answer.status !== 202,
    { intervalMs: 100 },
  );
  expect(read.status).toBe(200);
  const held = bookingOf(read);
  expect(held).toMatchObject({ id: bookingId, status: 'PENDING_PAYMENT' });
  await payAndCancel(held);
});

test('a create held in time answers 201 with the booking and its ETag; get, pay and cancel follow', async () => {
  await saga.startWorkers();
  const created = await createBooking(trip.seatNumbers[1]);
  expect(created.status).toBe(201);
  const booking = bookingOf(created);
  expect(booking).toMatchObject({
    status: 'PENDING_PAYMENT',
    trip_id: trip.tripId,
    customer_id: customer.id,
  });
  expect(created).toMatchObject({ etag: `"${booking.version}"` });

  const read = await readBooking(booking.id);
  expect(read).toMatchObject({ status: 200, booking: { id: booking.id, status: 'PENDING_PAYMENT' } });
  await payAndCancel(bookingOf(read));
});
