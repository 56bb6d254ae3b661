// Discount codes, passenger types and party prices over HTTP against PostgreSQL, with real tokens and the contract.
import { randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import type { Knex } from 'knex';
import { replacePassengerTypes } from '../../../src/db/passenger-types';
import { defaultPassengerTypes } from '../../../src/domain/passenger-types';
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
let users: TestUser[] = [];
const tokens: Record<'customer' | 'agent' | 'admin', string> = { customer: '', agent: '', admin: '' };
/** Codes of this run only: a prefix no other run shares. */
const prefix = `T${randomBytes(3).toString('hex').toUpperCase()}`;

beforeAll(async () => {
  database = openTestDatabase();
  cipher = testCipher();
  const issuer = await createTokenIssuer();
  const [customer, agent, admin] = await Promise.all([
    insertUser(database, cipher, { roles: ['customer'] }),
    insertUser(database, cipher, { roles: ['agent'] }),
    insertUser(database, cipher, { roles: ['admin'] }),
  ]);
  users = [customer, agent, admin];
  tokens.customer = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  tokens.agent = await issuer.issueToken({ userId: agent.id, roles: ['agent'] });
  tokens.admin = await issuer.issueToken({ userId: admin.id, roles: ['admin'] });
  network = await createNetworkFixture(database, {
    cipher,
    customerId: customer.id,
    date: '2032-03-02',
    nextDate: '2032-03-03',
  });
  server = await startServer(
    buildApp({ database, cipher, operationGuard: issuer.operationGuard, bookings: bookingsOutOfScope }),
  );
});

afterAll(async () => {
  await server?.close();
  if (database) {
    await database('discount_codes').where('code', 'like', `${prefix}%`).delete();
    await network?.remove();
    await database('users')
      .whereIn(
        'id',
        users.map((user) => user.id),
      )
      .delete();
    await database.destroy();
  }
});

async function send(
  method: 'GET' | 'POST',
  path: string,
  token: string,
  body?: unknown,
): Promise<ObservedResponse> {
  return observe(
    await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
}

interface Problem {
  code: string;
  errors?: { field: string; message: string }[];
}

function violationsOf(response: ObservedResponse): { field: string; message: string }[] {
  return (response.body as Problem).errors ?? [];
}

const inAYear = new Date(Date.now() + 365 * 86_400_000).toISOString();
const yesterday = new Date(Date.now() - 86_400_000).toISOString();

function codeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    code: `${prefix}-${randomBytes(3).toString('hex').toUpperCase()}`,
    kind: 'PERCENT',
    value: 10,
    valid_from: yesterday,
    valid_until: inAYear,
    max_usages: 10,
    ...overrides,
  };
}

describe('POST /v1/discount-codes', () => {
  it('lets an agent create a percent code: 201, upper case, no usages, its Location', async () => {
    const body = codeBody({ code: `${prefix.toLowerCase()}-summer` });
    const response = await send('POST', '/v1/discount-codes', tokens.agent, body);
    expectContract('createDiscountCode', response);
    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`/v1/discount-codes/${prefix}-SUMMER`);
    expect(response.body).toMatchObject({
      code: `${prefix}-SUMMER`,
      kind: 'PERCENT',
      value: 10,
      currency: null,
      route_ids: [],
      max_usages: 10,
      usages: 0,
      remaining: 10,
    });
  });

  it('lets an admin create an amount code limited to a route', async () => {
    const body = codeBody({
      kind: 'AMOUNT',
      value: 500,
      currency: 'EUR',
      route_ids: [network.routes.main.id],
    });
    const response = await send('POST', '/v1/discount-codes', tokens.admin, body);
    expectContract('createDiscountCode', response);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      code: body.code,
      kind: 'AMOUNT',
      value: 500,
      currency: 'EUR',
      route_ids: [network.routes.main.id],
      usages: 0,
      remaining: 10,
    });
  });

  it('refuses a customer: 403 PERMISSION_DENIED, nothing stored', async () => {
    const body = codeBody();
    const response = await send('POST', '/v1/discount-codes', tokens.customer, body);
    expectContract('createDiscountCode', response);
    expect(response.status).toBe(403);
    expect((response.body as Problem).code).toBe('PERMISSION_DENIED');
    expect(await database('discount_codes').where({ code: body.code }).first()).toBeUndefined();
  });

  it('refuses a code that exists already, in any letter case: 400 VALIDATION_FAILED on code', async () => {
    const body = codeBody();
    expect((await send('POST', '/v1/discount-codes', tokens.agent, body)).status).toBe(201);
    const again = await send('POST', '/v1/discount-codes', tokens.admin, {
      ...body,
      code: String(body.code).toLowerCase(),
    });
    expectContract('createDiscountCode', again);
    expect(again.status).toBe(400);
    expect((again.body as Problem).code).toBe('VALIDATION_FAILED');
    expect(violationsOf(again)).toEqual([
      { field: 'code', message: `the code ${String(body.code)} exists already` },
    ]);
  });

  it.each([
    ['an unknown kind', { kind: 'VOUCHER' }, 'kind'],
    ['a percent over 100', { value: 101 }, 'value'],
    ['a negative amount', { kind: 'AMOUNT', currency: 'EUR', value: -5 }, 'value'],
    ['an amount without a currency', { kind: 'AMOUNT', value: 500 }, 'currency'],
    ['a percent with a currency', { currency: 'EUR' }, 'currency'],
    ['valid_until before valid_from', { valid_from: inAYear, valid_until: yesterday }, 'valid_until'],
    [
      'a valid_until in the past',
      { valid_until: yesterday, valid_from: '2020-01-01T00:00:00Z' },
      'valid_until',
    ],
    ['max_usages 0', { max_usages: 0 }, 'max_usages'],
    ['a malformed code', { code: 'AB' }, 'code'],
    ['a route id that is not a UUID', { route_ids: ['main'] }, 'route_ids/0'],
  ])('refuses %s: 400 VALIDATION_FAILED naming the field', async (_case, overrides, field) => {
    const body = codeBody(overrides);
    const response = await send('POST', '/v1/discount-codes', tokens.agent, body);
    expectContract('createDiscountCode', response);
    expect(response.status).toBe(400);
    expect((response.body as Problem).code).toBe('VALIDATION_FAILED');
    const fields = violationsOf(response).map((violation) => violation.field.replace(/\[(\d+)\]/, '/$1'));
    expect(fields).toContain(field);
    expect(await database('discount_codes').where({ code: body.code }).first()).toBeUndefined();
  });

  it('refuses a route there is none of, naming its place in route_ids', async () => {
    const unknownRoute = '0b9d6c1e-3f4a-4b5c-8d6e-7f8091a2b3c4';
    const response = await send(
      'POST',
      '/v1/discount-codes',
      tokens.agent,
      codeBody({ route_ids: [network.routes.main.id, unknownRoute] }),
    );
    expectContract('createDiscountCode', response);
    expect(response.status).toBe(400);
    expect(violationsOf(response)).toEqual([{ field: 'route_ids[1]', message: `no route ${unknownRoute}` }]);
  });
});

describe('GET /v1/discount-codes and /v1/discount-codes/{code}', () => {
  it('reads a code in any letter case with its usages and remaining', async () => {
    const body = codeBody({ max_usages: 3 });
    await send('POST', '/v1/discount-codes', tokens.agent, body);
    await database('discount_codes').where({ code: body.code }).update({ usages: 2 });
    const response = await send('GET', `/v1/discount-codes/${String(body.code).toLowerCase()}`, tokens.admin);
    expectContract('getDiscountCode', response);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ code: body.code, max_usages: 3, usages: 2, remaining: 1 });
  });

  it('answers 404 for a code there is none of, and 403 to a customer', async () => {
    const missing = await send('GET', `/v1/discount-codes/${prefix}-NONE`, tokens.agent);
    expectContract('getDiscountCode', missing);
    expect(missing.status).toBe(404);
    const customer = await send('GET', `/v1/discount-codes/${prefix}-NONE`, tokens.customer);
    expect(customer.status).toBe(403);
  });

  it('lists every code in code order, a page at a time, to agents and admins only', async () => {
    const codes = [`${prefix}-LIST-C`, `${prefix}-LIST-A`, `${prefix}-LIST-B`];
    for (const code of codes) {
      expect((await send('POST', '/v1/discount-codes', tokens.agent, codeBody({ code }))).status).toBe(201);
    }
    const seen: string[] = [];
    let path = '/v1/discount-codes?page_size=2';
    for (let pages = 0; pages < 1000; pages += 1) {
      const response = await send('GET', path, tokens.admin);
      expectContract('listDiscountCodes', response);
      expect(response.status).toBe(200);
      const page = response.body as { discount_codes: { code: string }[]; next_page_token: string | null };
      expect(page.discount_codes.length).toBeLessThanOrEqual(2);
      seen.push(...page.discount_codes.map((code) => code.code));
      if (page.next_page_token === null) break;
      path = `/v1/discount-codes?page_size=2&page_token=${page.next_page_token}`;
    }
    const ours = seen.filter((code) => code.startsWith(`${prefix}-LIST-`));
    expect(ours).toEqual([...codes].sort());
    expect(seen).toEqual([...seen].sort());
    expect((await send('GET', '/v1/discount-codes', tokens.customer)).status).toBe(403);
  });
});

interface PartyFareJson {
  fare_class: string;
  seats_free: number;
  total: { amount_minor: number; currency: string };
  lines: {
    passenger_type: string;
    count: number;
    unit_price: { amount_minor: number };
    amount: { amount_minor: number };
  }[];
}

interface AvailabilityJson {
  trips: { trip_id: string; seats_free: number; party_fares?: PartyFareJson[] }[];
}

function availabilityPath(query: string, routeId = network.routes.main.id): string {
  return `/v1/routes/${routeId}/availability?date=${network.date}${query}`;
}

describe('GET /v1/routes/{route_id}/availability with passengers', () => {
  it('answers exactly as before without passengers: no party_fares', async () => {
    const response = await send('GET', availabilityPath(''), tokens.customer);
    expectContract('getRouteAvailability', response);
    const body = response.body as AvailabilityJson;
    expect(body.trips.length).toBe(3);
    for (const trip of body.trips) expect(trip).not.toHaveProperty('party_fares');
  });

  it('prices two adults and a child per fare class, the child at half, and leaves out classes without room', async () => {
    const response = await send('GET', availabilityPath('&passengers=ADULT:2,CHILD:1'), tokens.customer);
    expectContract('getRouteAvailability', response);
    expect(response.status).toBe(200);
    const body = response.body as AvailabilityJson;
    const morning = body.trips.find((trip) => trip.trip_id === network.trips.morning);
    // The morning trip has one free premium seat (1A is held) and three free standard ones (3A is booked).
    expect(morning?.party_fares).toEqual([
      {
        fare_class: 'STANDARD',
        seats_free: 3,
        total: { amount_minor: 2 * 2450 + 1225, currency: 'EUR' },
        lines: [
          {
            passenger_type: 'ADULT',
            count: 2,
            unit_price: { amount_minor: 2450, currency: 'EUR' },
            amount: { amount_minor: 4900, currency: 'EUR' },
          },
          {
            passenger_type: 'CHILD',
            count: 1,
            unit_price: { amount_minor: 1225, currency: 'EUR' },
            amount: { amount_minor: 1225, currency: 'EUR' },
          },
        ],
      },
    ]);
    const afterMidnight = body.trips.find((trip) => trip.trip_id === network.trips.afterMidnight);
    expect(afterMidnight?.party_fares?.map((fare) => fare.fare_class)).toEqual(['STANDARD']);
  });

  it('prices an infant free and gives it no seat: four passengers fit three free seats', async () => {
    const response = await send(
      'GET',
      availabilityPath('&passengers=adult:2,CHILD:1,INFANT:1'),
      tokens.customer,
    );
    expectContract('getRouteAvailability', response);
    const morning = (response.body as AvailabilityJson).trips.find(
      (trip) => trip.trip_id === network.trips.morning,
    );
    const standard = morning?.party_fares?.find((fare) => fare.fare_class === 'STANDARD');
    expect(standard?.total.amount_minor).toBe(6125);
    expect(standard?.lines.find((line) => line.passenger_type === 'INFANT')).toMatchObject({
      count: 1,
      unit_price: { amount_minor: 0 },
      amount: { amount_minor: 0 },
    });
  });

  it('leaves out a trip with fewer free seats than the party takes', async () => {
    const response = await send('GET', availabilityPath('&passengers=ADULT:4'), tokens.customer);
    expectContract('getRouteAvailability', response);
    const trips = (response.body as AvailabilityJson).trips;
    expect(trips.map((trip) => trip.trip_id)).not.toContain(network.trips.morning);
    expect(trips.map((trip) => trip.trip_id).sort()).toEqual(
      [network.trips.evening, network.trips.afterMidnight].sort(),
    );
    for (const trip of trips) {
      expect(trip.party_fares?.map((fare) => fare.fare_class)).toEqual(['STANDARD']);
      expect(trip.party_fares?.[0].total.amount_minor).toBe(4 * 2450);
    }
  });

  it('prices the segment searched: boarding at the intermediate stop', async () => {
    const response = await send(
      'GET',
      availabilityPath(`&boarding_stop=${network.stops.other}&passengers=ADULT:1,CHILD:1`),
      tokens.customer,
    );
    expectContract('getRouteAvailability', response);
    const morning = (response.body as AvailabilityJson).trips.find(
      (trip) => trip.trip_id === network.trips.morning,
    );
    const plain = await send(
      'GET',
      availabilityPath(`&boarding_stop=${network.stops.other}`),
      tokens.customer,
    );
    const segmentPrice = (
      plain.body as { trips: { trip_id: string; lowest_price: { amount_minor: number } }[] }
    ).trips.find((trip) => trip.trip_id === network.trips.morning)?.lowest_price.amount_minor;
    expect(segmentPrice).toBeLessThan(2450);
    const standard = morning?.party_fares?.find((fare) => fare.fare_class === 'STANDARD');
    expect(standard?.lines.map((line) => line.unit_price.amount_minor)).toEqual([
      segmentPrice,
      Math.floor(((segmentPrice ?? 0) * 50 + 50) / 100),
    ]);
  });

  it.each([
    ['a count of 0', 'ADULT:0', 'the count of ADULT must be a whole number from 1 to 9'],
    [
      'an unknown type',
      'ALIEN:1',
      'unknown passenger type ALIEN; this route sells INFANT, CHILD, YOUTH, ADULT',
    ],
    ['a count that is no number', 'ADULT:x', 'passenger types with counts, such as ADULT:2,CHILD:1'],
    ['too many passengers', 'ADULT:6,CHILD:4', 'a party has at most 9 passengers; this one has 10'],
    ['a type given twice', 'ADULT:1,ADULT:1', 'ADULT is given more than once'],
    ['an infant alone', 'INFANT:1', 'a passenger of type INFANT travels with a passenger of type ADULT'],
  ])('refuses %s: 400 VALIDATION_FAILED naming passengers', async (_case, party, message) => {
    const response = await send(
      'GET',
      availabilityPath(`&passengers=${encodeURIComponent(party)}`),
      tokens.customer,
    );
    expectContract('getRouteAvailability', response);
    expect(response.status).toBe(400);
    expect((response.body as Problem).code).toBe('VALIDATION_FAILED');
    const violations = violationsOf(response);
    expect(violations.every((violation) => violation.field === 'passengers')).toBe(true);
    expect(violations.map((violation) => violation.message).join(' | ')).toContain(message);
  });

  it('answers 404 for an unknown route with a party as without one', async () => {
    const response = await send(
      'GET',
      availabilityPath('&passengers=ADULT:1', '0b9d6c1e-3f4a-4b5c-8d6e-7f8091a2b3c4'),
      tokens.customer,
    );
    expectContract('getRouteAvailability', response);
    expect(response.status).toBe(404);
  });
});

describe('GET /v1/routes/{route_id}/passenger-types', () => {
  it('lists the default set for a route without types of its own, to any role', async () => {
    for (const token of Object.values(tokens)) {
      const response = await send('GET', `/v1/routes/${network.routes.main.id}/passenger-types`, token);
      expectContract('listPassengerTypes', response);
      expect(response.status).toBe(200);
      const types = (response.body as { passenger_types: Record<string, unknown>[] }).passenger_types;
      expect(types.map((type) => type.code)).toEqual(defaultPassengerTypes.map((type) => type.code));
      expect(types[0]).toEqual({
        code: 'INFANT',
        name: 'Infant on a lap',
        min_age: 0,
        max_age: 2,
        price_rule: { share_percent: 0, per_segment: null },
        takes_seat: false,
        birth_date_required: true,
        requires_companion: ['ADULT'],
      });
    }
  });

  it('lists a route’s own set, and prices its per-segment type by the legs of the segment', async () => {
    const routeId = network.routes.main.id;
    await replacePassengerTypes(database, routeId, [
      { ...defaultPassengerTypes[3] },
      {
        code: 'SENIOR',
        name: 'Senior',
        minAge: 65,
        maxAge: 120,
        priceRule: { kind: 'per_segment', amount: { amountMinor: 1000, currency: 'EUR' } },
        takesSeat: true,
        birthDateRequired: true,
      },
    ]);
    try {
      const types = await send('GET', `/v1/routes/${routeId}/passenger-types`, tokens.customer);
      expectContract('listPassengerTypes', types);
      expect((types.body as { passenger_types: unknown[] }).passenger_types[1]).toMatchObject({
        code: 'SENIOR',
        price_rule: { share_percent: null, per_segment: { amount_minor: 1000, currency: 'EUR' } },
      });
      const seniorPrice = async (query: string) => {
        const response = await send('GET', availabilityPath(`${query}&passengers=SENIOR:1`), tokens.customer);
        expectContract('getRouteAvailability', response);
        const morning = (response.body as AvailabilityJson).trips.find(
          (trip) => trip.trip_id === network.trips.morning,
        );
        return morning?.party_fares?.[0].total.amount_minor;
      };
      // The main route calls at one stop between its ends: two legs end to end, one from that stop.
      expect(await seniorPrice('')).toBe(2000);
      expect(await seniorPrice(`&boarding_stop=${network.stops.other}`)).toBe(1000);
      const child = await send('GET', availabilityPath('&passengers=CHILD:1'), tokens.customer);
      expect(violationsOf(child)[0].message).toBe(
        'unknown passenger type CHILD; this route sells ADULT, SENIOR',
      );
    } finally {
      await replacePassengerTypes(database, routeId, []);
    }
  });

  it('answers 404 for an unknown route and 400 for a malformed id', async () => {
    const missing = await send(
      'GET',
      '/v1/routes/0b9d6c1e-3f4a-4b5c-8d6e-7f8091a2b3c4/passenger-types',
      tokens.customer,
    );
    expectContract('listPassengerTypes', missing);
    expect(missing.status).toBe(404);
    const malformed = await send('GET', '/v1/routes/not-a-route/passenger-types', tokens.customer);
    expect(malformed.status).toBe(400);
  });
});
