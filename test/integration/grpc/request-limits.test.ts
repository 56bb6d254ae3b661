// Integration: gRPC requests meet REST's limits (page size, idempotency keys) and never carry U+0000 to SQL.
import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import type { BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import { createBookingApplication } from '../../../src/application/bookings';
import { bookingListing } from '../../../src/db/booking-read-model';
import { encodePageToken } from '../../../src/db/paging';
import type { BookingApplication } from '../../../src/application/interface';
import { openTestDatabase, testCipher, testConfig } from '../../support/database';
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

const nulMessage = 'must not contain the NUL character (U+0000)';

let database: Knex;
let connection: Connection;
let certificates: TestCertificates;
let server: RunningGrpcServer;
let client: BookingClient;
const applicationCalls: string[] = [];

beforeAll(async () => {
  database = openTestDatabase({ poolSize: 2, applicationName: 'grpc-limits-tests' });
  // Listing reads PostgreSQL only; the lazy client would connect to Temporal only if a workflow were asked for.
  connection = Connection.lazy({ address: process.env.TEMPORAL_ADDRESS });
  const real = createBookingApplication({
    config: testConfig(),
    database,
    temporal: new Client({ connection }),
    cipher: testCipher(),
  });
  const recordedBooking = () => {
    applicationCalls.push('write');
    return Promise.resolve(bookingView());
  };
  const application: BookingApplication = {
    ...fakeApplication({
      createBooking: recordedBooking,
      updateBooking: recordedBooking,
      confirmPayment: recordedBooking,
    }),
    listBookings: (actor, query) => real.listBookings(actor, query),
  };
  certificates = createTestCertificates();
  server = await startTestServer({ certificates, application });
  client = clientFor(server, certificates);
});

beforeEach(() => {
  applicationCalls.length = 0;
});

afterAll(async () => {
  client?.close();
  await server?.stop();
  if (certificates) removeTestCertificates(certificates);
  await connection?.close();
  await database?.destroy();
});

const passenger = {
  firstName: 'Ana',
  lastName: 'Silva',
  email: 'ana.silva@example.com',
  seatNumber: '12C',
  fareClass: 'STANDARD',
};

describe('ListBookings page_size', () => {
  it('refuses more than 100 with INVALID_ARGUMENT naming page_size, as REST refuses page_size=101', async () => {
    for (const pageSize of [101, 100_000, -1]) {
      const failure = await failureOf(client.listBookings({ pageSize }));
      expect([failure.code, failure.reason]).toEqual([status.INVALID_ARGUMENT, 'VALIDATION_FAILED']);
      expect(failure.fieldViolations.map(({ field }) => field)).toEqual(['page_size']);
    }
  });

  it('accepts 1 to 100, and 0 as the default', async () => {
    for (const pageSize of [0, 1, 100]) {
      await expect(client.listBookings({ pageSize })).resolves.toEqual({ bookings: [], nextPageToken: '' });
    }
  });
});

describe('U+0000 in a gRPC request', () => {
  it('fails with INVALID_ARGUMENT naming the proto field, before the application runs', async () => {
    const created = await failureOf(
      client.createBooking({
        requestId: `key-${randomUUID()}\u0000`,
        tripId: randomUUID(),
        passengers: [passenger],
        contactEmail: 'ana.silva@example.com',
      }),
    );
    expect([created.code, created.reason]).toEqual([status.INVALID_ARGUMENT, 'VALIDATION_FAILED']);
    expect(created.fieldViolations).toEqual([{ field: 'request_id', description: nulMessage }]);
    const updated = await failureOf(
      client.updateBooking({
        bookingId: randomUUID(),
        passengerUpdates: [{ passengerId: randomUUID(), firstName: 'Jo\u0000ão' }],
      }),
    );
    expect(updated.fieldViolations).toEqual([
      { field: 'passenger_updates[0].first_name', description: nulMessage },
    ]);
    const paid = await failureOf(
      client.confirmPayment({ bookingId: randomUUID(), paymentToken: 'tok_visa', requestId: '\u0000' }),
    );
    expect(paid.fieldViolations).toEqual([{ field: 'request_id', description: nulMessage }]);
    expect(applicationCalls).toEqual([]);
  });

  it('inside a page token fails with INVALID_ARGUMENT naming page_token, not INTERNAL from SQL', async () => {
    const pageToken = encodePageToken(
      bookingListing,
      { status: null },
      { createdAt: '2026-11-20T09:00:00.000000Z\u0000', id: randomUUID() },
    );
    const failure = await failureOf(client.listBookings({ pageToken }));
    expect([failure.code, failure.reason]).toEqual([status.INVALID_ARGUMENT, 'VALIDATION_FAILED']);
    expect(failure.fieldViolations.map(({ field }) => field)).toEqual(['page_token']);
  });
});

describe('request_id', () => {
  it('follows the rules of REST Idempotency-Key: one REST refuses fails with INVALID_ARGUMENT', async () => {
    for (const requestId of ['has spaces', 'k'.repeat(256), 'clé']) {
      const failure = await failureOf(
        client.createBooking({
          requestId,
          tripId: randomUUID(),
          passengers: [passenger],
          contactEmail: 'a@example.com',
        }),
      );
      expect([failure.code, failure.fieldViolations.map(({ field }) => field)]).toEqual([
        status.INVALID_ARGUMENT,
        ['request_id'],
      ]);
    }
    expect(applicationCalls).toEqual([]);
    await client.createBooking({
      requestId: 'k'.repeat(255),
      tripId: randomUUID(),
      passengers: [passenger],
      contactEmail: 'a@example.com',
    });
    expect(applicationCalls).toEqual(['write']);
  });
});
