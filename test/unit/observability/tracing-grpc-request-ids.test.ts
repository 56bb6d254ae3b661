// A gRPC call runs as its request: its request_id, else its x-request-id metadata, else a new id, in logs and calls.
import { Writable } from 'node:stream';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { startGrpcServer, type RunningGrpcServer } from '../../../src/api/grpc/server';
import {
  BookingServiceClient,
  type CreateBookingRequest,
  type DeepPartial,
} from '../../../src/generated/com/example/bookings/v1/booking_service';
import { createLogger } from '../../../src/logger';
import { currentRequestId } from '../../../src/observability/request-context';
import {
  alwaysReady,
  bookingView,
  fakeApplication,
  fakeBoardingApplication,
  fakeRefundQuoteApplication,
  fakeWebhookApplication,
  fakeFareApplication,
  fakeTicketApplication,
  verifyTestToken,
} from '../../support/grpc-server';

const seenRequestIds: (string | undefined)[] = [];
const logLines: Record<string, unknown>[] = [];
let server: RunningGrpcServer;
let client: BookingServiceClient;

beforeAll(async () => {
  const answer = () => {
    seenRequestIds.push(currentRequestId());
    return Promise.resolve(bookingView());
  };
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  server = await startGrpcServer(
    {
      host: '127.0.0.1',
      port: 0,
      transport: { kind: 'insecure' },
      maxReceiveMessageBytes: 64 * 1024,
      maxSendMessageBytes: 4 * 1024 * 1024,
      keepaliveTimeMs: 60_000,
      keepaliveTimeoutMs: 20_000,
      shutdownGraceMs: 1_000,
      healthCheckIntervalMs: 60_000,
    },
    {
      application: fakeApplication({ createBooking: answer, getBooking: answer }),
      tickets: fakeTicketApplication(),
      boarding: fakeBoardingApplication(),
      refundQuotes: fakeRefundQuoteApplication(),
      webhooks: fakeWebhookApplication(),
      fares: fakeFareApplication(),
      verifyAccessToken: verifyTestToken,
      checkReadiness: alwaysReady,
      logger: createLogger({ level: 'info', name: 'grpc-request-ids' }, destination),
    },
  );
  client = new BookingServiceClient(`127.0.0.1:${server.port}`, credentials.createInsecure());
});

afterEach(() => {
  seenRequestIds.length = 0;
  logLines.length = 0;
});

afterAll(async () => {
  client.close();
  await server.stop();
});

function metadataWith(requestId?: string): Metadata {
  const metadata = new Metadata();
  metadata.set('authorization', 'Bearer alice');
  if (requestId !== undefined) metadata.set('x-request-id', requestId);
  return metadata;
}

function unary(
  call: (metadata: Metadata, done: (error: ServiceError | null) => void) => void,
  metadata: Metadata,
): Promise<void> {
  return new Promise((resolve, reject) => call(metadata, (error) => (error ? reject(error) : resolve())));
}

const createRequest: DeepPartial<CreateBookingRequest> = {
  tripId: bookingView().tripId,
  requestId: 'grpc-create-1',
  contactEmail: 'contact@example.com',
  passengers: [
    {
      firstName: 'Ana',
      lastName: 'Silva',
      email: 'ana@example.com',
      seatNumber: '1A',
      fareClass: 'STANDARD',
    },
  ],
};

const callLine = () => logLines.find((line) => line.msg === 'gRPC call');

describe('the request id of a gRPC call', () => {
  it("is the request's request_id when it has one, in the application call and the call's log line", async () => {
    await unary(
      (metadata, done) => client.createBooking(createRequest as CreateBookingRequest, metadata, done),
      metadataWith('from-metadata'),
    );
    expect(seenRequestIds).toEqual(['grpc-create-1']);
    expect(callLine()).toMatchObject({ method: 'CreateBooking', request_id: 'grpc-create-1' });
  });

  it('is the x-request-id metadata entry for a request without one', async () => {
    await unary(
      (metadata, done) => client.getBooking({ bookingId: bookingView().id }, metadata, done),
      metadataWith('read-7'),
    );
    expect(seenRequestIds).toEqual(['read-7']);
    expect(callLine()).toMatchObject({ method: 'GetBooking', request_id: 'read-7' });
  });

  it('is a new id when neither is given or the metadata entry is malformed', async () => {
    for (const offered of [undefined, 'has spaces', 'x'.repeat(129)]) {
      await unary(
        (metadata, done) => client.getBooking({ bookingId: bookingView().id }, metadata, done),
        metadataWith(offered),
      );
    }
    expect(seenRequestIds).toEqual([
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      expect.stringMatching(/^[0-9a-f-]{36}$/),
    ]);
    expect(new Set(seenRequestIds).size).toBe(3);
  });
});
