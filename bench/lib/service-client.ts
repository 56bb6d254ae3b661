// The bench's calls to the service under test: sign-ins of the load-test pool, REST and gRPC creates, payments.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { BookingServiceCallError, createBookingClient, type BookingClient } from '../../src/api/grpc/client';
import { loadTestUsers, LOAD_TEST_PASSWORD } from '../../dev/seed';
import type { DevelopmentCertificates } from '../../dev/stack/development-certificates';
import type { FreeSeat } from './inventory';
import { status as grpcStatus } from '@grpc/grpc-js';

export interface Account {
  email: string;
  token: string;
}

/** Signs every load-test account in once (their tokens outlive the run: the bench sets a day's lifetime). */
export async function signInPool(apiUrl: string): Promise<Account[]> {
  const accounts: Account[] = [];
  // A few at a time: each login is an argon2 verification, and the API process has two cores to share.
  for (let index = 0; index < loadTestUsers.length; index += 4) {
    const batch = loadTestUsers.slice(index, index + 4);
    accounts.push(
      ...(await Promise.all(
        batch.map(async (user) => ({
          email: user.email,
          token: await signIn(apiUrl, user.email, LOAD_TEST_PASSWORD),
        })),
      )),
    );
  }
  return accounts;
}

export async function signIn(apiUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${apiUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok)
    throw new Error(`login of ${email} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export function createBookingBody(seat: FreeSeat, email: string) {
  return {
    trip_id: seat.tripId,
    passengers: [
      {
        first_name: 'Load',
        last_name: 'Test',
        email,
        seat_number: seat.seatNumber,
        fare_class: seat.fareClass,
      },
    ],
    contact_email: email,
  };
}

export interface CallOutcome {
  /** HTTP status, or for gRPC the status code's name (OK, FAILED_PRECONDITION...). */
  status: string;
  milliseconds: number;
  bookingId?: string;
  /** The service's error code (SEAT_UNAVAILABLE, BOOKING_PROCESSING...) when it answered one. */
  code?: string;
}

interface JsonAnswer {
  id?: string;
  code?: string;
  status?: string;
  booking_id?: string;
}

async function restCall(
  url: string,
  init: { method: string; token: string; body?: unknown; idempotencyKey?: string },
  timeoutMs: number,
): Promise<CallOutcome & { body: JsonAnswer }> {
  const startedAt = performance.now();
  try {
    const response = await fetch(url, {
      method: init.method,
      headers: {
        authorization: `Bearer ${init.token}`,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.idempotencyKey === undefined ? {} : { 'idempotency-key': init.idempotencyKey }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const body = (text ? JSON.parse(text) : {}) as JsonAnswer;
    return {
      status: String(response.status),
      milliseconds: performance.now() - startedAt,
      body,
      ...(body.id === undefined ? {} : { bookingId: body.id }),
      ...(body.code === undefined ? {} : { code: body.code }),
    };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    return {
      status: timedOut ? 'timeout' : 'network-error',
      milliseconds: performance.now() - startedAt,
      body: {},
    };
  }
}

export function restCreate(apiUrl: string, account: Account, seat: FreeSeat, timeoutMs = 30_000) {
  return restCall(
    `${apiUrl}/v1/bookings`,
    {
      method: 'POST',
      token: account.token,
      body: createBookingBody(seat, account.email),
      idempotencyKey: randomUUID(),
    },
    timeoutMs,
  );
}

export function restPay(apiUrl: string, account: Account, bookingId: string, timeoutMs = 30_000) {
  return restCall(
    `${apiUrl}/v1/bookings/${bookingId}/payment`,
    {
      method: 'POST',
      token: account.token,
      body: { payment_token: 'tok_visa' },
      idempotencyKey: randomUUID(),
    },
    timeoutMs,
  );
}

export function restGet(apiUrl: string, account: Account, bookingId: string, timeoutMs = 30_000) {
  return restCall(`${apiUrl}/v1/bookings/${bookingId}`, { method: 'GET', token: account.token }, timeoutMs);
}

/** Creates over REST and, when the answer is 202 (still holding), reads the booking until it is held. */
export async function restCreateUntilHeld(
  apiUrl: string,
  account: Account,
  seat: FreeSeat,
): Promise<CallOutcome> {
  const startedAt = performance.now();
  const created = await restCreate(apiUrl, account, seat);
  let outcome: CallOutcome = created;
  while (
    outcome.status === '202' &&
    created.bookingId !== undefined &&
    performance.now() - startedAt < 120_000
  ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    outcome = await restGet(apiUrl, account, created.bookingId);
  }
  return {
    ...outcome,
    bookingId: created.bookingId ?? outcome.bookingId,
    milliseconds: performance.now() - startedAt,
  };
}

export function createGrpcClient(address: string, certificates: DevelopmentCertificates): BookingClient {
  return createBookingClient({
    address,
    ca: fs.readFileSync(certificates.certificateAuthority),
    cert: fs.readFileSync(certificates.client.certificate),
    key: fs.readFileSync(certificates.client.privateKey),
    serverName: 'localhost',
  });
}

export async function grpcCreate(
  client: BookingClient,
  account: Account,
  seat: FreeSeat,
  timeoutMs = 30_000,
): Promise<CallOutcome> {
  const startedAt = performance.now();
  try {
    const response = await client.createBooking(
      {
        requestId: randomUUID(),
        tripId: seat.tripId,
        passengers: [
          {
            firstName: 'Load',
            lastName: 'Test',
            email: account.email,
            seatNumber: seat.seatNumber,
            fareClass: seat.fareClass,
          },
        ],
        contactEmail: account.email,
      },
      { token: account.token, timeoutMs },
    );
    return {
      status: 'OK',
      milliseconds: performance.now() - startedAt,
      ...(response.booking?.id === undefined ? {} : { bookingId: response.booking.id }),
    };
  } catch (error) {
    if (!(error instanceof BookingServiceCallError)) throw error;
    return {
      status: grpcStatus[error.code] ?? String(error.code),
      milliseconds: performance.now() - startedAt,
      ...(error.reason === undefined ? {} : { code: error.reason }),
    };
  }
}

/** A 5xx, or the gRPC codes that stand for one (UNAVAILABLE with BOOKING_PROCESSING is a 202's twin, not one). */
export function isServerFailure(outcome: CallOutcome): boolean {
  if (/^\d+$/.test(outcome.status)) return Number(outcome.status) >= 500;
  if (outcome.status === 'UNAVAILABLE') return outcome.code !== 'BOOKING_PROCESSING';
  return ['UNKNOWN', 'INTERNAL', 'DATA_LOSS'].includes(outcome.status);
}

/** No answer at all within the caller's timeout (or the connection failed). */
export function isUnanswered(outcome: CallOutcome): boolean {
  return ['timeout', 'network-error', 'DEADLINE_EXCEEDED'].includes(outcome.status);
}
