// Reading the API's answers: 2xx data, RFC 9457 problems as errors, and a booking operation's 200/201 versus 202.
import type { Client } from 'openapi-fetch';
import type { components, paths } from './generated/schema.js';

export type Schemas = components['schemas'];
export type Booking = Schemas['Booking'];
export type BookingProcessing = Schemas['BookingProcessing'];
export type Problem = Schemas['Problem'];
export type BookingServiceClient = Client<paths, 'application/json'>;

/**
 * What a booking operation answered: the booking (200 or 201, with its `ETag`), or 202 `BookingProcessing` while
 * its seats are still being held, with where and when to read it again.
 */
export type BookingAnswer =
  | { status: 200 | 201; booking: Booking; etag: string | null }
  | { status: 202; processing: BookingProcessing; location: string | null; retryAfterSeconds: number };

/** A non-2xx answer (or one outside the contract), with its problem document (RFC 9457) when the body is one. */
export class BookingServiceError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
    message?: string,
  ) {
    super(message ?? `${status} ${problem?.code ?? ''} ${problem?.detail ?? problem?.title ?? ''}`.trim());
    this.name = 'BookingServiceError';
  }
}

/** The shape of an openapi-fetch result, whatever the operation. */
export interface FetchResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { code?: unknown }).code === 'string' &&
    typeof (body as { status?: unknown }).status === 'number'
  );
}

function failure(result: FetchResult<unknown>): BookingServiceError {
  const body = result.error;
  return new BookingServiceError(result.response.status, isProblem(body) ? body : undefined);
}

/** The data of a 2xx answer; any other answer throws a BookingServiceError carrying its problem. */
export function successOf<Data>(result: FetchResult<Data>): Data {
  if (!result.response.ok || result.data === undefined) throw failure(result);
  return result.data;
}

/** True for the body of a 202: `status` is `PROCESSING`, which no booking ever has. */
export function isBookingProcessing(body: Booking | BookingProcessing): body is BookingProcessing {
  return body.status === 'PROCESSING';
}

/** Retry-After in seconds (delay-seconds or an HTTP date), else the body's `retry_after_seconds`, else 1. */
function retryAfterOf(header: string | null, fallback: number | undefined, now: number): number {
  if (header !== null && header.trim() !== '') {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds);
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  }
  return fallback !== undefined && Number.isFinite(fallback) ? Math.max(0, fallback) : 1;
}

/**
 * Splits a booking operation's 2xx answer, so a 202 is never read as a booking. The body's `status` and the HTTP
 * status must agree (`PROCESSING` with 202 only); an answer where they do not is outside the contract and throws.
 */
export function bookingAnswerOf(result: FetchResult<Booking | BookingProcessing>): BookingAnswer {
  const { response } = result;
  const data = successOf(result);
  if (isBookingProcessing(data)) {
    if (response.status !== 202) {
      throw new BookingServiceError(response.status, undefined, `${response.status} with a PROCESSING body`);
    }
    return {
      status: 202,
      processing: data,
      location: response.headers.get('location'),
      retryAfterSeconds: retryAfterOf(
        response.headers.get('retry-after'),
        data.retry_after_seconds,
        Date.now(),
      ),
    };
  }
  if (response.status === 200 || response.status === 201) {
    return { status: response.status, booking: data, etag: response.headers.get('etag') };
  }
  throw new BookingServiceError(response.status, undefined, `${response.status} with a booking body`);
}

/** The booking's id, from the booking or from the 202 (`Location` names it too). */
export function bookingIdOf(answer: BookingAnswer): string {
  return answer.status === 202 ? answer.processing.id : answer.booking.id;
}

/** The booking id at the end of a 202's `Location` (`/v1/bookings/<id>` or `/api/bookings/<id>`). */
function bookingIdAt(location: string): string | undefined {
  const match = /\/bookings\/([^/?#]+)\/?$/.exec(new URL(location, 'http://location.invalid').pathname);
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
}

export interface WaitOptions {
  /** Called before each wait, with the 202 that asked for it. */
  onProcessing?: (answer: Extract<BookingAnswer, { status: 202 }>) => void;
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

function sleep(seconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, seconds * 1000);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The booking an answer leads to: the booking itself, or, after a 202, what its `Location` answers once the seats
 * are held, read after each `Retry-After`. A create that ended without a booking throws its problem (for example
 * 409 SEAT_UNAVAILABLE).
 */
export async function waitForBooking(
  client: BookingServiceClient,
  answer: BookingAnswer,
  options: WaitOptions = {},
): Promise<{ booking: Booking; etag: string | null }> {
  let current = answer;
  while (current.status === 202) {
    options.onProcessing?.(current);
    await sleep(current.retryAfterSeconds, options.signal);
    const bookingId =
      (current.location === null ? undefined : bookingIdAt(current.location)) ?? current.processing.id;
    current = bookingAnswerOf(
      await client.GET('/v1/bookings/{booking_id}', {
        params: { path: { booking_id: bookingId } },
        signal: options.signal,
      }),
    );
  }
  return { booking: current.booking, etag: current.etag };
}
