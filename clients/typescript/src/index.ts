// Typed client of the bus-booking REST API: openapi-fetch over the contract's generated types, with sign-in helpers.
import createClient, { type ClientOptions } from 'openapi-fetch';
import type { BookingServiceClient } from './answers.js';
import type { paths } from './generated/schema.js';
import type { TokenSource } from './token-source.js';

export type { components, operations, paths } from './generated/schema.js';
export {
  BookingServiceError,
  bookingAnswerOf,
  bookingIdOf,
  isBookingProcessing,
  successOf,
  waitForBooking,
  type Booking,
  type BookingAnswer,
  type BookingProcessing,
  type BookingServiceClient,
  type FetchResult,
  type Problem,
  type Schemas,
  type WaitOptions,
} from './answers.js';
export {
  createTokenSource,
  defaultRefreshMarginSeconds,
  type IssuedToken,
  type TokenSource,
  type TokenSourceOptions,
} from './token-source.js';
export {
  SignIn,
  bookingScopes,
  type PendingAuthorization,
  type SignInOptions,
  type TokenSourceTuning,
  type Tokens,
} from './sign-in.js';

export interface BookingServiceClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Origin of the API, for example `https://api.example.com`. */
  baseUrl: string;
  /**
   * The bearer token of every request: a fixed token, or a token source (from `SignIn`) asked before each request,
   * which refreshes it ahead of expiry. Absent for the public endpoints only.
   */
  accessToken?: string | TokenSource;
}

export function createBookingServiceClient(options: BookingServiceClientOptions): BookingServiceClient {
  const { accessToken, headers, ...rest } = options;
  const client = createClient<paths, 'application/json'>({
    ...rest,
    headers: {
      ...(typeof accessToken === 'string' ? { authorization: `Bearer ${accessToken}` } : {}),
      ...headers,
    },
  });
  if (accessToken !== undefined && typeof accessToken !== 'string') {
    client.use({
      async onRequest({ request }) {
        request.headers.set('authorization', `Bearer ${await accessToken.accessToken()}`);
        return request;
      },
    });
  }
  return client;
}
