// Integration: only allow-listed client certificates signed by our CA reach the gRPC server, over real TLS on 127.0.0.1.
import { status } from '@grpc/grpc-js';
import type { BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import { BookingStatus } from '../../../src/generated/com/example/bookings/v1/booking';
import {
  bookingView,
  clientFor,
  createTestCertificates,
  failureOf,
  fakeApplication,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';

let certificates: TestCertificates;
let server: RunningGrpcServer;
const clients: BookingClient[] = [];
const booking = bookingView();

function client(options: Parameters<typeof clientFor>[2]): BookingClient {
  const created = clientFor(server, certificates, options);
  clients.push(created);
  return created;
}

beforeAll(async () => {
  certificates = createTestCertificates();
  server = await startTestServer({
    certificates,
    application: fakeApplication({ getBooking: () => Promise.resolve(booking) }),
  });
});

afterAll(async () => {
  for (const created of clients) created.close();
  await server?.stop();
  if (certificates) removeTestCertificates(certificates);
});

describe('mutual TLS', () => {
  it('serves a client whose certificate CN is on the allow-list', async () => {
    const response = await client({}).getBooking({ bookingId: booking.id }, { timeoutMs: 5000 });
    expect(response.booking?.id).toBe(booking.id);
    expect(response.booking?.status).toBe(BookingStatus.BOOKING_STATUS_PENDING_PAYMENT);
  });

  it('serves a client allowed by a URI subject alternative name', async () => {
    const response = await client({ identity: certificates.uriClient }).getBooking(
      { bookingId: booking.id },
      { timeoutMs: 5000 },
    );
    expect(response.booking?.id).toBe(booking.id);
  });

  it('refuses a connection without a client certificate during the handshake', async () => {
    const failure = await failureOf(
      client({ identity: null }).getBooking({ bookingId: booking.id }, { timeoutMs: 5000 }),
    );
    expect(status[failure.code]).toBe('UNAVAILABLE');
    expect(failure.reason).toBeUndefined();
  });

  it('refuses a client certificate signed by another CA during the handshake', async () => {
    const failure = await failureOf(
      client({ identity: certificates.foreignClient }).getBooking(
        { bookingId: booking.id },
        { timeoutMs: 5000 },
      ),
    );
    expect(status[failure.code]).toBe('UNAVAILABLE');
    expect(failure.reason).toBeUndefined();
  });

  it('refuses a certificate of our CA that is not on the allow-list, with PERMISSION_DENIED details', async () => {
    const failure = await failureOf(
      client({ identity: certificates.unlistedClient }).getBooking(
        { bookingId: booking.id },
        { timeoutMs: 5000 },
      ),
    );
    expect(status[failure.code]).toBe('PERMISSION_DENIED');
    expect(failure.reason).toBe('PERMISSION_DENIED');
    expect(failure.statusDetails?.errorInfo?.domain).toBe('bookings.example.com');
  });

  it('is refused by a client that does not trust the server certificate', async () => {
    const failure = await failureOf(
      client({ ca: certificates.foreignCa }).getBooking({ bookingId: booking.id }, { timeoutMs: 5000 }),
    );
    expect(status[failure.code]).toBe('UNAVAILABLE');
  });
});
