// Shared set-up of the REST integration suites: keys, signed tokens, users, a private route network, a live server.
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Knex } from 'knex';
import { hash } from '@node-rs/argon2';
import { Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pino from 'pino';
import { createRestApp, type RestSettings } from '../../../src/api/rest/app';
import { createIdempotencyStore } from '../../../src/api/rest/idempotency';
import type { Applications } from '../../../src/api/rest/operation-handlers';
import { identityProviderRouter } from '../../../src/api/rest/auth-routes';
import { createRestServer, type RestServer } from '../../../src/api/rest/server';
import { createReadinessCheck } from '../../../src/application/readiness';
import { createIdentityProvider, type IdentityProvider } from '../../../src/identity/identity-provider';
import { sagaTestSecrets, type SagaEnvironment } from '../../support/saga-environment';
import { createCatalogApplication } from '../../../src/application/catalog';
import type { BookingApplication } from '../../../src/application/interface';
import type { Role } from '../../../src/domain/roles';
import { createUserApplication } from '../../../src/application/users';
import { createDatabase } from '../../../src/db/connection';
import { emailLookup } from '../../../src/db/user-email';
import { unavailable } from '../../../src/domain/errors';
import type { Logger } from '../../../src/logger';
import { createFieldCipher, type FieldCipher } from '../../../src/security/field-encryption';
import { scopesForRoles } from '../../../src/security/policy';
import { createOperationGuard } from '../../../src/api/rest/request-authorization';
import { createBookingDataConverter } from '../../../src/security/temporal-payload-codec';
import { createTokenVerifier } from '../../../src/security/token-verifier';

export const testIssuer = 'https://issuer.rest-tests.example';
export const testAudience = 'bus-booking-api';

export function connectDatabase(): Knex {
  return createDatabase(process.env.DATABASE_URL!, { poolSize: 5, applicationName: 'rest-tests' });
}

/** Keys of the suite's own, so the users it creates have blind indexes no other suite shares. */
export function createTestCipher(): FieldCipher {
  return createFieldCipher({
    keys: { resttest: randomBytes(32) },
    activeKeyId: 'resttest',
    blindIndexKey: randomBytes(32),
  });
}

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
    keySetSource: async () => ({ keys: [publicJwk] }),
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

export interface TestUser {
  id: string;
  email: string;
  displayName: string;
  phone: string | null;
  roles: Role[];
}

export async function insertUser(
  database: Knex,
  cipher: FieldCipher,
  options: { roles: Role[]; phone?: string | null; name?: string },
): Promise<TestUser> {
  const id = randomUUID();
  const email = `rest-${id}@example.com`;
  const displayName = options.name ?? `Rest Tester ${id.slice(0, 8)}`;
  const phone = options.phone === undefined ? '+351912345678' : options.phone;
  await database('users').insert({
    id,
    email: cipher.encrypt(email),
    email_lookup: emailLookup(cipher, email),
    password_hash: 'not-used-by-rest-tests',
    display_name: cipher.encrypt(displayName),
    phone: cipher.encryptOptional(phone),
    roles: options.roles,
  });
  return { id, email, displayName, phone, roles: options.roles };
}

/** For suites that never reach a booking operation's handler: any call to it fails loudly as UNAVAILABLE. */
export const bookingsOutOfScope: BookingApplication = {
  createBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  getBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  listBookings: () => Promise.reject(unavailable('booking operations are outside this suite')),
  updateBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  cancelBooking: () => Promise.reject(unavailable('booking operations are outside this suite')),
  confirmPayment: () => Promise.reject(unavailable('booking operations are outside this suite')),
};

/** The saga tests' keyring: payloads their workflows wrote decode at any suite's codec endpoint. */
const sagaConfigOfKeys = {
  encryption: {
    keyring: sagaTestSecrets.ENCRYPTION_KEYS,
    activeKeyId: sagaTestSecrets.ENCRYPTION_ACTIVE_KEY_ID,
    blindIndexKey: sagaTestSecrets.BLIND_INDEX_KEY,
  },
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
}): Koa {
  const { database, cipher } = options;
  return createRestApp({
    logger: options.logger ?? pino({ level: process.env.REST_TEST_LOG_LEVEL ?? 'silent' }),
    checkReadiness: async () => ({ ready: true, checks: { postgres: 'ok', temporal: 'ok' } }),
    settings: options.settings ?? testSettings(),
    applications: {
      bookings: options.bookings,
      catalog: createCatalogApplication({ database }),
      users: createUserApplication({ database, cipher }),
      ...options.applications,
    },
    idempotency: createIdempotencyStore({
      database,
      cipher,
      settings: { retentionHours: 24, inFlightLockSeconds: 60 },
    }),
    operationGuard: options.operationGuard,
    dataConverter: options.dataConverter ?? createBookingDataConverter(sagaConfigOfKeys),
  });
}

/** Everything main.ts wires, over a saga environment: the embedded identity provider, its routes, real readiness. */
export async function buildFullApp(options: {
  saga: SagaEnvironment;
  settings?: RestSettings;
}): Promise<{ app: Koa; identityProvider: IdentityProvider; remove(): Promise<void> }> {
  const { saga } = options;
  const issuer = `https://full-${randomUUID()}.rest-tests.example`;
  const identityProvider = await createIdentityProvider({
    database: saga.database,
    cipher: saga.cipher,
    issuer,
    audience: testAudience,
    accessTokenTtlSeconds: 900,
    refreshTokenTtlSeconds: 3600,
    signingKeyRotationSeconds: 86400,
    clockToleranceSeconds: 5,
    loginMaxFailuresPerAccount: 5,
    loginMaxFailuresPerAddress: 100_000,
    loginThrottleWindowSeconds: 60,
  });
  const verifier = createTokenVerifier({
    issuer,
    audience: testAudience,
    algorithms: ['RS256'],
    clockToleranceSeconds: 5,
    keySetSource: () => identityProvider.jsonWebKeySet(),
  });
  // Readiness asks the Temporal frontend's health service, which needs a connection of its own.
  const temporal = await Connection.connect({ address: saga.config.temporal.address });
  const app = createRestApp({
    logger: pino({ level: process.env.REST_TEST_LOG_LEVEL ?? 'silent' }),
    checkReadiness: createReadinessCheck({ database: saga.database, temporal }),
    settings: options.settings ?? testSettings(),
    applications: {
      bookings: saga.application,
      catalog: createCatalogApplication({ database: saga.database }),
      users: createUserApplication({ database: saga.database, cipher: saga.cipher }),
    },
    idempotency: createIdempotencyStore({
      database: saga.database,
      cipher: saga.cipher,
      settings: { retentionHours: 24, inFlightLockSeconds: 60 },
    }),
    operationGuard: createOperationGuard(verifier),
    dataConverter: createBookingDataConverter(saga.config),
    additionalRouters: [identityProviderRouter(identityProvider)],
  });
  return {
    app,
    identityProvider,
    remove: async () => {
      await temporal.close();
      await saga.database('identity_signing_keys').where({ issuer }).delete();
    },
  };
}

/** An account that can sign in at the embedded identity provider. */
export async function insertLoginUser(
  database: Knex,
  cipher: FieldCipher,
  options: { email: string; password: string; roles: Role[] },
): Promise<TestUser> {
  const id = randomUUID();
  const displayName = 'Contract Tester';
  await database('users').insert({
    id,
    email: cipher.encrypt(options.email),
    email_lookup: emailLookup(cipher, options.email),
    password_hash: await hash(options.password),
    display_name: cipher.encrypt(displayName),
    phone: null,
    roles: options.roles,
  });
  return { id, email: options.email, displayName, phone: null, roles: options.roles };
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
