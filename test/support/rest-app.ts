// The REST front for tests: an app over chosen applications, the API as main.ts composes it, tokens, a live server.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Knex } from 'knex';
import type { DataConverter } from '@temporalio/common';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { composeApi, type ApiComposition, type ApiOptions } from '../../src/api/composition';
import { createRestApp, type RestSettings } from '../../src/api/rest/app';
import { createIdempotencyStore } from '../../src/api/rest/idempotency';
import type { Applications } from '../../src/api/rest/operation-handlers';
import { createOperationGuard } from '../../src/api/rest/request-authorization';
import { createRestServer, type RestServer } from '../../src/api/rest/server';
import { createCatalogApplication } from '../../src/application/catalog';
import type { BookingApplication } from '../../src/application/interface';
import { createUserApplication } from '../../src/application/users';
import { createTicketApplication } from '../../src/application/tickets';
import { createRefundQuoteApplication } from '../../src/application/refund-quotes';
import { createTicketKeyStore } from '../../src/db/ticket-keys';
import type { BoardingApplication } from '../../src/application/boarding';
import { unavailable } from '../../src/domain/errors';
import type { Role } from '../../src/domain/roles';
import type { IdentityProvider } from '../../src/identity/identity-provider';
import type { LogLevel } from '../../src/config';
import { createLogger, type Logger } from '../../src/logger';
import type { ApiMetrics } from '../../src/observability/metrics';
import type { FieldCipher } from '../../src/security/field-encryption';
import { scopesForRoles } from '../../src/security/policy';
import { createBookingDataConverter } from '../../src/security/temporal-payload-codec';
import { createTokenVerifier } from '../../src/security/token-verifier';
import { testConfig } from './database';
import { fakeWebhookApplication } from './grpc-server';
import { createFareApplication } from '../../src/application/fares';
import type { SagaEnvironment } from './saga';

/** Silent unless REST_TEST_LOG_LEVEL names a pino level. */
const restTestLogLevel = (process.env.REST_TEST_LOG_LEVEL ?? 'silent') as LogLevel;

export const testIssuer = 'https://issuer.rest-tests.example';
export const testAudience = 'bus-booking-api';

export interface TokenOptions {
  userId: string;
  roles: Role[];
  /** Defaults to every scope the roles may use, as the embedded identity provider grants. */
  scopes?: string[];
  expiresInSeconds?: number;
}

/** An RS256 issuer of the suite's own, verified by the service's real token verifier and operation guard. */
export async function createTokenIssuer() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const keyId = `rest-test-${randomUUID()}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid: keyId, alg: 'RS256', use: 'sig' };
  const verifier = createTokenVerifier({
    issuer: testIssuer,
    audience: testAudience,
    algorithms: ['RS256'],
    clockToleranceSeconds: 0,
    keySetSource: () => Promise.resolve({ keys: [publicJwk] }),
  });

  async function issueToken(options: TokenOptions): Promise<string> {
    const scopes = options.scopes ?? scopesForRoles(options.roles);
    return new SignJWT({ scope: scopes.join(' '), roles: options.roles })
      .setProtectedHeader({ alg: 'RS256', kid: keyId, typ: 'JWT' })
      .setIssuer(testIssuer)
      .setAudience(testAudience)
      .setSubject(options.userId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + (options.expiresInSeconds ?? 600))
      .sign(privateKey);
  }

  return { operationGuard: createOperationGuard(verifier), issueToken };
}

/** For suites that never reach a booking operation's handler: any call to it fails loudly as UNAVAILABLE. */
export const bookingsOutOfScope: BookingApplication = {
  createBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  getBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  listBookings: () => Promise.reject(unavailable('booking operations are outside this suite')),
  updateBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  cancelBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  cancelPassengers: () => Promise.reject(unavailable('booking operations are outside this suite')),
  confirmPayment: () => Promise.reject(unavailable('booking operations are outside this suite')),
  cancelTrip: () => Promise.reject(unavailable('booking operations are outside this suite')),
  getTripCancellation: () => Promise.reject(unavailable('booking operations are outside this suite')),
};

export const generousRateLimits = { windowSeconds: 60, perUser: 100_000, perAddress: 100_000 };

export function testSettings(overrides: Partial<RestSettings> = {}): RestSettings {
  return {
    bodyLimitBytes: 64 * 1024,
    requestTimeoutMs: 10_000,
    trustProxy: false,
    rateLimits: generousRateLimits,
    ...overrides,
  };
}

/** Apps built here serve no webhooks unless the test supplies them (composeTestApi serves the real ones). */
const unexpectedWebhooks = fakeWebhookApplication();

/** Apps built here serve no boarding unless the test supplies it (composeTestApi serves the real one). */
const unexpectedBoarding: BoardingApplication = {
  recordBoarding: () => Promise.reject(new Error('boarding was not expected in this test')),
  tripManifest: () => Promise.reject(new Error('boarding was not expected in this test')),
};

export function buildApp(options: {
  database: Knex;
  cipher: FieldCipher;
  operationGuard: (operationId: string) => Koa.Middleware;
  bookings: BookingApplication;
  settings?: RestSettings;
  applications?: Partial<Applications>;
  /** Silent unless REST_TEST_LOG_LEVEL is set. */
  logger?: Logger;
  /** What the codec endpoint decodes with; the saga tests' keyring unless given. */
  dataConverter?: DataConverter;
  /** The registry the app counts into; a fresh one unless given. */
  metrics?: ApiMetrics;
}): Koa {
  const { database, cipher } = options;
  const ticketKeys = createTicketKeyStore({ database, cipher });
  const catalog = options.applications?.catalog ?? createCatalogApplication({ database });
  return createRestApp({
    logger: options.logger ?? createLogger({ level: restTestLogLevel, name: 'rest-tests' }),
    checkReadiness: () => Promise.resolve({ ready: true, checks: { postgres: 'ok', temporal: 'ok' } }),
    settings: options.settings ?? testSettings(),
    applications: {
      bookings: options.bookings,
      catalog,
      users: createUserApplication({ database, cipher }),
      tickets: createTicketApplication({ database, cipher, bookings: options.bookings, ticketKeys }),
      boarding: unexpectedBoarding,
      webhooks: unexpectedWebhooks,
      refundQuotes: createRefundQuoteApplication({ database, bookings: options.bookings }),
      fares: createFareApplication({ database, catalog }),
      ...options.applications,
    },
    idempotency: createIdempotencyStore({
      database,
      cipher,
      settings: { retentionHours: 24, inFlightLockSeconds: 60 },
    }),
    operationGuard: options.operationGuard,
    dataConverter: options.dataConverter ?? createBookingDataConverter(testConfig()),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
}

export interface TestApi extends ApiComposition {
  identityProvider: IdentityProvider;
  /** Deletes the signing keys of the API's own issuer. */
  remove: () => Promise<void>;
}

/**
 * The API exactly as src/api/main.ts composes it (composeApi): the embedded identity provider with its routes,
 * real readiness, REST settings from configuration; over the saga environment's pool, client and task queues.
 * Rate limits are raised so a whole suite can run from one address (testConfig raises the failed-login one).
 */
export async function composeTestApi(
  saga: SagaEnvironment,
  environment: Record<string, string> = {},
  /** What pings partners' endpoints and wakes their deliveries, when the test gives its own. */
  webhooks: Pick<ApiOptions, 'webhookSender' | 'webhookDeliveries'> = {},
): Promise<TestApi> {
  const issuer = `https://api-${randomUUID()}.rest-tests.example`;
  const config = saga.configWith({
    IDP_ISSUER: issuer,
    RATE_LIMIT_PER_USER: '100000',
    RATE_LIMIT_PER_IP: '100000',
    ...environment,
  });
  const composition = await composeApi(
    config,
    createLogger({ level: restTestLogLevel, name: 'rest-tests' }),
    { database: saga.database, cipher: saga.cipher, connection: saga.connection, temporal: saga.client },
    { taskQueues: saga.taskQueueNames, timings: saga.timings, ...webhooks },
  );
  const { identityProvider } = composition;
  if (identityProvider === undefined) throw new Error('the test API runs the embedded identity provider');
  return {
    ...composition,
    identityProvider,
    remove: async () => {
      await saga.database('identity_signing_keys').where({ issuer }).delete();
    },
  };
}

export interface RunningServer {
  baseUrl: string;
  server: RestServer;
  close(): Promise<void>;
}

/** Listens on a free loopback port; `close` ends open connections too, so jest exits cleanly. */
export async function startServer(
  app: Koa,
  tls?: { certificateFile: string; keyFile: string },
): Promise<RunningServer> {
  const server = createRestServer(app, { tls, requestTimeoutMs: 10_000 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
