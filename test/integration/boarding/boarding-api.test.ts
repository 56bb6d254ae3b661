// Boarding over the real fronts: the REST app as main.ts composes it and the gRPC server, with tickets the service issued.
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { expect } from '@jest/globals';
import request from 'supertest';
import {
  BookingServiceCallError,
  createBookingClient,
  type BookingClient,
} from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { BookingView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import { BoardingStatus } from '../../../src/generated/com/example/bookings/v1/boarding';
import {
  GetTripManifestRequest,
  RecordBoardingRequest,
  type GetTripManifestResponse,
  type RecordBoardingResponse,
} from '../../../src/generated/com/example/bookings/v1/booking_service';
import { createTicketKeys, issueTestTicket } from '../../support/boarding-tickets';
import {
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import { eventually } from '../../support/outcomes';
import { composeTestApi, startServer, type RunningServer, type TestApi } from '../../support/rest-app';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { createCustomer, insertLoginUser } from '../../support/users';

jest.setTimeout(120_000);

let saga: SagaEnvironment;
let api: TestApi;
let server: RunningServer;
let certificates: TestCertificates;
let grpcServer: RunningGrpcServer;
let grpcClient: BookingClient;
let trip: TestTrip;
let customer: Actor;
let driverToken: string;
let customerToken: string;

beforeAll(async () => {
  // The trip leaves within the hour, and the revocation test changes a seat: no change cutoff.
  saga = await startSagaEnvironment({
    environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100', BOOKING_CHANGE_CUTOFF_SECONDS: '0' },
  });
  api = await composeTestApi(saga);
  server = await startServer(api.app);
  certificates = createTestCertificates();
  grpcServer = await startTestServer({
    certificates,
    application: saga.application,
    boarding: api.boarding,
    verifyAccessToken: (token) => api.verifier.verifyAccessToken(token),
  });
  // Tickets open three hours before departure: this trip's are valid now.
  trip = await createTrip(saga.database, { seatCount: 16, departureInMs: 3_600_000 });
  customer = await createCustomer(saga.database, saga.cipher);
  const driver = await insertLoginUser(saga.database, saga.cipher, { roles: ['driver'] });
  const customerLogin = await insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] });
  driverToken = (await api.identityProvider.login(driver, '127.0.0.1')).access_token;
  customerToken = (await api.identityProvider.login(customerLogin, '127.0.0.1')).access_token;
  grpcClient = createBookingClient({
    address: `127.0.0.1:${grpcServer.port}`,
    ca: certificates.ca,
    cert: certificates.allowedClient.cert,
    key: certificates.allowedClient.key,
    token: driverToken,
  });
});

afterAll(async () => {
  grpcClient?.close();
  await grpcServer?.stop();
  await server?.close();
  await api?.remove();
  await saga?.stop();
  if (certificates) removeTestCertificates(certificates);
});

async function confirmedBooking(seats: string[]): Promise<BookingView> {
  const pending = await saga.application.createBooking(customer, bookingRequest(trip, seats));
  return saga.application.confirmPayment(customer, pending.id, { paymentToken: 'tok_visa' });
}

/** The QR payload of the valid ticket the saga issued for the passenger. */
async function issuedTicket(
  booking: BookingView,
  passengerIndex = 0,
): Promise<{ id: string; token: string }> {
  const row = await eventually(
    (): Promise<{ id: string; token: string } | undefined> =>
      saga
        .database('tickets')
        .where({ booking_id: booking.id, passenger_id: booking.passengers[passengerIndex].id })
        .whereNull('revoked_at')
        .first('id', 'token'),
    (found) => found !== undefined,
  );
  return row!;
}

interface ManifestJson {
  booking_id: string;
  seat_number: string;
  status: string;
  boarding_stop: string;
}

/** A REST answer: a boarding, a manifest page or a problem document. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: {
    code?: string;
    type?: string;
    detail?: string;
    errors?: { field: string; message: string }[];
    boarded_at?: string;
    passengers?: ManifestJson[];
    next_page_token?: string | null;
  } & Record<string, unknown>;
}

async function answered(pending: PromiseLike<request.Response>): Promise<Answer> {
  const response = await pending;
  return {
    status: response.status,
    headers: response.headers,
    body: response.body as Answer['body'],
  };
}

function scan(tripId: string, body: object, token = driverToken): Promise<Answer> {
  return answered(
    request(server.baseUrl)
      .post(`/v1/trips/${tripId}/boardings`)
      .set('Authorization', `Bearer ${token}`)
      .send(body),
  );
}

function manifestPage(tripId: string, query: Record<string, string | number> = {}): Promise<Answer> {
  return answered(
    request(server.baseUrl)
      .get(`/v1/trips/${tripId}/manifest`)
      .query(query)
      .set('Authorization', `Bearer ${driverToken}`),
  );
}

function grpcCall<Response>(
  method: 'recordBoarding' | 'getTripManifest',
  message: unknown,
): Promise<Response> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${driverToken}`);
  const raw = grpcClient.raw as unknown as Record<
    string,
    (
      message: unknown,
      metadata: Metadata,
      callback: (error: ServiceError | null, response: Response) => void,
    ) => void
  >;
  return new Promise((resolve, reject) => {
    raw[method].call(grpcClient.raw, message, metadata, (error, response) => {
      if (error) reject(new BookingServiceCallError(error));
      else resolve(response);
    });
  });
}

test('REST: a scan boards the passenger and answers the seat; a second scan is 409 ALREADY_BOARDED with when and where', async () => {
  const booking = await confirmedBooking(['1A']);
  const { token } = await issuedTicket(booking);
  const stop = trip.stopCodes[0];

  const first = await scan(trip.tripId, { ticket: token, stop, device_id: 'bus-17' });
  expect(first.status).toBe(200);
  expect(first.body).toEqual({
    booking_id: booking.id,
    passenger_id: booking.passengers[0].id,
    first_name: booking.passengers[0].firstName,
    last_name: booking.passengers[0].lastName,
    seat_number: '1A',
    stop,
    boarded_at: expect.any(String),
  });

  const second = await scan(trip.tripId, { ticket: token, stop });
  expect(second.status).toBe(409);
  expect(second.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(second.body).toMatchObject({
    code: 'ALREADY_BOARDED',
    type: 'urn:bus-booking:problem:already-boarded',
    detail: `The passenger already boarded at ${stop} at ${first.body.boarded_at}`,
  });
});

test('REST: a ticket a seat change revoked is 409 TICKET_REVOKED', async () => {
  const booking = await confirmedBooking(['2A']);
  const old = await issuedTicket(booking);
  await saga.application.updateBooking(customer, booking.id, {
    seatChanges: [{ passengerId: booking.passengers[0].id, seatNumber: '2B' }],
  });
  await eventually(
    (): Promise<{ revoked_reason: string | null } | undefined> =>
      saga.database('tickets').where({ id: old.id }).first('revoked_reason'),
    (row) => row?.revoked_reason != null,
  );

  const refused = await scan(trip.tripId, { ticket: old.token, stop: trip.stopCodes[0] });

  expect(refused.status).toBe(409);
  expect(refused.body).toMatchObject({ code: 'TICKET_REVOKED' });
  const manifest = await manifestPage(trip.tripId, { page_size: 100 });
  const entry = manifest.body.passengers?.find((passenger) => passenger.booking_id === booking.id);
  expect(entry?.status).toBe('EXPECTED');
});

test('REST: forged, truncated, foreign-key, other-trip, other-stop tickets, unknown trips and customers each get a clear error', async () => {
  const booking = await confirmedBooking(['3A']);
  const { token } = await issuedTicket(booking);
  const stop = trip.stopCodes[0];
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  const tamper = (changes: Record<string, unknown>) =>
    `${header}.${Buffer.from(JSON.stringify({ ...claims, ...changes })).toString('base64url')}.${signature}`;

  const forged = await scan(trip.tripId, { ticket: tamper({ seat: '9A' }), stop });
  expect([forged.status, forged.body.code, forged.body.detail]).toEqual([
    422,
    'TICKET_INVALID',
    'The ticket signature does not verify',
  ]);

  const truncated = await scan(trip.tripId, { ticket: token.slice(0, token.lastIndexOf('.')), stop });
  expect([truncated.status, truncated.body.code]).toEqual([422, 'TICKET_INVALID']);

  const foreign = await issueTestTicket(saga.database, await createTicketKeys(), booking, 0, {
    store: false,
  });
  const foreignKey = await scan(trip.tripId, { ticket: foreign.token, stop });
  expect([foreignKey.status, foreignKey.body.code]).toEqual([422, 'TICKET_INVALID']);

  const otherTrip = await createTrip(saga.database, { seatCount: 4, departureInMs: 3_600_000 });
  const wrongTrip = await scan(otherTrip.tripId, { ticket: token, stop: otherTrip.stopCodes[0] });
  expect(wrongTrip.status).toBe(400);
  expect(wrongTrip.body.errors).toEqual([
    { field: 'ticket', message: `is a ticket for trip ${trip.tripId}, not this trip` },
  ]);

  const wrongStop = await scan(trip.tripId, { ticket: token, stop: trip.stopCodes[1] });
  expect(wrongStop.status).toBe(400);
  expect(wrongStop.body.errors).toEqual([
    { field: 'stop', message: `the ticket boards at ${stop}, not at ${trip.stopCodes[1]}` },
  ]);

  const unknownTrip = await scan('00000000-0000-4000-8000-000000000404', { ticket: token, stop });
  expect([unknownTrip.status, unknownTrip.body.code]).toEqual([404, 'NOT_FOUND']);

  const badBody = await scan(trip.tripId, { ticket: token, stop: 'lisbon', extra: true });
  expect(badBody.status).toBe(400);
  expect((badBody.body.errors ?? []).map((violation) => violation.field).sort()).toEqual(['extra', 'stop']);

  const byCustomer = await scan(trip.tripId, { ticket: token, stop }, customerToken);
  expect([byCustomer.status, byCustomer.body.code]).toEqual([403, 'PERMISSION_DENIED']);

  const row: { boarding_status: string } | undefined = await saga
    .database('passengers')
    .where({ id: booking.passengers[0].id })
    .first('boarding_status');
  expect(row?.boarding_status).toBe('EXPECTED');
});

test('gRPC: RecordBoarding boards, a second scan is FAILED_PRECONDITION ALREADY_BOARDED, GetTripManifest shows it', async () => {
  const booking = await confirmedBooking(['4A', '4B']);
  const { token } = await issuedTicket(booking, 1);
  const stop = trip.stopCodes[0];

  const boarded = await grpcCall<RecordBoardingResponse>(
    'recordBoarding',
    RecordBoardingRequest.fromPartial({ tripId: trip.tripId, ticket: token, stop }),
  );
  expect(boarded.boarding).toMatchObject({ bookingId: booking.id, seatNumber: '4B', stop });

  const again = await grpcCall(
    'recordBoarding',
    RecordBoardingRequest.fromPartial({ tripId: trip.tripId, ticket: token, stop }),
  ).catch((error: unknown) => error);
  expect(again).toBeInstanceOf(BookingServiceCallError);
  const failure = again as BookingServiceCallError;
  expect([failure.code, failure.reason]).toEqual([status.FAILED_PRECONDITION, 'ALREADY_BOARDED']);
  expect(failure.statusDetails?.errorInfo?.metadata).toMatchObject({
    stop,
    boardedAt: boarded.boarding!.boardedAt!.toISOString(),
  });

  const manifest = await grpcCall<GetTripManifestResponse>(
    'getTripManifest',
    GetTripManifestRequest.fromPartial({ tripId: trip.tripId, pageSize: 100 }),
  );
  const ofBooking = manifest.passengers.filter((passenger) => passenger.bookingId === booking.id);
  expect(
    ofBooking.map((passenger) => [passenger.seatNumber, passenger.status, passenger.boardedStop]),
  ).toEqual([
    ['4A', BoardingStatus.BOARDING_STATUS_EXPECTED, ''],
    ['4B', BoardingStatus.BOARDING_STATUS_BOARDED, stop],
  ]);
});

test('REST: the manifest lists the trip by boarding stop and seat with each status, paged', async () => {
  const cancelled = await confirmedBooking(['3C']);
  await saga.application.cancelBooking(customer, cancelled.id, {});
  const firstPage = await manifestPage(trip.tripId, { page_size: 2 });
  expect(firstPage.status).toBe(200);
  expect(firstPage.body.passengers).toHaveLength(2);
  expect(typeof firstPage.body.next_page_token).toBe('string');

  const everything: ManifestJson[] = [];
  let pageToken: string | null = null;
  do {
    const page = await manifestPage(trip.tripId, {
      page_size: 2,
      ...(pageToken === null ? {} : { page_token: pageToken }),
    });
    expect(page.status).toBe(200);
    everything.push(...(page.body.passengers ?? []));
    pageToken = page.body.next_page_token ?? null;
  } while (pageToken !== null);

  const statusOf = (seat: string) => everything.find((entry) => entry.seat_number === seat)?.status;
  expect(statusOf('1A')).toBe('BOARDED');
  expect(statusOf('2B')).toBe('EXPECTED');
  expect(statusOf('4B')).toBe('BOARDED');
  expect(statusOf('3C')).toBe('CANCELLED');
  expect(everything.map((entry) => entry.seat_number)).toEqual(
    [...everything.map((entry) => entry.seat_number)].sort(),
  );
  expect(new Set(everything.map((entry) => entry.boarding_stop))).toEqual(new Set([trip.stopCodes[0]]));

  const unknown = await manifestPage('00000000-0000-4000-8000-000000000404');
  expect([unknown.status, unknown.body.code]).toEqual([404, 'NOT_FOUND']);
});
