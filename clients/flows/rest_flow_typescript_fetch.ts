// Create -> read -> pay -> tickets -> cancel through the client openapi-generator's `typescript-fetch` generator makes.
import {
  AuthenticationApi,
  BookingsApi,
  Configuration,
  PaymentsApi,
  RoutesApi,
  TicketsApi,
  type Booking,
  type BookingProcessing,
  type BookingResult,
  type SeatMapEntry,
} from './client/index';

const label = 'typescript-fetch';

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

function asProcessing(result: BookingResult): BookingProcessing {
  return result.status === 'PROCESSING' ? result : fail(`expected PROCESSING, got ${result.status}`);
}

function asBooking(result: BookingResult): Booking {
  return result.status === 'PROCESSING' ? fail('expected a booking, got PROCESSING') : result;
}

async function main(): Promise<void> {
  const basePath = environment('BASE_URL');
  const expectedCreateStatus = Number(environment('EXPECT_CREATE_STATUS'));

  const signedIn = await new AuthenticationApi(new Configuration({ basePath })).loginRaw({
    loginRequest: { email: environment('LOGIN_EMAIL'), password: environment('LOGIN_PASSWORD') },
  });
  const token = await signedIn.value();
  report('login', signedIn.raw.status, 'token issued');
  const configuration = new Configuration({ basePath, accessToken: token.accessToken });
  const bookings = new BookingsApi(configuration);
  const routesApi = new RoutesApi(configuration);

  const routes = await routesApi.listRoutes({ pageSize: 20 });
  report('listRoutes', 200, `${routes.routes.length} routes`);

  // Seeded trips run every day; a seat still free in the coming days is enough for one booking.
  let found: { tripId: string; seat: SeatMapEntry } | undefined;
  for (let offsetDays = 1; offsetDays <= 3 && found === undefined; offsetDays++) {
    const date = new Date(Date.now() + offsetDays * 86_400_000);
    for (const route of routes.routes) {
      const availability = await routesApi.getRouteAvailability({ routeId: route.id, date });
      for (const trip of availability.trips) {
        const seat = trip.seatMap.find((entry) => entry.status === 'FREE');
        if (seat !== undefined && found === undefined) found = { tripId: trip.tripId, seat };
      }
      if (found !== undefined) break;
    }
  }
  if (found === undefined) fail('no free seat in the next three days');
  report('getRouteAvailability', 200, `trip ${found.tripId} seat ${found.seat.seatNumber}`);

  const created = await bookings.createBookingRaw({
    idempotencyKey: crypto.randomUUID(),
    createBookingRequest: {
      tripId: found.tripId,
      contactEmail: 'alice@example.com',
      passengers: [
        {
          firstName: 'Alice',
          lastName: 'Martins',
          email: 'alice@example.com',
          seatNumber: found.seat.seatNumber,
          fareClass: found.seat.fareClass,
        },
      ],
    },
  });
  if (created.raw.status !== expectedCreateStatus) fail(`createBooking answered ${created.raw.status}`);
  const outcome = await created.value();
  let bookingId: string;
  if (created.raw.status === 202) {
    const processing = asProcessing(outcome);
    bookingId = processing.id;
    report(
      'createBooking',
      202,
      `${processing.status} ${bookingId} Location ${created.raw.headers.get('location')}`,
    );
  } else {
    const booking = asBooking(outcome);
    bookingId = booking.id;
    report('createBooking', created.raw.status, `${booking.status} ${bookingId}`);
  }

  let processingReads = 0;
  let read = await bookings.getBookingRaw({ bookingId });
  while (read.raw.status === 202) {
    const processing = asProcessing(await read.value());
    processingReads++;
    report('getBooking', 202, `${processing.status}, retry after ${processing.retryAfterSeconds} s`);
    await new Promise((resolve) => setTimeout(resolve, processing.retryAfterSeconds * 1000));
    read = await bookings.getBookingRaw({ bookingId });
  }
  const booking = asBooking(await read.value());
  if (read.raw.status !== 200 || booking.status !== 'PENDING_PAYMENT')
    fail(`getBooking answered ${read.raw.status} ${booking.status}`);
  report('getBooking', 200, booking.status);

  const paid = await new PaymentsApi(configuration).confirmPaymentRaw({
    bookingId,
    idempotencyKey: crypto.randomUUID(),
    confirmPaymentRequest: { paymentToken: 'tok_visa' },
  });
  const paidBooking = asBooking(await paid.value());
  if (paid.raw.status !== 200 || paidBooking.status !== 'CONFIRMED')
    fail(`confirmPayment answered ${paid.raw.status} ${paidBooking.status}`);
  report('confirmPayment', 200, paidBooking.status);

  const listed = await new TicketsApi(configuration).listBookingTicketsRaw({ bookingId });
  const ticketList = await listed.value();
  if (listed.raw.status !== 200 || !('tickets' in ticketList))
    fail(`listBookingTickets answered ${listed.raw.status}`);
  if (ticketList.tickets.length !== 1) fail(`${ticketList.tickets.length} tickets for one passenger`);
  report('listBookingTickets', 200, `${ticketList.tickets.length} ticket ${ticketList.tickets[0]?.status}`);

  const cancelled = await bookings.cancelBookingRaw({
    bookingId,
    cancelBookingRequest: { reason: 'Client flow' },
  });
  const cancelledBooking = asBooking(await cancelled.value());
  if (cancelled.raw.status !== 200 || cancelledBooking.status !== 'CANCELLED')
    fail(`cancelBooking answered ${cancelled.raw.status} ${cancelledBooking.status}`);
  report('cancelBooking', 200, cancelledBooking.status);
  console.log(
    `${label}: outcome create ${created.raw.status}, ${processingReads} PROCESSING read(s), then ` +
      `${booking.status}, ${paidBooking.status}, ${cancelledBooking.status}`,
  );
}

main().catch((error: unknown) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
);
