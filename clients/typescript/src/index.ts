// Typed client of the bus-booking REST API: openapi-fetch over the types openapi-typescript generates from the contract.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './generated/schema';

export type { components, operations, paths } from './generated/schema';

export type Schemas = components['schemas'];
export type Booking = Schemas['Booking'];
export type BookingProcessing = Schemas['BookingProcessing'];
export type Problem = Schemas['Problem'];
export type BookingServiceClient = Client<paths, 'application/json'>;

export interface BookingServiceClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Origin of the API, for example `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Bearer access token sent with every request; absent for sign-in and the public endpoints. */
  accessToken?: string;
}

export function createBookingServiceClient(options: BookingServiceClientOptions): BookingServiceClient {
  const { accessToken, headers, ...rest } = options;
  return createClient<paths, 'application/json'>({
    ...rest,
    headers: {
      ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
      ...headers,
    },
  });
}

/**
 * What a booking operation answered. The contract gives 200/201 (`Booking`) and 202 (`BookingProcessing`) different
 * schemas; openapi-fetch types `data` as their union, so the status is what tells them apart, and this keeps it.
 */
export type BookingAnswer =
  | { status: 200 | 201; booking: Booking; etag: string | null }
  | { status: 202; processing: BookingProcessing; location: string | null; retryAfterSeconds: number };

/** A non-2xx answer, with the contract's problem document (RFC 9457) when the body is one. */
export class BookingServiceError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
  ) {
    super(`${status} ${problem?.code ?? ''} ${problem?.detail ?? problem?.title ?? ''}`.trim());
    this.name = 'BookingServiceError';
  }
}

interface FetchResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

function failure(result: FetchResult<unknown>): BookingServiceError {
  const body = result.error;
  const problem = typeof body === 'object' && body !== null && 'code' in body ? (body as Problem) : undefined;
  return new BookingServiceError(result.response.status, problem);
}

/** The data of a 2xx answer; any other status throws a BookingServiceError. */
export function successOf<Data>(result: FetchResult<Data>): Data {
  if (!result.response.ok || result.data === undefined) throw failure(result);
  return result.data;
}

/** Splits a booking operation's 2xx answer by status, so a 202 is never read as a booking. */
export function bookingAnswerOf(result: FetchResult<Booking | BookingProcessing>): BookingAnswer {
  const { response } = result;
  const data = successOf(result);
  switch (response.status) {
    case 200:
    case 201:
      return { status: response.status, booking: data as Booking, etag: response.headers.get('etag') };
    case 202: {
      const processing = data as BookingProcessing;
      return {
        status: 202,
        processing,
        location: response.headers.get('location'),
        retryAfterSeconds: Number(response.headers.get('retry-after') ?? processing.retry_after_seconds),
      };
    }
    default:
      throw new BookingServiceError(response.status, undefined);
  }
}
