// `npm run rest:example`: signs Alice in (code with PKCE), then books, pays for and cancels a seat with the client package.
import { randomUUID } from 'node:crypto';
import {
  SignIn,
  bookingAnswerOf,
  createBookingServiceClient,
  type BookingAnswer,
  type BookingServiceClient,
} from '@bus-booking/client';
import { signInAtPage } from '../clients/typescript/example/sign-in-page';
import { formatMoney } from '../src/activities/notification-templates';
import { findFreeSeat, holdSeatForAlice, settledBooking } from './lib/booking-flow';
import { aliceDemoUser } from '../dev/seed/demo-users';
import { exampleAppClient } from '../dev/stack/example-client';

// Defaults match `npm start`; the address can be pointed elsewhere from the environment.
const baseUrl = process.env.API_URL ?? `http://localhost:${process.env.HTTP_PORT ?? 8080}`;
// The embedded provider's issuer: IDP_ISSUER, by default http://localhost:<HTTP_PORT> whatever address reaches the API.
const issuer = new URL(process.env.ISSUER ?? `http://localhost:${new URL(baseUrl).port || 80}`);
// Development only: plain http is allowed for an issuer on this machine, the embedded stack of `npm start`.
const allowInsecureRequests =
  issuer.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);

/** Reads the booking until it is no longer being made, saying so while a 202 makes it wait. */
function heldBooking(client: BookingServiceClient, answer: BookingAnswer, bookingId: string) {
  return settledBooking(client, answer, bookingId, (retryAfterSeconds) =>
    console.log(`booking ${bookingId} is still being made; reading it again in ${retryAfterSeconds} s`),
  );
}

async function main(): Promise<void> {
  const app = await SignIn.discover({ issuer, clientId: exampleAppClient.clientId, allowInsecureRequests });
  const pending = await app.startAuthorization({ redirectUri: exampleAppClient.redirectUri });
  // An app would open the browser at pending.url; the example fills in the sign-in page itself.
  const callback = await signInAtPage(pending.url, exampleAppClient.redirectUri, aliceDemoUser);
  const tokens = await app.finishAuthorization(callback, pending);
  console.log(`signed in as ${aliceDemoUser.email} at ${issuer.origin} (authorization code with PKCE)`);
  const client = createBookingServiceClient({ baseUrl, accessToken: app.tokenSource(tokens) });
  const seat = await findFreeSeat(client);

  const { created, bookingId } = await holdSeatForAlice(client, seat);
  console.log(`create answered ${created.status} for booking ${bookingId}, seat ${seat.seatNumber}`);
  const booking = await heldBooking(client, created, bookingId);
  console.log(`booking ${booking.id}: ${booking.status}, hold until ${booking.hold_expires_at}`);

  const paid = bookingAnswerOf(
    await client.POST('/v1/bookings/{booking_id}/payment', {
      params: { path: { booking_id: bookingId }, header: { 'Idempotency-Key': randomUUID() } },
      body: { payment_token: 'tok_visa' },
    }),
  );
  const paidBooking = await heldBooking(client, paid, bookingId);
  console.log(`paid with tok_visa: ${paidBooking.status}, method ${paidBooking.payment.method}`);

  const cancelled = bookingAnswerOf(
    await client.PUT('/v1/bookings/{booking_id}/cancel', {
      params: { path: { booking_id: bookingId } },
      body: { reason: 'REST example' },
    }),
  );
  const cancelledBooking = await heldBooking(client, cancelled, bookingId);
  const refunded = cancelledBooking.amount_refunded;
  console.log(
    `cancelled: ${cancelledBooking.status}, refunded ${formatMoney(refunded.amount_minor, refunded.currency)}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
