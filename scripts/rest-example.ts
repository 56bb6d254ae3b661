// `npm run rest:example`: logs in as alice, then creates, pays for and cancels a booking with the generated REST client.
import { randomUUID } from 'node:crypto';
import {
  bookingAnswerOf,
  createBookingServiceClient,
  successOf,
  type BookingAnswer,
  type BookingServiceClient,
} from '@bus-booking/client';
import { formatMoney } from '../src/activities/notification-templates';
import { findFreeSeat, holdSeatForAlice, settledBooking } from './lib/booking-flow';
import { aliceDemoUser } from '../dev/seed/demo-users';

// Defaults match `npm start`; the address can be pointed elsewhere from the environment.
const baseUrl = process.env.API_URL ?? `http://localhost:${process.env.HTTP_PORT ?? 8080}`;

/** Reads the booking until it is no longer being made, saying so while a 202 makes it wait. */
function heldBooking(client: BookingServiceClient, answer: BookingAnswer, bookingId: string) {
  return settledBooking(client, answer, bookingId, (retryAfterSeconds) =>
    console.log(`booking ${bookingId} is still being made; reading it again in ${retryAfterSeconds} s`),
  );
}

async function main(): Promise<void> {
  const tokens = successOf(
    await createBookingServiceClient({ baseUrl }).POST('/api/auth/login', {
      body: { email: aliceDemoUser.email, password: aliceDemoUser.password },
    }),
  );
  console.log(`logged in as ${aliceDemoUser.email} at ${baseUrl}`);
  const client = createBookingServiceClient({ baseUrl, accessToken: tokens.access_token });
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
