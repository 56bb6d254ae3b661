// An independent external OIDC issuer (its own RS256 keys, a loopback JWKS server) configured by environment:
// its users get just-in-time local accounts, book and read their own bookings, and nobody else's.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import type { Knex } from 'knex';
import { createBookingClient } from '../../../src/api/grpc/client';
import type { Actor } from '../../../src/domain/actor';
import type { Config } from '../../../src/config';
import { createOperationGuard } from '../../../src/api/rest/request-authorization';
import type { TokenVerifier } from '../../../src/security/token-verifier';
import { createTokenVerifierFromConfig } from '../../../src/identity/token-verifier-from-config';
import { testConfig } from '../../support/database';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { eventually } from '../../support/outcomes';
import { createTestCertificates, removeTestCertificates, startTestServer } from '../../support/grpc-server';
import { buildApp, startServer, type RunningServer } from '../../support/rest-app';
import { openTestDatabase } from '../../support/database';
import { insertUser } from '../../support/users';

jest.setTimeout(120_000);

const externalIssuer = `https://login.external-idp.example/realms/${randomUUID()}`;
const audience = 'bus-booking-api';
// What an external provider typically grants: scopes and no roles of ours (OIDC_DEFAULT_ROLE: customer).
const customerScopes =
  'openid profile email bookings:read bookings:write payments:write routes:read users:read';

let signingKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let keyId: string;
let jwksServer: http.Server;
let jwksRequests = 0;
let saga: SagaEnvironment;
let database: Knex;
let trip: TestTrip;
let verifier: TokenVerifier;
let server: RunningServer;
let nextSeat = 0;

/** A token of the external issuer; `sub` is the provider's own identifier, never one of our user ids. */
function externalToken(subject: string, claims: JWTPayload = {}): Promise<string> {
  return new SignJWT({ scope: customerScopes, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: keyId, typ: 'JWT' })
    .setIssuer(externalIssuer)
    .setAudience(audience)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(signingKey);
}

function externalConfig(): Config {
  const { port } = jwksServer.address() as AddressInfo;
  return testConfig({
    OIDC_ISSUER: externalIssuer,
    OIDC_JWKS_URL: `http://127.0.0.1:${port}/protocol/openid-connect/certs`,
    OIDC_AUDIENCE: audience,
  });
}

beforeAll(async () => {
  const keys = await generateKeyPair('RS256');
  signingKey = keys.privateKey;
  keyId = `external-${randomUUID()}`;
  const publicJwk = { ...(await exportJWK(keys.publicKey)), kid: keyId, alg: 'RS256', use: 'sig' };
  jwksServer = http.createServer((request, response) => {
    jwksRequests += 1;
    if (request.url !== '/protocol/openid-connect/certs') {
      response.writeHead(404).end();
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));

  saga = await startSagaEnvironment();
  database = saga.database;
  trip = await createTrip(database, { seatCount: 16 });
  const config = externalConfig();
  expect(config.auth).toMatchObject({ issuer: externalIssuer, embedded: null });
  verifier = createTokenVerifierFromConfig(config, { database, cipher: saga.cipher });
  server = await startServer(
    buildApp({
      database,
      cipher: saga.cipher,
      operationGuard: createOperationGuard(verifier),
      bookings: saga.application,
    }),
  );
});

afterAll(async () => {
  await server?.close();
  await saga?.stop();
  if (jwksServer !== undefined) await new Promise<void>((resolve) => jwksServer.close(() => resolve()));
});

async function call(path: string, token: string, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function createBooking(token: string) {
  const seat = trip.seatNumbers[nextSeat];
  nextSeat += 1;
  return call('/v1/bookings', token, {
    method: 'POST',
    body: {
      trip_id: trip.tripId,
      passengers: [
        {
          first_name: 'Iolanda',
          last_name: 'Meireles',
          email: 'iolanda@example.com',
          seat_number: seat,
          fare_class: 'STANDARD',
        },
      ],
      contact_email: 'iolanda@example.com',
    },
  });
}

/** What `action` resolved to and the SQL it sent through the test's pool (which the verifiers share). */
async function queriesDuring<T>(action: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const queries: string[] = [];
  const recordQuery = (query: { sql: string }) => queries.push(query.sql);
  database.on('query', recordQuery);
  try {
    return { result: await action(), queries };
  } finally {
    database.off('query', recordQuery);
  }
}

async function linksOf(subject: string): Promise<{ user_id: string }[]> {
  return database('external_identities').where({ issuer: externalIssuer, subject }).select('user_id');
}

describe('an external OIDC issuer configured by OIDC_ISSUER and OIDC_JWKS_URL', () => {
  const subject = `auth0|${randomUUID().replace(/-/g, '')}`;
  let token: string;
  let localUserId: string;
  let bookingId: string;

  it('gives a first-seen subject a local account, and its booking references that account', async () => {
    token = await externalToken(subject, {
      email: 'Marta.Pinheiro@external.example',
      name: 'Marta Pinheiro',
    });
    const created = await createBooking(token);
    expect(created.status).toBe(201);
    bookingId = created.body.id as string;
    localUserId = created.body.customer_id as string;
    expect(localUserId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(localUserId).not.toBe(subject);
    expect(jwksRequests).toBeGreaterThan(0);

    expect(await linksOf(subject)).toEqual([{ user_id: localUserId }]);
    const account = await database('users')
      .where({ id: localUserId })
      .first<{ email: string; display_name: string } & Record<string, unknown>>(
        'email',
        'email_lookup',
        'password_hash',
        'display_name',
        'roles',
      );
    expect(account).toMatchObject({
      email: expect.stringMatching(/^enc:v1:/),
      email_lookup: null,
      password_hash: null,
      display_name: expect.stringMatching(/^enc:v1:/),
      roles: ['customer'],
    });
    expect(saga.cipher.decrypt(account.email)).toBe('Marta.Pinheiro@external.example');
    expect(saga.cipher.decrypt(account.display_name)).toBe('Marta Pinheiro');
  });

  it('maps the next calls to the same local id, from the in-process cache or the stored link', async () => {
    const own = await call(`/v1/bookings/${bookingId}`, token);
    expect([own.status, own.body.customer_id]).toEqual([200, localUserId]);
    const listed = await call('/v1/bookings', await externalToken(subject));
    expect((listed.body.bookings as { id: string }[]).map((booking) => booking.id)).toEqual([bookingId]);
    const profile = await call('/v1/users/me', token);
    expect(profile.body).toMatchObject({ id: localUserId, email: 'Marta.Pinheiro@external.example' });

    // The gRPC server is handed verifier.verifyAccessToken; a known subject is answered from the cache,
    // while a fresh verifier (another replica) reads the stored link.
    const cached = await queriesDuring(() => verifier.verifyAccessToken(token));
    expect(cached).toEqual({ result: expect.objectContaining({ userId: localUserId }), queries: [] });
    const replica = createTokenVerifierFromConfig(externalConfig(), { database, cipher: saga.cipher });
    const read = await queriesDuring(() => replica.verifyAccessToken(token));
    expect(read.result).toMatchObject({ userId: localUserId, roles: ['customer'] });
    expect(read.queries).toEqual([expect.stringContaining('from "external_identities"')]);
    expect(await linksOf(subject)).toHaveLength(1);
  });

  it('reads the booking over gRPC as the same customer, with the verifier main.ts hands it', async () => {
    const certificates = createTestCertificates();
    const grpcServer = await startTestServer({
      certificates,
      application: saga.application,
      verifyAccessToken: (bearer) => verifier.verifyAccessToken(bearer),
    });
    const client = createBookingClient({
      address: `127.0.0.1:${grpcServer.port}`,
      ca: certificates.ca,
      cert: certificates.allowedClient.cert,
      key: certificates.allowedClient.key,
      token: await externalToken(subject),
    });
    try {
      const { booking } = await client.getBooking({ bookingId });
      expect(booking).toMatchObject({ id: bookingId, customerId: localUserId });
      const strangerToken = await externalToken(`auth0|${randomUUID()}`);
      await expect(client.getBooking({ bookingId }, { token: strangerToken })).rejects.toMatchObject({
        reason: 'NOT_FOUND',
      });
    } finally {
      client.close();
      await grpcServer.stop();
      removeTestCertificates(certificates);
    }
  });

  it('does not show the booking to another external user, who gets an account of their own', async () => {
    const otherSubject = `auth0|${randomUUID().replace(/-/g, '')}`;
    const otherToken = await externalToken(otherSubject);
    const foreign = await call(`/v1/bookings/${bookingId}`, otherToken);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
    const otherList = await call('/v1/bookings', otherToken);
    expect([otherList.status, otherList.body.bookings]).toEqual([200, []]);
    const [otherLink] = await linksOf(otherSubject);
    expect(otherLink.user_id).not.toBe(localUserId);
    // This provider shared no email: the account exists, but the contract's profile needs one.
    expect((await call('/v1/users/me', otherToken)).status).toBe(404);
  });

  it('never takes a subject that equals a local user id for that user', async () => {
    const localCustomer = await insertUser(database, saga.cipher, { roles: ['customer'] });
    const localBooking = await saga.application.createBooking(
      { userId: localCustomer.id, roles: ['customer'], scopes: ['bookings:write'] },
      bookingRequest(trip, [trip.seatNumbers[nextSeat++]]),
    );
    // The external issuer's subject lives in the issuer's namespace, whatever it looks like.
    const lookalike = await externalToken(localCustomer.id);
    const actor = await verifier.verifyAccessToken(lookalike);
    expect(actor.userId).not.toBe(localCustomer.id);
    const seen = await call(`/v1/bookings/${localBooking.id}`, lookalike);
    expect([seen.status, seen.body.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('links a subject once when its first requests race, across replicas', async () => {
    const racingSubject = `google-oauth2|${randomUUID().replace(/-/g, '')}`;
    const racingToken = await externalToken(racingSubject, { email: 'racer@external.example' });
    const replicas = [
      verifier,
      ...[1, 2, 3].map(() =>
        createTokenVerifierFromConfig(externalConfig(), { database, cipher: saga.cipher }),
      ),
    ];
    // Warm every replica's key cache, so their first lookups of the racing subject start together.
    await Promise.all(
      replicas.map(async (replica) => replica.verifyAccessToken(await externalToken(randomUUID()))),
    );

    // A SHARE lock lets the replicas read (no link yet) but holds each one's INSERT of the link: all of them
    // reach the conflict, and one wins when the lock goes.
    const barrier = await database.transaction();
    let actors: Actor[];
    try {
      await barrier.raw('LOCK TABLE external_identities IN SHARE MODE');
      const racing = Promise.all(replicas.map((replica) => replica.verifyAccessToken(racingToken)));
      await eventually(
        async () => {
          const { rows } = await database.raw<{ rows: { waiting: number }[] }>(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE 'insert into "external_identities"%'`,
          );
          return rows[0].waiting;
        },
        (waiting) => waiting === replicas.length,
        { timeoutMs: 10_000, intervalMs: 50 },
      );
      await barrier.commit();
      actors = await racing;
    } finally {
      if (!barrier.isCompleted()) await barrier.rollback();
    }
    const links = await linksOf(racingSubject);
    expect(links).toHaveLength(1);
    expect(actors.map((actor) => actor.userId)).toEqual(replicas.map(() => links[0].user_id));
    // The accounts of the requests that lost the race were rolled back with their failed link.
    const orphans = await database('users')
      .whereNull('password_hash')
      .whereNotIn('id', database('external_identities').select('user_id'))
      .count<{ count: number }[]>('* as count');
    expect(Number(orphans[0].count)).toBe(0);
  });
});

describe('a database failure while finding the account', () => {
  it('answers 5xx, not 401: the token was fine', async () => {
    const brokenDatabase = openTestDatabase();
    await brokenDatabase.destroy();
    const brokenVerifier = createTokenVerifierFromConfig(externalConfig(), {
      database: brokenDatabase,
      cipher: saga.cipher,
    });
    const brokenServer = await startServer(
      buildApp({
        database,
        cipher: saga.cipher,
        operationGuard: createOperationGuard(brokenVerifier),
        bookings: saga.application,
      }),
    );
    try {
      const response = await fetch(`${brokenServer.baseUrl}/v1/bookings`, {
        headers: { authorization: `Bearer ${await externalToken(`auth0|${randomUUID()}`)}` },
      });
      expect(response.status).toBeGreaterThanOrEqual(500);
      expect(response.headers.get('www-authenticate')).toBeNull();
    } finally {
      await brokenServer.close();
    }
  });
});

describe('the embedded identity provider’s tokens', () => {
  it('keep their subject as the local user id and create no link', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const embeddedKeyId = `embedded-${randomUUID()}`;
    const publicJwk = { ...(await exportJWK(publicKey)), kid: embeddedKeyId, alg: 'RS256', use: 'sig' };
    const config = testConfig({ IDP_ISSUER: `http://embedded-${randomUUID()}.example` });
    expect(config.auth.embedded).not.toBeNull();
    const embeddedVerifier = createTokenVerifierFromConfig(config, {
      database,
      cipher: saga.cipher,
      keySetSource: () => Promise.resolve({ keys: [publicJwk] }),
    });
    const user = await insertUser(database, saga.cipher, { roles: ['customer'] });
    const embeddedToken = await new SignJWT({ scope: 'bookings:read', roles: ['customer'] })
      .setProtectedHeader({ alg: 'RS256', kid: embeddedKeyId })
      .setIssuer(config.auth.issuer)
      .setAudience(config.auth.audience)
      .setSubject(user.id)
      .setExpirationTime('5m')
      .sign(privateKey);
    await expect(embeddedVerifier.verifyAccessToken(embeddedToken)).resolves.toMatchObject({
      userId: user.id,
    });
    expect(await database('external_identities').where({ user_id: user.id })).toEqual([]);
  });
});
