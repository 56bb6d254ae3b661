// The steps every REST walk-through of a booking shares: find a free seat, hold it for Alice, read a 202 to its end.
import { randomUUID } from 'node:crypto';
import {
  bookingAnswerOf,
  successOf,
  type BookingAnswer,
  type BookingServiceClient,
} from '@bus-booking/client';
import { aliceDemoUser } from '../../dev/seed/demo-users';

function isoDate(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/** The first free seat on the first routes listed, over the next three days. */
export async function findFreeSeat(
  client: BookingServiceClient,
): Promise<{ tripId: string; seatNumber: string; fareClass: 'STANDARD' | 'PREMIUM' }> {
  const { routes } = successOf(await client.GET('/v1/routes', { params: { query: { page_size: 10 } } }));
  for (const offsetDays of [1, 2, 3]) {
    for (const route of routes) {
      const availability = successOf(
        await client.GET('/v1/routes/{route_id}/availability', {
          params: { path: { route_id: route.id }, query: { date: isoDate(offsetDays) } },
        }),
      );
      for (const trip of availability.trips) {
        const seat = trip.seat_map.find((entry) => entry.status === 'FREE');
        if (seat) return { tripId: trip.trip_id, seatNumber: seat.seat_number, fareClass: seat.fare_class };
      }
    }
  }
  throw new Error('no free seat on any route in the next three days (is the demo timetable seeded?)');
}

/** Reads the booking again until it is no longer being made: a 202 says when to look again. */
export async function settledBooking(
  client: BookingServiceClient,
  answer: BookingAnswer,
  bookingId: string,
  onProcessing: (retryAfterSeconds: number) => void = () => undefined,
) {
  let current = answer;
  while (current.status === 202) {
    const { retryAfterSeconds } = current;
    onProcessing(retryAfterSeconds);
    await new Promise((resolve) => setTimeout(resolve, retryAfterSeconds * 1000));
    current = bookingAnswerOf(
      await client.GET('/v1/bookings/{booking_id}', { params: { path: { booking_id: bookingId } } }),
    );
  }
  return current.booking;
}

/** Alice's create for one seat: the answer, and the booking's id whether it came as 201 or 202. */
export async function holdSeatForAlice(
  client: BookingServiceClient,
  seat: { tripId: string; seatNumber: string; fareClass: 'STANDARD' | 'PREMIUM' },
): Promise<{ created: BookingAnswer; bookingId: string }> {
  const created = bookingAnswerOf(
    await client.POST('/v1/bookings', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: {
        trip_id: seat.tripId,
        passengers: [
          {
            first_name: 'Alice',
            last_name: 'Martins',
            email: aliceDemoUser.email,
            seat_number: seat.seatNumber,
            fare_class: seat.fareClass,
          },
        ],
        contact_email: aliceDemoUser.email,
      },
    }),
  );
  return { created, bookingId: created.status === 202 ? created.processing.id : created.booking.id };
}
