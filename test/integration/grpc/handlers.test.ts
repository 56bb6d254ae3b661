// Integration: each RPC maps its request onto one application call, and failures arrive as rich errors of the error model.
import { expect } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import type { BookingClient } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { BookingApplication } from '../../../src/application/interface';
import {
  bookingIdForRequest,
  commandIdForRequest,
  paymentAttemptIdForRequest,
} from '../../../src/application/request-ids';
import {
  DomainError,
  errorCodeMappings,
  errorCodes,
  seatUnavailable,
  validationFailed,
} from '../../../src/domain/errors';
import { BookingStatus } from '../../../src/generated/com/example/bookings/v1/booking';
import {
  actors,
  bookingView,
  clientFor,
  createTestCertificates,
  failureOf,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';

const booking = bookingView();
const confirmed = bookingView({ status: 'CONFIRMED', version: 2 });
const tripId = booking.tripId;
const passenger = booking.passengers[0];

/** Records every application call and answers with `answer`, which a test may replace. */
const calls: { operation: string; args: unknown[] }[] = [];
let answer: () => Promise<unknown> = () => Promise.resolve(booking);

function recorded<Name extends keyof BookingApplication>(operation: Name): BookingApplication[Name] {
  return (async (...args: unknown[]) => {
    calls.push({ operation, args });
    return answer();
  }) as BookingApplication[Name];
}

const application: BookingApplication = {
  createBooking: recorded('createBooking'),
  getBooking: recorded('getBooking'),
  listBookings: recorded('listBookings'),
  updateBooking: recorded('updateBooking'),
  cancelBooking: recorded('cancelBooking'),
  cancelPassengers: recorded('cancelPassengers'),
  confirmPayment: recorded('confirmPayment'),
  cancelTrip: recorded('cancelTrip'),
  getTripCancellation: recorded('getTripCancellation'),
};

let certificates: TestCertificates;
let server: RunningGrpcServer;
let client: BookingClient;

beforeAll(async () => {
  certificates = createTestCertificates();
  server = await startTestServer({ certificates, application });
  client = clientFor(server, certificates);
});

beforeEach(() => {
  calls.length = 0;
  answer = () => Promise.resolve(booking);
});

afterAll(async () => {
  client?.close();
  await server?.stop();
  if (certificates) removeTestCertificates(certificates);
});

describe('request mapping', () => {
  it('CreateBooking passes the trip, passengers, contact and the booking id its request id names', async () => {
    const response = await client.createBooking({
      requestId: 'b3f1c2d4-0000-4000-8000-000000000001',
      tripId,
      passengers: [
        {
          firstName: passenger.firstName,
          lastName: passenger.lastName,
          email: passenger.email,
          phone: passenger.phone,
          seatNumber: passenger.seatNumber,
          fareClass: passenger.fareClass,
        },
      ],
      contactEmail: booking.contactEmail,
    });
    expect(response.booking?.id).toBe(booking.id);
    expect(calls).toEqual([
      {
        operation: 'createBooking',
        args: [
          actors.alice,
          {
            tripId,
            passengers: [
              {
                firstName: passenger.firstName,
                lastName: passenger.lastName,
                email: passenger.email,
                phone: passenger.phone,
                seatNumber: passenger.seatNumber,
                fareClass: passenger.fareClass,
              },
            ],
            contactEmail: booking.contactEmail,
            contactPhone: undefined,
          },
          {
            bookingId: bookingIdForRequest(actors.alice, 'b3f1c2d4-0000-4000-8000-000000000001'),
            receivedAt: expect.any(Number) as unknown,
          },
        ],
      },
    ]);
    // The id is the caller's and the request id's: another caller's same request id names another booking.
    expect(bookingIdForRequest(actors.alice, 'b3f1c2d4-0000-4000-8000-000000000001')).not.toBe(
      bookingIdForRequest({ userId: 'someone-else' }, 'b3f1c2d4-0000-4000-8000-000000000001'),
    );
  });

  it("CreateBooking's answer time counts from the call's arrival, as REST's does from the request's", async () => {
    const sentAt = Date.now();
    await client.createBooking({
      tripId,
      passengers: [{ firstName: 'Ana', lastName: 'Silva', seatNumber: '1A', fareClass: 'STANDARD' }],
      contactEmail: booking.contactEmail,
    });
    const answeredAt = Date.now();
    const [, , options] = calls[0].args as [unknown, unknown, { receivedAt?: number }];
    expect(options.receivedAt).toBeGreaterThanOrEqual(sentAt);
    expect(options.receivedAt).toBeLessThanOrEqual(answeredAt);
  });

  it('GetBooking reads one booking', async () => {
    await client.getBooking({ bookingId: booking.id });
    expect(calls).toEqual([{ operation: 'getBooking', args: [actors.alice, booking.id] }]);
  });

  it('UpdateBooking passes the changes and the expected version, 0 meaning no check', async () => {
    await client.updateBooking({
      bookingId: booking.id,
      expectedVersion: 3,
      seatChanges: [{ passengerId: passenger.id, seatNumber: '5C' }],
      passengerUpdates: [{ passengerId: passenger.id, lastName: 'Sousa' }],
    });
    await client.updateBooking({
      bookingId: booking.id,
      seatChanges: [{ passengerId: passenger.id, seatNumber: '6C' }],
    });
    expect(calls.map((call) => call.args.slice(1))).toEqual([
      [
        booking.id,
        {
          seatChanges: [{ passengerId: passenger.id, seatNumber: '5C', fareClass: undefined }],
          addPassengers: [],
          passengerUpdates: [
            {
              passengerId: passenger.id,
              firstName: undefined,
              lastName: 'Sousa',
              email: undefined,
              phone: undefined,
            },
          ],
        },
        expect.objectContaining({ expectedVersion: 3, receivedAt: expect.any(Number) }),
      ],
      [
        booking.id,
        {
          seatChanges: [{ passengerId: passenger.id, seatNumber: '6C', fareClass: undefined }],
          addPassengers: [],
          passengerUpdates: [],
        },
        expect.objectContaining({ expectedVersion: undefined, receivedAt: expect.any(Number) }),
      ],
    ]);
  });

  it('CancelBooking passes the reason, and the command its request id names', async () => {
    answer = () => Promise.resolve(bookingView({ status: 'CANCELLED', cancellationReason: 'plans changed' }));
    const response = await client.cancelBooking({
      bookingId: booking.id,
      reason: 'plans changed',
      requestId: 'c4f1c2d4-0000-4000-8000-000000000003',
    });
    expect(response.booking?.status).toBe(BookingStatus.BOOKING_STATUS_CANCELLED);
    expect(calls).toEqual([
      {
        operation: 'cancelBooking',
        args: [
          actors.alice,
          booking.id,
          { reason: 'plans changed' },
          expect.objectContaining({
            commandId: commandIdForRequest(actors.alice, 'c4f1c2d4-0000-4000-8000-000000000003'),
            receivedAt: expect.any(Number),
          }),
        ],
      },
    ]);
  });

  it('CancelPassengers passes the passenger ids, quote id and reason, and the command its request id names', async () => {
    const response = await client.cancelPassengers({
      bookingId: booking.id,
      passengerIds: [booking.passengers[0].id],
      quoteId: 'c4f1c2d4-0000-4000-8000-0000000000aa',
      reason: 'ill',
      requestId: 'c4f1c2d4-0000-4000-8000-000000000009',
    });
    expect(response.booking?.id).toBe(booking.id);
    expect(calls).toEqual([
      {
        operation: 'cancelPassengers',
        args: [
          actors.alice,
          booking.id,
          {
            passengerIds: [booking.passengers[0].id],
            quoteId: 'c4f1c2d4-0000-4000-8000-0000000000aa',
            reason: 'ill',
          },
          expect.objectContaining({
            commandId: commandIdForRequest(actors.alice, 'c4f1c2d4-0000-4000-8000-000000000009'),
          }),
        ],
      },
    ]);
  });

  it('ConfirmPayment passes the payment token, and the payment attempt its request id names', async () => {
    answer = () => Promise.resolve(confirmed);
    const response = await client.confirmPayment({
      bookingId: booking.id,
      paymentToken: 'tok_visa',
      requestId: 'b3f1c2d4-0000-4000-8000-000000000002',
    });
    expect(response.booking?.status).toBe(BookingStatus.BOOKING_STATUS_CONFIRMED);
    await client.confirmPayment({ bookingId: booking.id, paymentToken: 'tok_visa' });
    expect(calls).toEqual([
      {
        operation: 'confirmPayment',
        args: [
          actors.alice,
          booking.id,
          { paymentToken: 'tok_visa' },
          expect.objectContaining({
            attemptId: paymentAttemptIdForRequest(actors.alice, 'b3f1c2d4-0000-4000-8000-000000000002'),
            receivedAt: expect.any(Number),
          }),
        ],
      },
      {
        operation: 'confirmPayment',
        args: [
          actors.alice,
          booking.id,
          { paymentToken: 'tok_visa' },
          expect.not.objectContaining({ attemptId: expect.anything() }),
        ],
      },
    ]);
  });

  it('ListBookings maps the status filter and paging, and returns the next page token', async () => {
    answer = () => Promise.resolve({ items: [booking, confirmed], nextPageToken: 'next' });
    const response = await client.listBookings({
      status: BookingStatus.BOOKING_STATUS_CONFIRMED,
      pageSize: 2,
    });
    expect(response.bookings.map((item) => item.version)).toEqual([1, 2]);
    expect(response.nextPageToken).toBe('next');
    answer = () => Promise.resolve({ items: [] });
    expect(await client.listBookings({})).toEqual({ bookings: [], nextPageToken: '' });
    expect(calls.map((call) => call.args[1])).toEqual([
      { status: 'CONFIRMED', pageSize: 2, pageToken: undefined },
      { status: undefined, pageSize: undefined, pageToken: undefined },
    ]);
  });

  it('refuses an unknown status filter with a BadRequest field violation', async () => {
    const failure = await failureOf(client.listBookings({ status: 42 as BookingStatus }));
    expect(status[failure.code]).toBe('INVALID_ARGUMENT');
    expect(failure.fieldViolations).toEqual([
      { field: 'status', description: 'must be a BookingStatus value' },
    ]);
    expect(calls).toEqual([]);
  });
});

describe('authorization from the proto method option', () => {
  it('refuses a call without a user token with UNAUTHENTICATED', async () => {
    const failure = await failureOf(client.getBooking({ bookingId: booking.id }, { token: null }));
    expect(status[failure.code]).toBe('UNAUTHENTICATED');
    expect(failure.reason).toBe('UNAUTHENTICATED');
    expect(calls).toEqual([]);
  });

  it('refuses a token the verifier rejects with UNAUTHENTICATED', async () => {
    const failure = await failureOf(client.getBooking({ bookingId: booking.id }, { token: 'forged' }));
    expect(failure.reason).toBe('UNAUTHENTICATED');
  });

  it('refuses a token without the method scope with PERMISSION_DENIED, before the application runs', async () => {
    const failure = await failureOf(client.cancelBooking({ bookingId: booking.id }, { token: 'readOnly' }));
    expect(status[failure.code]).toBe('PERMISSION_DENIED');
    expect(failure.reason).toBe('PERMISSION_DENIED');
    expect(calls).toEqual([]);
    await client.getBooking({ bookingId: booking.id }, { token: 'readOnly' });
    expect(calls).toHaveLength(1);
  });
});

describe('rich errors', () => {
  it.each(errorCodes)('sends %s as its gRPC code with ErrorInfo', async (code) => {
    answer = () => Promise.reject(new DomainError(code, `failed with ${code}`));
    const failure = await failureOf(client.getBooking({ bookingId: booking.id }));
    expect(status[failure.code]).toBe(errorCodeMappings[code].grpcStatus);
    expect(failure.reason).toBe(code);
    expect(failure.statusDetails?.errorInfo?.domain).toBe('bookings.example.com');
    expect(failure.message).toBe(`failed with ${code}`);
  });

  it('sends validation failures as BadRequest field violations', async () => {
    answer = () =>
      Promise.reject(
        validationFailed([
          { field: 'passengers[0].email', message: 'must be a valid email address' },
          { field: 'contact_email', message: 'is required and must be a string' },
        ]),
      );
    const failure = await failureOf(client.createBooking({ tripId }));
    expect(status[failure.code]).toBe('INVALID_ARGUMENT');
    expect(failure.reason).toBe('VALIDATION_FAILED');
    expect(failure.fieldViolations).toEqual([
      { field: 'passengers[0].email', description: 'must be a valid email address' },
      { field: 'contact_email', description: 'is required and must be a string' },
    ]);
  });

  it('carries error details as ErrorInfo metadata', async () => {
    answer = () => Promise.reject(seatUnavailable(['3A']));
    const failure = await failureOf(client.createBooking({ tripId }));
    expect(status[failure.code]).toBe('FAILED_PRECONDITION');
    expect(failure.statusDetails?.errorInfo?.metadata).toEqual({ seatNumbers: '["3A"]' });
  });

  it('hides an unexpected failure behind INTERNAL with a generic message', async () => {
    answer = () => Promise.reject(new Error('relation "bookings" does not exist at character 15'));
    const failure = await failureOf(client.getBooking({ bookingId: booking.id }));
    expect(status[failure.code]).toBe('INTERNAL');
    expect(failure.reason).toBe('INTERNAL');
    expect(failure.message).toBe('An internal error occurred');
    expect(JSON.stringify(failure.statusDetails)).not.toMatch(/relation|character/);
  });
});
