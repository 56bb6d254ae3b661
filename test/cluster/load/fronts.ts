// The load's two ways into the service, REST and gRPC over mutual TLS, behind one shape: each call answers what a client saw.
import fs from 'node:fs';
import {
  BookingServiceCallError,
  createBookingClient,
  type BookingClient,
} from '../../../src/api/grpc/client';
import {
  BookingStatus as GrpcBookingStatus,
  type Booking as GrpcBooking,
} from '../../../src/generated/com/example/bookings/v1/booking';
import { status as grpcStatus } from '@grpc/grpc-js';

/** What the load needs to know of a booking after a call that answered one. */
export interface BookingSnapshot {
  id: string;
  status: string;
  version: number;
  passengers: { id: string; seatNumber: string }[];
}

/** One call as the client saw it: OK with the booking, or why not (HTTP status or gRPC code, the service's code). */
export interface Answer {
  ok: boolean;
  /** `201`, `409`, `OK`, `UNAVAILABLE`, `timeout`, `network-error`... */
  status: string;
  /** The service's error code (SEAT_UNAVAILABLE, BOOKING_PROCESSING...) when it answered one. */
  code?: string;
  booking?: BookingSnapshot;
  /** The booking an answer named without the booking itself (202 PROCESSING, gRPC BOOKING_PROCESSING). */
  bookingId?: string;
}

export interface Customer {
  email: string;
  userId: string;
  token: string;
}

export interface PassengerSpec {
  firstName: string;
  lastName: string;
  email: string;
  seatNumber: string;
  fareClass: string;
}

export interface CreateSpec {
  tripId: string;
  passengers: PassengerSpec[];
  contactEmail: string;
}

export type ChangeSpec =
  | { kind: 'seat'; passengerId: string; seatNumber: string }
  | { kind: 'add-passenger'; passenger: PassengerSpec };

/** The same operations over either front; `key` is the Idempotency-Key (REST) or request_id (gRPC). */
export interface Front {
  /** `rest api-1`, `grpc api-2`: which front of which API process. */
  readonly name: string;
  readonly protocol: 'rest' | 'grpc';
  create(customer: Customer, spec: CreateSpec, key: string): Promise<Answer>;
  pay(customer: Customer, bookingId: string, paymentToken: string, key: string): Promise<Answer>;
  change(customer: Customer, bookingId: string, version: number, change: ChangeSpec): Promise<Answer>;
  cancel(customer: Customer, bookingId: string): Promise<Answer>;
  get(customer: Customer, bookingId: string): Promise<Answer>;
  close(): void;
}

const callTimeoutMs = 15_000;

interface RestBooking {
  id?: string;
  status?: string;
  version?: number;
  code?: string;
  passengers?: { id: string; seat_number: string }[];
}

function restPassenger(passenger: PassengerSpec) {
  return {
    first_name: passenger.firstName,
    last_name: passenger.lastName,
    email: passenger.email,
    seat_number: passenger.seatNumber,
    fare_class: passenger.fareClass,
  };
}

export function restFront(name: string, baseUrl: string): Front {
  async function call(
    method: string,
    path: string,
    customer: Customer,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${customer.token}`,
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(callTimeoutMs),
      });
      const text = await response.text();
      let body: RestBooking = {};
      try {
        body = text ? (JSON.parse(text) as RestBooking) : {};
      } catch {
        // A proxy's or a dying process's plain-text answer: the status says enough.
      }
      const ok = response.status === 200 || response.status === 201;
      const booking =
        ok && body.id !== undefined
          ? {
              id: body.id,
              status: body.status ?? '',
              version: body.version ?? 0,
              passengers: (body.passengers ?? []).map((passenger) => ({
                id: passenger.id,
                seatNumber: passenger.seat_number,
              })),
            }
          : undefined;
      return {
        ok,
        status: String(response.status),
        ...(body.code === undefined ? {} : { code: body.code }),
        ...(booking === undefined ? {} : { booking }),
        ...(response.status === 202 && body.id !== undefined
          ? { bookingId: body.id, code: 'BOOKING_PROCESSING' }
          : {}),
      };
    } catch (error) {
      const timedOut = error instanceof Error && error.name === 'TimeoutError';
      return { ok: false, status: timedOut ? 'timeout' : 'network-error' };
    }
  }

  return {
    name,
    protocol: 'rest',
    create: (customer, spec, key) =>
      call('POST', '/v1/bookings', customer, {
        body: {
          trip_id: spec.tripId,
          passengers: spec.passengers.map(restPassenger),
          contact_email: spec.contactEmail,
        },
        headers: { 'idempotency-key': key },
      }),
    pay: (customer, bookingId, paymentToken, key) =>
      call('POST', `/v1/bookings/${bookingId}/payment`, customer, {
        body: { payment_token: paymentToken },
        headers: { 'idempotency-key': key },
      }),
    change: (customer, bookingId, version, change) =>
      call('PATCH', `/v1/bookings/${bookingId}`, customer, {
        body:
          change.kind === 'seat'
            ? { seat_changes: [{ passenger_id: change.passengerId, seat_number: change.seatNumber }] }
            : { add_passengers: [restPassenger(change.passenger)] },
        headers: { 'if-match': `"${version}"` },
      }),
    cancel: (customer, bookingId) =>
      call('PUT', `/v1/bookings/${bookingId}/cancel`, customer, { body: { reason: 'chaos run' } }),
    get: (customer, bookingId) => call('GET', `/v1/bookings/${bookingId}`, customer),
    close: () => undefined,
  };
}

function grpcSnapshot(booking: GrpcBooking | undefined): BookingSnapshot | undefined {
  if (booking === undefined) return undefined;
  const status = GrpcBookingStatus[booking.status] ?? 'UNRECOGNIZED';
  return {
    id: booking.id,
    status: status.replace(/^BOOKING_STATUS_/, ''),
    version: booking.version,
    passengers: booking.passengers.map((passenger) => ({
      id: passenger.id,
      seatNumber: passenger.seatNumber,
    })),
  };
}

export interface GrpcClientFiles {
  certificateAuthority: string;
  certificate: string;
  privateKey: string;
  serverName: string;
}

export function grpcFront(name: string, address: string, files: GrpcClientFiles): Front {
  const client: BookingClient = createBookingClient({
    address,
    ca: fs.readFileSync(files.certificateAuthority),
    cert: fs.readFileSync(files.certificate),
    key: fs.readFileSync(files.privateKey),
    serverName: files.serverName,
  });

  async function call(run: () => Promise<{ booking?: GrpcBooking }>): Promise<Answer> {
    try {
      const booking = grpcSnapshot((await run()).booking);
      return { ok: true, status: 'OK', ...(booking === undefined ? {} : { booking }) };
    } catch (error) {
      if (!(error instanceof BookingServiceCallError)) {
        return {
          ok: false,
          status: 'client-error',
          code: error instanceof Error ? error.message : String(error),
        };
      }
      const processingId = error.statusDetails?.errorInfo?.metadata.bookingId;
      return {
        ok: false,
        status: grpcStatus[error.code] ?? String(error.code),
        ...(error.reason === undefined ? {} : { code: error.reason }),
        ...(processingId === undefined ? {} : { bookingId: processingId }),
      };
    }
  }

  const options = (customer: Customer) => ({ token: customer.token, timeoutMs: callTimeoutMs });
  return {
    name,
    protocol: 'grpc',
    create: (customer, spec, key) =>
      call(() => client.createBooking({ requestId: key, ...spec }, options(customer))),
    pay: (customer, bookingId, paymentToken, key) =>
      call(() => client.confirmPayment({ bookingId, paymentToken, requestId: key }, options(customer))),
    change: (customer, bookingId, version, change) =>
      call(() =>
        client.updateBooking(
          {
            bookingId,
            expectedVersion: version,
            ...(change.kind === 'seat'
              ? { seatChanges: [{ passengerId: change.passengerId, seatNumber: change.seatNumber }] }
              : { addPassengers: [change.passenger] }),
          },
          options(customer),
        ),
      ),
    cancel: (customer, bookingId) =>
      call(() => client.cancelBooking({ bookingId, reason: 'chaos run' }, options(customer))),
    get: (customer, bookingId) => call(() => client.getBooking({ bookingId }, options(customer))),
    close: () => client.close(),
  };
}
