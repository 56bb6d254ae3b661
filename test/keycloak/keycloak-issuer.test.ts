// The API pointed at a real Keycloak by configuration alone: bookings over REST and gRPC with its tokens, refusals.
import { expect } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { startApi, type RunningApi } from '../../src/api/composition';
import { BookingServiceCallError, createBookingClient, type BookingClient } from '../../src/api/grpc/client';
import { BookingStatus } from '../../src/generated/com/example/bookings/v1/booking';
import { createLogger } from '../../src/logger';
import { contractScopes, scopesForRoles } from '../../src/security/policy';
import { activeSeatsOf, paymentLedger } from '../support/booking-records';
import { startKeycloak, type KeycloakRealm, type RunningKeycloak } from '../support/keycloak';
import { startSagaEnvironment, type SagaEnvironment } from '../support/saga';
import { createTrip, restBookingBody, standardPriceMinor, type TestTrip } from '../support/trips';

// Keycloak's start dominates the file's time; the bookings and refusals after it are quick.
jest.setTimeout(300_000);

const realmName = 'bus-booking';
/** Another realm of the same Keycloak, with the same signing key: only its `iss` differs. */
const otherRealmName = 'elsewhere';
const audience = 'bus-booking-api';
const appClient = 'bus-booking-app';
const otherApiClient = 'reporting-app';
const shortLivedClient = 'kiosk-app';
const customerScopes = scopesForRoles(['customer']);

const signingKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

function realm(name: string): KeycloakRealm {
  return {
    name,
    roles: ['customer', 'agent', 'admin'],
    scopes: contractScopes(),
    clients: [
      { clientId: appClient, audience },
      { clientId: otherApiClient, audience: 'reporting-api' },
      { clientId: shortLivedClient, audience, accessTokenLifespanSeconds: 1 },
    ],
    users: [
      {
        username: 'carla',
        realmRoles: ['customer'],
        email: 'carla.sousa@example.com',
        firstName: 'Carla',
        lastName: 'Sousa',
      },
      {
        username: 'duarte',
        realmRoles: ['customer'],
        email: 'duarte.lima@example.com',
        firstName: 'Duarte',
        lastName: 'Lima',
      },
      {
        username: 'agnes',
        realmRoles: ['agent'],
        email: 'agnes.ferreira@example.com',
        firstName: 'Agnes',
        lastName: 'Ferreira',
      },
      // A Keycloak user with none of our roles: with OIDC_DEFAULT_ROLE=none the API grants them nothing.
      {
        username: 'rolf',
        realmRoles: [],
        email: 'rolf.nunes@example.com',
        firstName: 'Rolf',
        lastName: 'Nunes',
      },
    ],
    signingKeyPem,
  };
}

let keycloak: RunningKeycloak;
let saga: SagaEnvironment;
let api: RunningApi;
let restBaseUrl: string;
let trip: TestTrip;
let nextSeat = 0;
const grpcClients: BookingClient[] = [];

function token(
  username: string,
  options: { scopes?: readonly string[]; clientId?: string; realm?: string } = {},
) {
  return keycloak.accessToken({
    realm: options.realm ?? realmName,
    clientId: options.clientId ?? appClient,
    username,
    scopes: options.scopes ?? customerScopes,
  });
}

interface RestAnswer {
  status: number;
  body: Record<string, unknown>;
  challenge: string | null;
}

async function call(
  path: string,
  accessToken: string,
  init: { method?: string; body?: unknown } = {},
): Promise<RestAnswer> {
  const response = await fetch(`${restBaseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${accessToken}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(60_000),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    challenge: response.headers.get('www-authenticate'),
  };
}

function grpcClient(accessToken: string): BookingClient {
  const client = createBookingClient({
    address: `127.0.0.1:${api.grpcPort}`,
    insecure: true,
    token: accessToken,
  });
  grpcClients.push(client);
  return client;
}

function freshSeat(): string {
  const seat = trip.seatNumbers[nextSeat];
  nextSeat += 1;
  return seat;
}

/** `code/reason` of a refused gRPC call; a call that succeeds fails the test. */
async function grpcRefusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (error instanceof BookingServiceCallError) return `${status[error.code]}/${error.reason}`;
    throw error;
  }
  throw new Error('the call succeeded');
}

const grpcUnauthenticated = 'UNAUTHENTICATED/UNAUTHENTICATED';
const grpcPermissionDenied = 'PERMISSION_DENIED/PERMISSION_DENIED';

beforeAll(async () => {
  // Keycloak starts while the saga environment and the API come up.
  const keycloakStarting = startKeycloak([realm(realmName), realm(otherRealmName)]);
  keycloakStarting.catch(() => undefined);
  saga = await startSagaEnvironment();
  trip = await createTrip(saga.database, { seatCount: 16 });
  keycloak = await keycloakStarting;
  // Exactly what an operator sets: the issuer (its JWKS is discovered), the audience and where the roles are.
  api = await startApi(
    saga.configWith({
      OIDC_ISSUER: keycloak.issuerOf(realmName),
      OIDC_AUDIENCE: audience,
      OIDC_ROLES_CLAIM: 'realm_access.roles',
      OIDC_SCOPES_CLAIM: 'scope',
      OIDC_DEFAULT_ROLE: 'none',
      OIDC_CLOCK_TOLERANCE_SECONDS: '1',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      HTTP_REQUEST_TIMEOUT_MS: '30000',
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      GRPC_INSECURE: 'true',
      GRPC_SHUTDOWN_GRACE_MS: '1000',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: '0',
    }),
    createLogger({ level: 'silent', name: 'keycloak-tests' }),
    { taskQueues: saga.taskQueueNames, timings: saga.timings },
  );
  restBaseUrl = `http://127.0.0.1:${api.httpPort}`;
});

afterAll(async () => {
  for (const client of grpcClients) client.close();
  await api?.stop();
  await saga?.stop();
  await keycloak?.stop();
});

describe('a booking with Keycloak-issued tokens', () => {
  it('is created, paid and cancelled over REST by a customer, who owns it; an agent sees it, another customer not', async () => {
    const carla = await token('carla');
    const created = await call('/v1/bookings', carla, {
      method: 'POST',
      body: restBookingBody(trip, freshSeat()),
    });
    expect([created.status, created.body.status]).toEqual([201, 'PENDING_PAYMENT']);
    const bookingId = created.body.id as string;
    const customerId = created.body.customer_id as string;

    const link = await saga
      .database('external_identities')
      .where({ issuer: keycloak.issuerOf(realmName), user_id: customerId })
      .first<{ subject: string } | undefined>('subject');
    expect(link?.subject).toMatch(/^[0-9a-f-]{36}$/);
    const profile = await call('/v1/users/me', carla);
    expect(profile.body).toMatchObject({ id: customerId, email: 'carla.sousa@example.com' });

    const paid = await call(`/v1/bookings/${bookingId}/payment`, carla, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
    });
    expect([paid.status, paid.body.status]).toEqual([200, 'CONFIRMED']);

    const seenByAgent = await call(`/v1/bookings/${bookingId}`, await token('agnes'));
    expect([seenByAgent.status, seenByAgent.body.customer_id]).toEqual([200, customerId]);
    const seenByOtherCustomer = await call(`/v1/bookings/${bookingId}`, await token('duarte'));
    expect([seenByOtherCustomer.status, seenByOtherCustomer.body.code]).toEqual([404, 'NOT_FOUND']);

    const cancelled = await call(`/v1/bookings/${bookingId}/cancel`, carla, {
      method: 'PUT',
      body: { reason: 'Plans changed' },
    });
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'CANCELLED']);
    expect(await activeSeatsOf(saga.database, bookingId)).toEqual([]);
    expect(await paymentLedger(saga.database, bookingId)).toMatchObject({
      charges: [standardPriceMinor],
      refunds: [standardPriceMinor],
    });
  });

  it('is created, paid and cancelled over gRPC, as the same local customer as over REST', async () => {
    const client = grpcClient(await token('carla'));
    const seat = freshSeat();
    const { booking: created } = await client.createBooking({
      requestId: randomUUID(),
      tripId: trip.tripId,
      passengers: [
        {
          firstName: 'Carla',
          lastName: 'Sousa',
          email: 'carla.sousa@example.com',
          seatNumber: seat,
          fareClass: 'STANDARD',
        },
      ],
      contactEmail: 'carla.sousa@example.com',
    });
    expect(created).toMatchObject({ status: BookingStatus.BOOKING_STATUS_PENDING_PAYMENT });
    const restView = await call(`/v1/bookings/${created!.id}`, await token('carla'));
    expect(restView.body.customer_id).toBe(created!.customerId);

    const { booking: paid } = await client.confirmPayment({
      bookingId: created!.id,
      paymentToken: 'tok_visa',
      requestId: randomUUID(),
    });
    expect(paid).toMatchObject({ status: BookingStatus.BOOKING_STATUS_CONFIRMED });
    const { booking: cancelled } = await client.cancelBooking({
      bookingId: created!.id,
      reason: 'Plans changed',
    });
    expect(cancelled).toMatchObject({
      status: BookingStatus.BOOKING_STATUS_CANCELLED,
      amountRefunded: { amountMinor: standardPriceMinor },
    });
    expect(await activeSeatsOf(saga.database, created!.id)).toEqual([]);
  });
});

describe('Keycloak tokens the API refuses, over REST and gRPC', () => {
  let bookingId: string;

  beforeAll(async () => {
    const created = await call('/v1/bookings', await token('carla'), {
      method: 'POST',
      body: restBookingBody(trip, freshSeat()),
    });
    expect(created.status).toBe(201);
    bookingId = created.body.id as string;
  });

  async function expectUnauthenticated(accessToken: string, message: string) {
    const rest = await call(`/v1/bookings/${bookingId}`, accessToken);
    expect([rest.status, rest.body.code, rest.body.detail]).toEqual([401, 'UNAUTHENTICATED', message]);
    expect(rest.challenge).toContain('error="invalid_token"');
    expect(await grpcRefusal(grpcClient(accessToken).getBooking({ bookingId }))).toBe(grpcUnauthenticated);
  }

  it('refuses a token whose audience is another API', async () => {
    await expectUnauthenticated(
      await token('carla', { clientId: otherApiClient }),
      'The access token is invalid',
    );
  });

  it('refuses a token of another issuer, though it is signed with a key the API trusts', async () => {
    const foreign = await token('carla', { realm: otherRealmName });
    const { kid } = JSON.parse(Buffer.from(foreign.split('.')[0], 'base64url').toString('utf8')) as {
      kid: string;
    };
    expect(await keycloak.signingKeyIds(realmName)).toContain(kid);
    await expectUnauthenticated(foreign, 'The access token is invalid');
  });

  it('refuses an expired token', async () => {
    const shortLived = await token('carla', { clientId: shortLivedClient });
    const { exp } = JSON.parse(Buffer.from(shortLived.split('.')[1], 'base64url').toString('utf8')) as {
      exp: number;
    };
    // Not a wait for state: the token must be past its expiry and the clock tolerance configured above, by the
    // system clock the API composed from its configuration reads (this client's tokens live one second).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (exp + 2) * 1000 - Date.now())));
    await expectUnauthenticated(shortLived, 'The access token expired');
  });

  it('refuses an operation whose scope the token was not granted, naming the scope', async () => {
    const withoutPayments = await token('carla', { scopes: ['bookings:read', 'bookings:write'] });
    const rest = await call(`/v1/bookings/${bookingId}/payment`, withoutPayments, {
      method: 'POST',
      body: { payment_token: 'tok_visa' },
    });
    expect([rest.status, rest.body.code]).toEqual([403, 'PERMISSION_DENIED']);
    expect(rest.challenge).toContain('error="insufficient_scope", scope="payments:write"');
    expect(
      await grpcRefusal(grpcClient(withoutPayments).confirmPayment({ bookingId, paymentToken: 'tok_visa' })),
    ).toBe(grpcPermissionDenied);
    const { body } = await call(`/v1/bookings/${bookingId}`, withoutPayments);
    expect(body.status).toBe('PENDING_PAYMENT');
  });

  it('refuses a Keycloak user who holds none of the roles the contracts name', async () => {
    const roleless = await token('rolf');
    const rest = await call('/v1/bookings', roleless, {
      method: 'POST',
      body: restBookingBody(trip, freshSeat()),
    });
    expect([rest.status, rest.body.code]).toEqual([403, 'PERMISSION_DENIED']);
    expect(await grpcRefusal(grpcClient(roleless).getBooking({ bookingId }))).toBe(grpcPermissionDenied);
  });
});
