// Route search, availability and user profiles over HTTP against PostgreSQL, with real tokens and the contract.
import { expect } from '@jest/globals';
import type { Knex } from 'knex';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import { createNetworkFixture, type NetworkFixture } from '../../support/route-network';
import {
  bookingsOutOfScope,
  buildApp,
  createTokenIssuer,
  startServer,
  type RunningServer,
} from '../../support/rest-app';
import { openTestDatabase, testCipher } from '../../support/database';
import { insertUser, type TestUser } from '../../support/users';

jest.setTimeout(30_000);

let database: Knex;
let cipher: FieldCipher;
let server: RunningServer;
let network: NetworkFixture;
let customer: TestUser;
let otherCustomer: TestUser;
let agent: TestUser;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  database = openTestDatabase();
  cipher = testCipher();
  const issuer = await createTokenIssuer();
  customer = await insertUser(database, cipher, { roles: ['customer'] });
  otherCustomer = await insertUser(database, cipher, { roles: ['customer'], phone: null });
  agent = await insertUser(database, cipher, { roles: ['agent'] });
  tokens.customer = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  tokens.agent = await issuer.issueToken({ userId: agent.id, roles: ['agent'] });
  tokens.noScopes = await issuer.issueToken({ userId: customer.id, roles: ['customer'], scopes: [] });
  tokens.expired = await issuer.issueToken({
    userId: customer.id,
    roles: ['customer'],
    expiresInSeconds: -60,
  });
  network = await createNetworkFixture(database, {
    cipher,
    customerId: otherCustomer.id,
    date: '2031-12-02',
    nextDate: '2031-12-03',
  });
  const app = buildApp({
    database,
    cipher,
    operationGuard: issuer.operationGuard,
    bookings: bookingsOutOfScope,
  });
  server = await startServer(app);
});

afterAll(async () => {
  await server?.close();
  await network?.remove();
  if (database) {
    await database('users')
      .whereIn(
        'id',
        [customer, otherCustomer, agent].filter(Boolean).map((user) => user.id),
      )
      .delete();
    await database.destroy();
  }
});

/** `null` sends no Authorization header at all. */
async function get(path: string, token: string | null = tokens.customer): Promise<ObservedResponse> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  return observe(await fetch(`${server.baseUrl}${path}`, { headers }));
}

function routeCodes(response: ObservedResponse): string[] {
  return (response.body as { routes: { code: string }[] }).routes.map((route) => route.code);
}

describe('GET /v1/routes', () => {
  it('finds routes by stop code or city, case-insensitively, ordered by code', async () => {
    const byCode = await get(`/v1/routes?origin=${network.stops.origin.toLowerCase()}`);
    expectContract('listRoutes', byCode);
    expect(routeCodes(byCode)).toEqual([network.routes.main.code, network.routes.branch.code]);

    const byCity = await get(
      `/v1/routes?origin=${encodeURIComponent(network.cities.origin.toUpperCase())}&destination=${encodeURIComponent(network.cities.destination)}`,
    );
    expectContract('listRoutes', byCity);
    expect(routeCodes(byCity)).toEqual([network.routes.main.code]);
  });

  it('renders stops, intermediate stops and the typical duration', async () => {
    const response = await get(
      `/v1/routes?origin=${network.stops.origin}&destination=${network.stops.destination}`,
    );
    const [route] = (response.body as { routes: Record<string, unknown>[] }).routes;
    expect(route).toMatchObject({
      id: network.routes.main.id,
      origin: {
        code: network.stops.origin,
        city: network.cities.origin,
        country_code: 'ES',
        time_zone: 'Europe/Madrid',
      },
      destination: { code: network.stops.destination },
      intermediate_stops: [{ code: network.stops.other, city: network.cities.other }],
      distance_km: 500,
      typical_duration: 'PT5H',
    });
    expect((response.body as { next_page_token: unknown }).next_page_token).toBeNull();
  });

  it('keeps only routes with a scheduled trip on the local date at the boarding stop', async () => {
    const onDate = await get(`/v1/routes?origin=${network.stops.origin}&date=${network.date}`);
    expect(routeCodes(onDate)).toEqual([network.routes.main.code, network.routes.branch.code]);
    const nextDay = await get(`/v1/routes?origin=${network.stops.origin}&date=${network.nextDate}`);
    expect(routeCodes(nextDay)).toEqual([network.routes.main.code]);
    // No route leaves from the other city that day, but the main route calls there: it matches from that stop.
    const fromOther = await get(`/v1/routes?origin=${network.stops.other}&date=${network.date}`);
    expect(routeCodes(fromOther)).toEqual([network.routes.main.code]);
    expect((fromOther.body as { routes: { matched_stops: unknown }[] }).routes[0].matched_stops).toEqual({
      boarding_stop: network.stops.other,
      alighting_stop: network.stops.destination,
    });
  });

  it('pages with an opaque token bound to the search (AIP-158)', async () => {
    const first = await get(`/v1/routes?origin=${network.stops.origin}&page_size=1`);
    expectContract('listRoutes', first);
    expect(routeCodes(first)).toEqual([network.routes.main.code]);
    const token = (first.body as { next_page_token: string }).next_page_token;
    expect(typeof token).toBe('string');

    const second = await get(`/v1/routes?origin=${network.stops.origin}&page_size=1&page_token=${token}`);
    expect(routeCodes(second)).toEqual([network.routes.branch.code]);
    expect((second.body as { next_page_token: unknown }).next_page_token).toBeNull();

    const otherSearch = await get(`/v1/routes?origin=${network.stops.other}&page_size=1&page_token=${token}`);
    expectContract('listRoutes', otherSearch);
    expect(otherSearch.status).toBe(400);
    expect(otherSearch.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'page_token' }] });

    const garbage = await get(`/v1/routes?page_token=${encodeURIComponent('not a token!')}`);
    expect(garbage.status).toBe(400);
  });

  it('answers the same under /api', async () => {
    const path = `/routes?origin=${network.stops.origin}&destination=${network.stops.destination}`;
    const [v1, api] = await Promise.all([get(`/v1${path}`), get(`/api${path}`)]);
    expectContract('listRoutesApi', api);
    expect(api.body).toEqual(v1.body);
  });

  it.each([
    ['page_size=0', 'page_size'],
    ['page_size=101', 'page_size'],
    ['page_size=ten', 'page_size'],
    ['date=2031-02-30', 'date'],
    ['origin=', 'origin'],
    ['order=price', 'order'],
  ])('refuses %s with VALIDATION_FAILED naming %s', async (query, field) => {
    const response = await get(`/v1/routes?${query}`);
    expectContract('listRoutes', response);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [expect.objectContaining({ field })],
    });
  });

  it('asks for a token (401), then for the routes:read scope (403)', async () => {
    const anonymous = await get('/v1/routes', null);
    expectContract('listRoutes', anonymous);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
    const expired = await get('/v1/routes', tokens.expired);
    expect(expired.status).toBe(401);
    const unscoped = await get('/v1/routes', tokens.noScopes);
    expectContract('listRoutes', unscoped);
    expect(unscoped.status).toBe(403);
    expect(unscoped.body).toMatchObject({ code: 'PERMISSION_DENIED' });
  });
});

describe('GET /v1/routes/{route_id}/availability', () => {
  it('lists the day’s trips by local date with seat map, free seats and lowest price', async () => {
    const response = await get(`/v1/routes/${network.routes.main.id}/availability?date=${network.date}`);
    expectContract('getRouteAvailability', response);
    const body = response.body as {
      route_id: string;
      date: string;
      trips: {
        trip_id: string;
        seats_total: number;
        seats_free: number;
        lowest_price: unknown;
        seat_map: unknown[];
      }[];
    };
    expect(body.route_id).toBe(network.routes.main.id);
    expect(body.date).toBe(network.date);
    expect(body.trips.map((trip) => trip.trip_id)).toEqual([
      network.trips.afterMidnight,
      network.trips.morning,
      network.trips.evening,
    ]);
    const morning = body.trips[1];
    expect(morning).toMatchObject({
      seats_total: 6,
      seats_free: 4,
      lowest_price: { amount_minor: 2450, currency: 'EUR' },
    });
    expect(morning.seat_map).toEqual([
      { seat_number: '1A', fare_class: 'PREMIUM', status: 'TAKEN' },
      { seat_number: '1B', fare_class: 'PREMIUM', status: 'FREE' },
      { seat_number: '2A', fare_class: 'STANDARD', status: 'FREE' },
      { seat_number: '2B', fare_class: 'STANDARD', status: 'FREE' },
      { seat_number: '3A', fare_class: 'STANDARD', status: 'TAKEN' },
      { seat_number: '3B', fare_class: 'STANDARD', status: 'FREE' },
    ]);
    expect(body.trips[0].seats_free).toBe(6);
    // The evening's smaller coach: its own seats, none taken (the booking holds seats of the morning only).
    expect(body.trips[2]).toMatchObject({
      seats_total: 4,
      seats_free: 4,
      lowest_price: { amount_minor: 2450, currency: 'EUR' },
    });
    expect(body.trips[2].seat_map).toEqual(
      ['1C', '1D', '2C', '2D'].map((seatNumber) => ({
        seat_number: seatNumber,
        fare_class: 'STANDARD',
        status: 'FREE',
      })),
    );
  });

  it('counts a departure just after local midnight on its local date, not its UTC date', async () => {
    const dayBefore = await get(`/api/routes/${network.routes.main.id}/availability?date=2031-12-01`);
    expectContract('getRouteAvailabilityApi', dayBefore);
    expect(dayBefore.body).toEqual({ route_id: network.routes.main.id, date: '2031-12-01', trips: [] });
  });

  it('answers 404 for an unknown route and 400 for a bad id or date', async () => {
    const unknown = await get(`/v1/routes/${customer.id}/availability?date=${network.date}`);
    expectContract('getRouteAvailability', unknown);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND' });

    for (const path of [
      `/v1/routes/not-a-uuid/availability?date=${network.date}`,
      `/v1/routes/${network.routes.main.id}/availability`,
      `/v1/routes/${network.routes.main.id}/availability?date=tomorrow`,
    ]) {
      const response = await get(path);
      expectContract('getRouteAvailability', response);
      expect(response.status).toBe(400);
    }
  });
});

describe('GET /v1/users/me and /v1/users/{user_id}', () => {
  it('returns the caller’s own profile, decrypted', async () => {
    const response = await get('/v1/users/me');
    expectContract('getCurrentUser', response);
    expect(response.body).toEqual({
      id: customer.id,
      email: customer.email,
      display_name: customer.displayName,
      phone: customer.phone,
      roles: ['customer'],
      created_at: expect.any(String),
    });
    const byId = await get(`/api/users/${customer.id}`);
    expectContract('getUserApi', byId);
    expect(byId.body).toEqual(response.body);
  });

  it('hides another customer’s profile behind 404, and shows it to an agent', async () => {
    const hidden = await get(`/v1/users/${otherCustomer.id}`);
    expectContract('getUser', hidden);
    expect(hidden.status).toBe(404);
    const missing = await get(`/v1/users/${network.routes.main.id}`, tokens.agent);
    expect(missing.status).toBe(404);
    expect(hidden.body).toMatchObject({ code: 'NOT_FOUND' });

    const shown = await get(`/v1/users/${otherCustomer.id}`, tokens.agent);
    expectContract('getUser', shown);
    expect(shown.body).toMatchObject({ id: otherCustomer.id, phone: null, roles: ['customer'] });
  });

  it('refuses a malformed id, a missing token and a token without users:read', async () => {
    const malformed = await get('/v1/users/12345');
    expectContract('getUser', malformed);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ errors: [{ field: 'user_id' }] });
    const anonymous = await get('/v1/users/me', null);
    expectContract('getCurrentUser', anonymous);
    expect(anonymous.status).toBe(401);
    const unscoped = await get('/v1/users/me', tokens.noScopes);
    expectContract('getCurrentUser', unscoped);
    expect(unscoped.status).toBe(403);
  });
});
