// Create -> read -> pay -> tickets -> cancel through openapi-fetch over the types openapi-typescript generates (./schema).
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

type BookingResult = components['schemas']['BookingResult'];
type Booking = components['schemas']['Booking'];
type BookingProcessing = components['schemas']['BookingProcessing'];
type SeatMapEntry = components['schemas']['SeatMapEntry'];

const label = 'openapi-fetch';

function report(operation: string, status: number, detail: string): void {
  console.log(`${label}: ${operation} ${status} ${detail}`);
}

function fail(message: string): never {
  console.error(`${label}: FAILED: ${message}`);
  process.exit(1);
}

function environment(name: string): string {
  return process.env[name] ?? fail(`${name} is not set`);
}

function asProcessing(result: BookingResult | undefined): BookingProcessing {
  return result?.status === 'PROCESSING' ? result : fail(`expected PROCESSING, got ${result?.status}`);
}

function asBooking(result: BookingResult | undefined): Booking {
  if (result === undefined || result.status === 'PROCESSING')
    return fail(`expected a booking, got ${result?.status}`);
  return result;
}

async function main(): Promise<void> {
  const baseUrl = environment('BASE_URL');
  const expectedCreateStatus = Number(environment('EXPECT_CREATE_STATUS'));

  const signedIn = await createClient<paths>({ baseUrl }).POST('/api/auth/login', {
    body: { email: environment('LOGIN_EMAIL'), password: environment('LOGIN_PASSWORD') },
  });
  if (signedIn.data === undefined) fail(`login answered ${signedIn.response.status}`);
  report('login', signedIn.response.status, 'token issued');
  const client = createClient<paths>({
    baseUrl,
    headers: { authorization: `Bearer ${signedIn.data.access_token}` },
  });

  const routes = await client.GET('/v1/routes', { params: { query: { page_size: 20 } } });
  if (routes.data === undefined) fail(`listRoutes answered ${routes.response.status}`);
  report('listRoutes', routes.response.status, `${routes.data.routes.length} routes`);

  // Seeded trips run every day; a seat still free in the coming days is enough for one booking.
  let found: { tripId: string; seat: SeatMapEntry } | undefined;
  for (let offsetDays = 1; offsetDays <= 3 && found === undefined; offsetDays++) {
    const date = new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
    for (const route of routes.data.routes) {
      const availability = await client.GET('/v1/routes/{route_id}/availability', {
        params: { path: { route_id: route.id }, query: { date } },
      });
      if (availability.data === undefined)
        fail(`getRouteAvailability answered ${availability.response.status}`);
      for (const trip of availability.data.trips) {
        const seat = trip.seat_map.find((entry) => entry.status === 'FREE');
        if (seat !== undefined && found === undefined) found = { tripId: trip.trip_id, seat };
      }
      if (found !== undefined) break;
    }
  }
  if (found === undefined) fail('no free seat in the next three days');
  report('getRouteAvailability', 200, `trip ${found.tripId} seat ${found.seat.seat_number}`);

  const created = await client.POST('/v1/bookings', {
    params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
    body: {
      trip_id: found.tripId,
      contact_email: 'alice@example.com',
      passengers: [
        {
          first_name: 'Alice',
          last_name: 'Martins',
          email: 'alice@example.com',
          seat_number: found.seat.seat_number,
          fare_class: found.seat.fare_class,
        },
      ],
    },
  });
  if (created.response.status !== expectedCreateStatus)
    fail(`createBooking answered ${created.response.status}`);
  let bookingId: string;
  if (created.response.status === 202) {
    const processing = asProcessing(created.data);
    bookingId = processing.id;
    report(
      'createBooking',
      202,
      `${processing.status} ${bookingId} Location ${created.response.headers.get('location')}`,
    );
  } else {
    const booking = asBooking(created.data);
    bookingId = booking.id;
    report('createBooking', created.response.status, `${booking.status} ${bookingId}`);
  }

  const byId = { params: { path: { booking_id: bookingId } } };
  let processingReads = 0;
  let read = await client.GET('/v1/bookings/{booking_id}', byId);
  while (read.response.status === 202) {
    const processing = asProcessing(read.data);
    processingReads++;
    report('getBooking', 202, `${processing.status}, retry after ${processing.retry_after_seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, processing.retry_after_seconds * 1000));
    read = await client.GET('/v1/bookings/{booking_id}', byId);
  }
  const booking = asBooking(read.data);
  if (read.response.status !== 200 || booking.status !== 'PENDING_PAYMENT')
    fail(`getBooking answered ${read.response.status} ${booking.status}`);
  report('getBooking', 200, booking.status);

  const paid = await client.POST('/v1/bookings/{booking_id}/payment', {
    params: { path: { booking_id: bookingId }, header: { 'Idempotency-Key': crypto.randomUUID() } },
    body: { payment_token: 'tok_visa' },
  });
  const paidBooking = asBooking(paid.data);
  if (paid.response.status !== 200 || paidBooking.status !== 'CONFIRMED')
    fail(`confirmPayment answered ${paid.response.status} ${paidBooking.status}`);
  report('confirmPayment', 200, paidBooking.status);

  const listed = await client.GET('/v1/bookings/{booking_id}/tickets', byId);
  if (listed.response.status !== 200 || listed.data === undefined || !('tickets' in listed.data))
    fail(`listBookingTickets answered ${listed.response.status}`);
  if (listed.data.tickets.length !== 1) fail(`${listed.data.tickets.length} tickets for one passenger`);
  report('listBookingTickets', 200, `${listed.data.tickets.length} ticket ${listed.data.tickets[0]?.status}`);

  const cancelled = await client.PUT('/v1/bookings/{booking_id}/cancel', {
    ...byId,
    body: { reason: 'Client flow' },
  });
  const cancelledBooking = asBooking(cancelled.data);
  if (cancelled.response.status !== 200 || cancelledBooking.status !== 'CANCELLED')
    fail(`cancelBooking answered ${cancelled.response.status} ${cancelledBooking.status}`);
  report('cancelBooking', 200, cancelledBooking.status);
  console.log(
    `${label}: outcome create ${created.response.status}, ${processingReads} PROCESSING read(s), then ` +
      `${booking.status}, ${paidBooking.status}, ${cancelledBooking.status}`,
  );
}

main().catch((error: unknown) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
);
