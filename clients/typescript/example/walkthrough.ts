// An integrator's program on the published package: sign in, find a seat, book, pay, read, cancel, and read a 202.
import { randomUUID } from 'node:crypto';
import {
  BookingServiceError,
  SignIn,
  bookingAnswerOf,
  bookingIdOf,
  createBookingServiceClient,
  successOf,
  waitForBooking,
  type BookingServiceClient,
  type Tokens,
} from '@bus-booking/client';
import { signInAtPage } from './sign-in-page.js';

function setting(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') throw new Error(`set ${name}`);
  return value;
}

const apiUrl = setting('API_URL');
const issuer = setting('ISSUER', apiUrl);
// Development only: the embedded stack's issuer is plain http on loopback.
const allowInsecureRequests = process.env.ALLOW_INSECURE_REQUESTS === 'true';
const expectedCreateStatus = process.env.EXPECT_CREATE_STATUS;

const step = (line: string) => console.log(`walkthrough: ${line}`);

function isoDate(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/** The first free seat on the routes listed, over the next three days. */
async function findFreeSeat(client: BookingServiceClient) {
  const { routes } = successOf(await client.GET('/v1/routes', { params: { query: { page_size: 10 } } }));
  for (const offsetDays of [1, 2, 3]) {
    for (const route of routes) {
      const { trips } = successOf(
        await client.GET('/v1/routes/{route_id}/availability', {
          params: { path: { route_id: route.id }, query: { date: isoDate(offsetDays) } },
        }),
      );
      for (const trip of trips) {
        const seat = trip.seat_map.find((entry) => entry.status === 'FREE');
        if (seat !== undefined) return { routes: routes.length, route, trip, seat };
      }
    }
  }
  throw new Error('no free seat on any route in the next three days');
}

/** Route search as a service (client credentials) when one is configured, else as the person. */
async function searchClient(personClient: BookingServiceClient): Promise<BookingServiceClient> {
  const clientId = process.env.SERVICE_CLIENT_ID;
  if (clientId === undefined) return personClient;
  const service = await SignIn.discover({
    issuer,
    clientId,
    clientSecret: setting('SERVICE_CLIENT_SECRET'),
    allowInsecureRequests,
  });
  const tokens = service.clientCredentials({ scope: 'routes:read' });
  step(`signed in as service ${clientId} (client credentials, client_secret_basic)`);
  return createBookingServiceClient({ baseUrl: apiUrl, accessToken: tokens });
}

async function main(): Promise<void> {
  const email = setting('USER_EMAIL');
  const redirectUri = setting('APP_REDIRECT_URI');
  const app = await SignIn.discover({ issuer, clientId: setting('APP_CLIENT_ID'), allowInsecureRequests });
  step(`discovered ${issuer}`);

  const pending = await app.startAuthorization({ redirectUri });
  const callback = await signInAtPage(pending.url, redirectUri, {
    email,
    password: setting('USER_PASSWORD'),
  });
  const tokens = await app.finishAuthorization(callback, pending);
  step(
    `signed in as ${email} (authorization code with PKCE): access token for ${tokens.expires_in ?? '?'} s, ` +
      `refresh token ${tokens.refresh_token === undefined ? 'absent' : 'issued'}`,
  );
  // Every refresh answer, to show the rotation; a real app stores the newest refresh token here.
  const refreshes: Tokens[] = [];
  const personTokens = app.tokenSource(tokens, { onRefresh: (refreshed) => refreshes.push(refreshed) });
  const person = createBookingServiceClient({ baseUrl: apiUrl, accessToken: personTokens });

  const search = await searchClient(person);
  const { routes, route, trip, seat } = await findFreeSeat(search);
  step(
    `searched ${routes} routes: trip ${trip.trip_id} of ${route.code} leaves ${trip.departure_time}, ` +
      `seat ${seat.seat_number} (${seat.fare_class}) free`,
  );

  const created = bookingAnswerOf(
    await person.POST('/v1/bookings', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: {
        trip_id: trip.trip_id,
        passengers: [
          {
            first_name: 'Ada',
            last_name: 'Integrator',
            email,
            seat_number: seat.seat_number,
            fare_class: seat.fare_class,
          },
        ],
        contact_email: email,
      },
    }),
  );
  const bookingId = bookingIdOf(created);
  if (created.status === 202) {
    step(
      `createBooking 202 BookingProcessing ${created.processing.id} (${created.processing.status}), ` +
        `Location ${created.location ?? 'absent'}, Retry-After ${created.retryAfterSeconds} s`,
    );
  } else {
    step(`createBooking ${created.status} booking ${bookingId} ${created.booking.status}`);
  }
  if (expectedCreateStatus !== undefined && String(created.status) !== expectedCreateStatus) {
    throw new Error(`create answered ${created.status}, expected ${expectedCreateStatus}`);
  }
  let reads = 0;
  const held = await waitForBooking(person, created, { onProcessing: () => (reads += 1) });
  if (created.status === 202) {
    step(`polled the Location ${reads} time(s): booking ${held.booking.id} ${held.booking.status}`);
  }

  const paid = bookingAnswerOf(
    await person.POST('/v1/bookings/{booking_id}/payment', {
      params: { path: { booking_id: bookingId }, header: { 'Idempotency-Key': randomUUID() } },
      body: { payment_token: 'tok_visa' },
    }),
  );
  const paidBooking = (await waitForBooking(person, paid)).booking;
  step(
    `confirmPayment ${paid.status}: ${paidBooking.status}, paid ${paidBooking.amount_paid.amount_minor} minor units`,
  );

  const read = bookingAnswerOf(
    await person.GET('/v1/bookings/{booking_id}', { params: { path: { booking_id: bookingId } } }),
  );
  if (read.status === 202) throw new Error('a paid booking read as still being made');
  step(`getBooking ${read.status}: ${read.booking.status}, ETag ${read.etag ?? 'absent'}`);

  // As after a 401: the next request refreshes the access token with the refresh token.
  personTokens.invalidate();
  const cancelled = bookingAnswerOf(
    await person.PUT('/v1/bookings/{booking_id}/cancel', {
      params: { path: { booking_id: bookingId } },
      body: { reason: 'client package walkthrough' },
    }),
  );
  const cancelledBooking = (await waitForBooking(person, cancelled)).booking;
  step(
    `cancelBooking ${cancelled.status}: ${cancelledBooking.status}, ` +
      `refunded ${cancelledBooking.amount_refunded.amount_minor} minor units`,
  );
  const rotated = refreshes.at(-1)?.refresh_token;
  if (rotated === undefined) throw new Error('the token source did not refresh the invalidated token');
  step(
    `refresh: the token source refreshed ${refreshes.length} time(s), ` +
      `refresh token ${rotated === tokens.refresh_token ? 'kept' : 'rotated'}`,
  );

  try {
    successOf(
      await person.GET('/v1/bookings/{booking_id}', { params: { path: { booking_id: randomUUID() } } }),
    );
    throw new Error('an unknown booking was found');
  } catch (error) {
    if (!(error instanceof BookingServiceError) || error.problem === undefined) throw error;
    step(`an unknown booking: ${error.status} problem ${error.problem.code} (${error.problem.title})`);
  }
  step('OK');
}

main().catch((error: unknown) => {
  console.error(`walkthrough: FAILED ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
