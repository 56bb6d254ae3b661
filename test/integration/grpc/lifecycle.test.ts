// Integration: deadlines, message-size limits, plaintext only on request, and shutdown that drains calls in flight.
import { connectivityState, status } from '@grpc/grpc-js';
import { createBookingClient, type BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { AccessTokenVerifier } from '../../../src/api/grpc/caller-authorization';
import type { BookingView } from '../../../src/application/interface';
import {
  bookingView,
  clientFor,
  createTestCertificates,
  failureOf,
  fakeApplication,
  removeTestCertificates,
  startTestServer,
  verifyTestToken,
  type TestCertificates,
} from '../../support/grpc-server';
import { eventually } from '../../support/outcomes';

const booking = bookingView();
let certificates: TestCertificates;
const servers: RunningGrpcServer[] = [];
const clients: BookingClient[] = [];

function track(server: RunningGrpcServer, client: BookingClient) {
  servers.push(server);
  clients.push(client);
  return { server, client };
}

/** A promise the test settles by hand, to hold a call in flight. */
function gate<T>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => (open = resolve));
  return { open, opened };
}

beforeAll(() => {
  certificates = createTestCertificates();
});

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.allSettled(servers.map((server) => server.stop()));
  if (certificates) removeTestCertificates(certificates);
});

describe('deadlines', () => {
  it('does not start a change whose deadline passed while the caller was being authenticated', async () => {
    const createBooking = jest.fn(() => Promise.resolve(booking));
    let verified: Promise<unknown> = Promise.resolve();
    // Not a wait for state: the verification outlasts the deadline as the server measures it (from when the call
    // reached it), which is the gap the handler must see.
    const slowVerifier: AccessTokenVerifier = (token) => {
      const verifying = new Promise((resolve) => setTimeout(resolve, 300)).then(() => verifyTestToken(token));
      verified = verifying.catch(() => undefined);
      return verifying;
    };
    const server = await startTestServer({
      certificates,
      application: fakeApplication({ createBooking }),
      verifyAccessToken: slowVerifier,
    });
    const { client } = track(server, clientFor(server, certificates));
    const failure = await failureOf(client.createBooking({ tripId: booking.tripId }, { timeoutMs: 100 }));
    expect(status[failure.code]).toBe('DEADLINE_EXCEEDED');
    await verified;
    // The handler decides in the turn its verification ends; one more turn of the event loop lets it act.
    await new Promise((resolve) => setImmediate(resolve));
    expect(createBooking).not.toHaveBeenCalled();
  });

  it('answers a call that finishes within its deadline', async () => {
    const server = await startTestServer({
      certificates,
      application: fakeApplication({ getBooking: () => Promise.resolve(booking) }),
    });
    const { client } = track(server, clientFor(server, certificates));
    const response = await client.getBooking({ bookingId: booking.id }, { timeoutMs: 2000 });
    expect(response.booking?.id).toBe(booking.id);
  });
});

describe('message size limits', () => {
  it('refuses a request above the receive limit with RESOURCE_EXHAUSTED, before any handler runs', async () => {
    const createBooking = jest.fn(() => Promise.resolve(booking));
    const server = await startTestServer({
      certificates,
      application: fakeApplication({ createBooking }),
      settings: { maxReceiveMessageBytes: 4096 },
    });
    const { client } = track(server, clientFor(server, certificates));
    const failure = await failureOf(
      client.createBooking({ tripId: booking.tripId, contactEmail: `${'x'.repeat(8192)}@example.com` }),
    );
    expect(status[failure.code]).toBe('RESOURCE_EXHAUSTED');
    expect(createBooking).not.toHaveBeenCalled();
  });
});

describe('plaintext', () => {
  it('serves without TLS only when the transport is explicitly insecure', async () => {
    const server = await startTestServer({
      certificates,
      application: fakeApplication({ getBooking: () => Promise.resolve(booking) }),
      settings: { transport: { kind: 'insecure' } },
    });
    const client = createBookingClient({
      address: `127.0.0.1:${server.port}`,
      insecure: true,
      token: 'alice',
    });
    track(server, client);
    expect((await client.getBooking({ bookingId: booking.id })).booking?.id).toBe(booking.id);
  });

  it('is refused by a mutual-TLS server', async () => {
    const server = await startTestServer({ certificates });
    const client = createBookingClient({
      address: `127.0.0.1:${server.port}`,
      insecure: true,
      token: 'alice',
    });
    track(server, client);
    const failure = await failureOf(client.getBooking({ bookingId: booking.id }, { timeoutMs: 3000 }));
    expect(['UNAVAILABLE', 'DEADLINE_EXCEEDED']).toContain(status[failure.code]);
  });
});

describe('graceful shutdown', () => {
  it('lets a call in flight finish, and refuses new calls meanwhile', async () => {
    const entered = gate<void>();
    const release = gate<BookingView>();
    const server = await startTestServer({
      certificates,
      application: fakeApplication({
        getBooking: async () => {
          entered.open();
          return release.opened;
        },
      }),
    });
    const { client } = track(server, clientFor(server, certificates));
    const inFlight = client.getBooking({ bookingId: booking.id }, { timeoutMs: 10_000 });
    await entered.opened;

    let stopped = false;
    const stopping = server.stop().then(() => (stopped = true));
    // The client has heard the server go away once its connection is no longer ready.
    const channel = client.raw.getChannel();
    await eventually(
      () => Promise.resolve(channel.getConnectivityState(false)),
      (state) => state !== connectivityState.READY,
      { intervalMs: 10 },
    );
    const refused = await failureOf(client.getBooking({ bookingId: booking.id }, { timeoutMs: 2000 }));
    expect(status[refused.code]).toBe('UNAVAILABLE');
    expect(stopped).toBe(false);

    release.open(booking);
    expect((await inFlight).booking?.id).toBe(booking.id);
    await stopping;
    expect(stopped).toBe(true);
  });

  it('cuts off calls still running when the grace period ends', async () => {
    const entered = gate<void>();
    const server = await startTestServer({
      certificates,
      application: fakeApplication({
        getBooking: async () => {
          entered.open();
          return new Promise<BookingView>(() => undefined);
        },
      }),
      settings: { shutdownGraceMs: 300 },
    });
    const { client } = track(server, clientFor(server, certificates));
    const inFlight = failureOf(client.getBooking({ bookingId: booking.id }, { timeoutMs: 10_000 }));
    await entered.opened;
    const startedAt = Date.now();
    await server.stop();
    expect(Date.now() - startedAt).toBeLessThan(3000);
    expect(['UNAVAILABLE', 'CANCELLED']).toContain(status[(await inFlight).code]);
  });
});
