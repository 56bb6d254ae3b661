// U+0000 anywhere in a REST request is bad input: 400 VALIDATION_FAILED naming the field, never a 500 from SQL.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import { createBookingApplication } from '../../../src/application/bookings';
import { bookingListing } from '../../../src/db/booking-read-model';
import { encodePageToken } from '../../../src/db/paging';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { testConfig } from '../../support/database';
import { startIdentityFixture, type IdentityFixture } from '../../support/identity-provider';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../../support/rest-app';
import { openTestDatabase, testCipher } from '../../support/database';
import { insertUser, type TestUser } from '../../support/users';

jest.setTimeout(60_000);

const nulMessage = 'must not contain the NUL character (U+0000)';

let database: Knex;
let cipher: FieldCipher;
let server: RunningServer;
let connection: Connection;
let identity: IdentityFixture;
let customer: TestUser;
let agent: TestUser;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  database = openTestDatabase();
  cipher = testCipher();
  const issuer = await createTokenIssuer();
  customer = await insertUser(database, cipher, { roles: ['customer'] });
  agent = await insertUser(database, cipher, { roles: ['agent'] });
  tokens.customer = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  tokens.agent = await issuer.issueToken({ userId: agent.id, roles: ['agent'] });
  // Listing bookings reads PostgreSQL only; the client connects to Temporal only if a workflow is asked for.
  connection = Connection.lazy({ address: process.env.TEMPORAL_ADDRESS });
  const bookings = createBookingApplication({
    config: testConfig(),
    database,
    temporal: new Client({ connection }),
    cipher,
  });
  server = await startServer(buildApp({ database, cipher, operationGuard: issuer.operationGuard, bookings }));
  identity = await startIdentityFixture();
});

afterAll(async () => {
  await server?.close();
  await identity?.close();
  await connection?.close();
  if (database) {
    await database('users')
      .whereIn(
        'id',
        [customer, agent].filter(Boolean).map((user) => user.id),
      )
      .delete();
    await database.destroy();
  }
});

async function send(
  path: string,
  options: { method?: string; body?: unknown; token?: string } = {},
): Promise<ObservedResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? tokens.customer}` };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return observe(
    await fetch(`${server.baseUrl}${path}`, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
  );
}

function expectRefusal(operationId: string, response: ObservedResponse, field: string, message = nulMessage) {
  expectContract(operationId, response);
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field, message }] });
}

describe('U+0000 in a REST request', () => {
  it('in a query parameter answers 400 VALIDATION_FAILED naming the parameter', async () => {
    expectRefusal('listRoutes', await send('/v1/routes?origin=%00'), 'origin');
    expectRefusal('listRoutes', await send('/v1/routes?destination=a%00b'), 'destination');
    expectRefusal('listRoutesApi', await send('/api/routes?origin=LIS&destination=%00POR'), 'destination');
    expectRefusal('listBookings', await send('/v1/bookings?page_token=abc%00'), 'page_token');
  });

  it('in a path parameter answers 400 VALIDATION_FAILED naming the parameter', async () => {
    expectRefusal('getBooking', await send(`/v1/bookings/${randomUUID()}%00`), 'booking_id');
    expectRefusal(
      'getRouteAvailability',
      await send(`/v1/routes/%00${randomUUID()}/availability?date=2031-12-02`),
      'route_id',
    );
    expectRefusal('getUser', await send(`/v1/users/${customer.id.slice(0, -1)}%00`), 'user_id');
  });

  it('in a JSON body answers 400 VALIDATION_FAILED naming the field, property names included', async () => {
    const passenger = {
      first_name: 'Ana',
      last_name: 'Silva',
      email: 'ana.silva@example.com',
      seat_number: '12C',
      fare_class: 'STANDARD',
    };
    const created = await send('/v1/bookings', {
      method: 'POST',
      body: {
        trip_id: randomUUID(),
        passengers: [passenger, { ...passenger, seat_number: '12D', first_name: 'Jo\u0000ão' }],
        contact_email: 'ana.silva@example.com',
      },
    });
    expectRefusal('createBooking', created, 'passengers[1].first_name');
    const cancelled = await send(`/api/bookings/${randomUUID()}/cancel`, {
      method: 'PUT',
      body: { reason: 'Plans\u0000changed' },
    });
    expectRefusal('cancelBookingApi', cancelled, 'reason');
    const decoded = await send('/codec/decode', {
      method: 'POST',
      token: tokens.agent,
      body: { payloads: [{ metadata: { 'enc\u0000oding': 'anNvbi9wbGFpbg==' }, data: 'e30=' }] },
    });
    expectRefusal(
      'decodePayloads',
      decoded,
      'payloads[0].metadata',
      'property names must not contain the NUL character (U+0000)',
    );
  });

  it('inside a page token answers 400 naming page_token instead of reaching SQL', async () => {
    // Well-formed base64url whose cursor's timestamp ends in U+0000, which Date.parse alone lets through.
    const token = encodePageToken(
      bookingListing,
      { status: null },
      { createdAt: '2026-11-20T09:00:00.000000Z\u0000', id: randomUUID() },
    );
    const response = await send(`/v1/bookings?page_token=${token}`);
    expectRefusal(
      'listBookings',
      response,
      'page_token',
      'is not a page token of this listing; start again without it',
    );
  });

  it('at sign-in answers 400 VALIDATION_FAILED naming the field, as every other operation does', async () => {
    const user = await identity.createUser();
    const signIn = (body: unknown) =>
      fetch(`${identity.issuer}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(observe);
    expectRefusal(
      'login',
      await signIn({ email: user.email, password: `${user.password}\u0000` }),
      'password',
    );
    expectRefusal(
      'refresh',
      await fetch(`${identity.issuer}/api/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: 'rt_\u0000' }),
      }).then(observe),
      'refresh_token',
    );
    expect((await signIn({ email: user.email, password: user.password })).status).toBe(200);
  });
});
