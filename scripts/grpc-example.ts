// `npm run grpc:example`: logs in as alice, then creates, pays for and cancels a booking over gRPC with mutual TLS.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BookingServiceCallError, createBookingClient } from '../src/api/grpc/client';
import { BookingStatus } from '../src/generated/com/example/bookings/v1/booking';
import { aliceDemoUser } from '../dev/seed/demo-users';
import { projectRoot } from '../src/project-root';
import { formatMoney } from '../src/activities/notification-templates';

// Defaults match `npm start`; each can be pointed elsewhere from the environment.
const restUrl = process.env.API_URL ?? `http://localhost:${process.env.HTTP_PORT ?? 8080}`;
const grpcAddress = process.env.GRPC_ADDRESS ?? `localhost:${process.env.GRPC_PORT ?? 50051}`;
const certificateDirectory =
  process.env.GRPC_CERT_DIR ?? path.resolve(projectRoot, process.env.STACK_DATA_DIR ?? '.data', 'certs');

interface TripAvailability {
  trip_id: string;
  seat_map: { seat_number: string; fare_class: string; status: 'FREE' | 'TAKEN' }[];
}

async function restJson<T>(pathAndQuery: string, init: RequestInit & { token?: string } = {}): Promise<T> {
  const response = await fetch(`${restUrl}${pathAndQuery}`, {
    ...init,
    headers: {
      accept: 'application/json',
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${pathAndQuery} answered ${response.status}`);
  return (await response.json()) as T;
}

function isoDate(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/** A free seat on some trip in the coming days, found through the REST catalogue (gRPC has no catalogue). */
async function findFreeSeat(
  token: string,
): Promise<{ tripId: string; seatNumber: string; fareClass: string }> {
  const { routes } = await restJson<{ routes: { id: string; code: string }[] }>('/api/routes?page_size=10', {
    token,
  });
  for (const offsetDays of [1, 2, 3]) {
    for (const route of routes) {
      const availability = await restJson<{ trips: TripAvailability[] }>(
        `/api/routes/${route.id}/availability?date=${isoDate(offsetDays)}`,
        { token },
      );
      for (const trip of availability.trips) {
        const seat = trip.seat_map.find((entry) => entry.status === 'FREE');
        if (seat) return { tripId: trip.trip_id, seatNumber: seat.seat_number, fareClass: seat.fare_class };
      }
    }
  }
  throw new Error('no free seat found on any route in the next three days');
}

async function main(): Promise<void> {
  const login = await restJson<{ access_token: string }>('/api/auth/login', {
    method: 'POST',
    body: JSON.stringify({ email: aliceDemoUser.email, password: aliceDemoUser.password }),
  });
  console.log(`logged in as ${aliceDemoUser.email} at ${restUrl}`);
  const seat = await findFreeSeat(login.access_token);

  const client = createBookingClient({
    address: grpcAddress,
    ca: fs.readFileSync(path.join(certificateDirectory, 'ca.crt')),
    cert: fs.readFileSync(path.join(certificateDirectory, 'client.crt')),
    key: fs.readFileSync(path.join(certificateDirectory, 'client.key')),
    token: login.access_token,
  });
  try {
    const created = await client.createBooking(
      {
        requestId: randomUUID(),
        tripId: seat.tripId,
        passengers: [
          {
            firstName: 'Alice',
            lastName: 'Martins',
            email: aliceDemoUser.email,
            seatNumber: seat.seatNumber,
            fareClass: seat.fareClass,
          },
        ],
        contactEmail: aliceDemoUser.email,
      },
      { timeoutMs: 15_000 },
    );
    const booking = created.booking!;
    const total = booking.price?.total;
    console.log(
      `created booking ${booking.id} over gRPC (${grpcAddress}): seat ${seat.seatNumber}, ` +
        `${BookingStatus[booking.status]}, total ${total ? formatMoney(total.amountMinor, total.currency) : 'unknown'}, ` +
        `hold until ${booking.holdExpiresAt?.toISOString()}`,
    );

    const paid = await client.confirmPayment(
      { bookingId: booking.id, paymentToken: 'tok_visa', requestId: randomUUID() },
      { timeoutMs: 15_000 },
    );
    console.log(
      `paid with tok_visa: ${BookingStatus[paid.booking!.status]}, method ${paid.booking!.payment?.method}`,
    );

    const cancelled = await client.cancelBooking(
      { bookingId: booking.id, reason: 'gRPC example' },
      { timeoutMs: 15_000 },
    );
    const refunded = cancelled.booking!.amountRefunded;
    console.log(
      `cancelled: ${BookingStatus[cancelled.booking!.status]}, refunded ${refunded ? formatMoney(refunded.amountMinor, refunded.currency) : 'nothing'}`,
    );
  } finally {
    client.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof BookingServiceCallError) {
    console.error(`gRPC call failed: ${error.reason ?? error.code} ${error.message}`);
  } else {
    console.error(error instanceof Error ? error.message : error);
  }
  process.exit(1);
});
