// FareService over mutual TLS against PostgreSQL: discount codes, passenger types and availability priced for a party.
import { randomBytes } from 'node:crypto';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { expect } from '@jest/globals';
import type { Knex } from 'knex';
import { BookingServiceCallError } from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import { createCatalogApplication } from '../../../src/application/catalog';
import { createFareApplication } from '../../../src/application/fares';
import type { Actor } from '../../../src/domain/actor';
import { unauthenticated } from '../../../src/domain/errors';
import {
  CreateDiscountCodeRequest,
  DiscountKind,
  FareServiceClient,
  GetDiscountCodeRequest,
  GetRouteAvailabilityRequest,
  ListDiscountCodesRequest,
  ListPassengerTypesRequest,
  type CreateDiscountCodeResponse,
  type GetDiscountCodeResponse,
  type GetRouteAvailabilityResponse,
  type ListDiscountCodesResponse,
  type ListPassengerTypesResponse,
} from '../../../src/generated/com/example/bookings/v1/fare_service';
import { scopesForRoles } from '../../../src/security/policy';
import { openTestDatabase, testCipher } from '../../support/database';
import {
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import { createNetworkFixture, type NetworkFixture } from '../../support/route-network';
import { insertUser, type TestUser } from '../../support/users';

jest.setTimeout(30_000);

let database: Knex;
let network: NetworkFixture;
let certificates: TestCertificates;
let server: RunningGrpcServer;
let client: FareServiceClient;
let users: TestUser[] = [];
const actorsByToken = new Map<string, Actor>();
const prefix = `G${randomBytes(3).toString('hex').toUpperCase()}`;

beforeAll(async () => {
  database = openTestDatabase();
  const cipher = testCipher();
  const [customer, agent, admin] = await Promise.all([
    insertUser(database, cipher, { roles: ['customer'] }),
    insertUser(database, cipher, { roles: ['agent'] }),
    insertUser(database, cipher, { roles: ['admin'] }),
  ]);
  users = [customer, agent, admin];
  for (const [token, user, role] of [
    ['customer', customer, 'customer'],
    ['agent', agent, 'agent'],
    ['admin', admin, 'admin'],
  ] as const) {
    actorsByToken.set(token, { userId: user.id, roles: [role], scopes: scopesForRoles([role]) });
  }
  network = await createNetworkFixture(database, {
    cipher,
    customerId: customer.id,
    date: '2032-02-10',
    nextDate: '2032-02-11',
  });
  certificates = createTestCertificates();
  const catalog = createCatalogApplication({ database });
  server = await startTestServer({
    certificates,
    fares: createFareApplication({ database, catalog }),
    verifyAccessToken: (token) => {
      const actor = actorsByToken.get(token);
      return actor ? Promise.resolve(actor) : Promise.reject(unauthenticated('The token is not valid'));
    },
  });
  client = new FareServiceClient(
    `127.0.0.1:${server.port}`,
    credentials.createSsl(certificates.ca, certificates.allowedClient.key, certificates.allowedClient.cert),
  );
});

afterAll(async () => {
  client?.close();
  await server?.stop();
  if (certificates) removeTestCertificates(certificates);
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

type Callback<Response> = (error: ServiceError | null, response: Response) => void;

/** Runs one call with `authorization: Bearer <token>`; a failure is the BookingServiceCallError it reads as. */
function call<Response>(
  token: string,
  invoke: (metadata: Metadata, callback: Callback<Response>) => unknown,
): Promise<Response> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    invoke(metadata, (error, response) => {
      if (error) reject(new BookingServiceCallError(error));
      else resolve(response);
    });
  });
}

const fares = {
  createDiscountCode: (request: Partial<CreateDiscountCodeRequest>, token: string) =>
    call<CreateDiscountCodeResponse>(token, (metadata, callback) =>
      client.createDiscountCode(CreateDiscountCodeRequest.fromPartial(request), metadata, callback),
    ),
  getDiscountCode: (code: string, token: string) =>
    call<GetDiscountCodeResponse>(token, (metadata, callback) =>
      client.getDiscountCode(GetDiscountCodeRequest.fromPartial({ code }), metadata, callback),
    ),
  listDiscountCodes: (request: Partial<ListDiscountCodesRequest>, token: string) =>
    call<ListDiscountCodesResponse>(token, (metadata, callback) =>
      client.listDiscountCodes(ListDiscountCodesRequest.fromPartial(request), metadata, callback),
    ),
  getRouteAvailability: (request: Partial<GetRouteAvailabilityRequest>, token: string) =>
    call<GetRouteAvailabilityResponse>(token, (metadata, callback) =>
      client.getRouteAvailability(GetRouteAvailabilityRequest.fromPartial(request), metadata, callback),
    ),
  listPassengerTypes: (routeId: string, token: string) =>
    call<ListPassengerTypesResponse>(token, (metadata, callback) =>
      client.listPassengerTypes(ListPassengerTypesRequest.fromPartial({ routeId }), metadata, callback),
    ),
};

async function failureOf(work: Promise<unknown>): Promise<BookingServiceCallError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof BookingServiceCallError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

const createCode = (request: Partial<CreateDiscountCodeRequest>, token = 'agent') =>
  fares.createDiscountCode(
    {
      code: `${prefix}-${randomBytes(3).toString('hex').toUpperCase()}`,
      kind: DiscountKind.DISCOUNT_KIND_PERCENT,
      value: 10,
      validFrom: new Date(Date.now() - 86_400_000),
      validUntil: new Date(Date.now() + 365 * 86_400_000),
      maxUsages: 10,
      ...request,
    },
    token,
  );

describe('FareService discount codes', () => {
  it('lets an agent and an admin create codes, answered with no usages', async () => {
    const percent = await createCode({ code: `${prefix.toLowerCase()}-grpc` }, 'agent');
    expect(percent.discountCode).toMatchObject({
      code: `${prefix}-GRPC`,
      kind: DiscountKind.DISCOUNT_KIND_PERCENT,
      value: 10,
      currency: '',
      routeIds: [],
      maxUsages: 10,
      usages: 0,
      remaining: 10,
    });
    const amount = await createCode(
      {
        kind: DiscountKind.DISCOUNT_KIND_AMOUNT,
        value: 750,
        currency: 'EUR',
        routeIds: [network.routes.main.id],
      },
      'admin',
    );
    expect(amount.discountCode).toMatchObject({
      kind: DiscountKind.DISCOUNT_KIND_AMOUNT,
      value: 750,
      currency: 'EUR',
      routeIds: [network.routes.main.id],
    });
  });

  it('refuses a customer with PERMISSION_DENIED', async () => {
    const failure = await failureOf(createCode({}, 'customer'));
    expect(failure.code).toBe(status.PERMISSION_DENIED);
    expect(failure.reason).toBe('PERMISSION_DENIED');
  });

  it('refuses a duplicate code with INVALID_ARGUMENT on code', async () => {
    const code = `${prefix}-TWICE`;
    await createCode({ code });
    const failure = await failureOf(createCode({ code: code.toLowerCase() }, 'admin'));
    expect(failure.code).toBe(status.INVALID_ARGUMENT);
    expect(failure.reason).toBe('VALIDATION_FAILED');
    expect(failure.fieldViolations).toEqual([
      { field: 'code', description: `the code ${code} exists already` },
    ]);
  });

  it.each([
    ['no kind', { kind: DiscountKind.DISCOUNT_KIND_UNSPECIFIED }, 'kind'],
    ['an unknown kind', { kind: 9 as DiscountKind }, 'kind'],
    ['a percent over 100', { value: 101 }, 'value'],
    ['a negative amount', { kind: DiscountKind.DISCOUNT_KIND_AMOUNT, currency: 'EUR', value: -5 }, 'value'],
    [
      'valid_until before valid_from',
      { validFrom: new Date(Date.now() + 86_400_000), validUntil: new Date(Date.now() + 3_600_000) },
      'valid_until',
    ],
    ['no valid_from', { validFrom: undefined }, 'valid_from'],
    ['max_usages 0', { maxUsages: 0 }, 'max_usages'],
    ['an unknown route', { routeIds: ['0b9d6c1e-3f4a-4b5c-8d6e-7f8091a2b3c4'] }, 'route_ids[0]'],
  ])('refuses %s with INVALID_ARGUMENT naming the field', async (_case, request, field) => {
    const failure = await failureOf(createCode(request));
    expect(failure.code).toBe(status.INVALID_ARGUMENT);
    expect(failure.reason).toBe('VALIDATION_FAILED');
    expect(failure.fieldViolations.map((violation) => violation.field)).toContain(field);
  });

  it('reads a code with usages and remaining, lists codes in order, NOT_FOUND for none', async () => {
    const code = `${prefix}-READ`;
    await createCode({ code, maxUsages: 4 });
    await database('discount_codes').where({ code }).update({ usages: 1 });
    const read = await fares.getDiscountCode(code, 'admin');
    expect(read.discountCode).toMatchObject({ code, maxUsages: 4, usages: 1, remaining: 3 });
    const missing = await failureOf(fares.getDiscountCode(`${prefix}-NONE`, 'agent'));
    expect(missing.code).toBe(status.NOT_FOUND);
    const first = await fares.listDiscountCodes({ pageSize: 100 }, 'agent');
    const codes = first.discountCodes.map((listed) => listed.code);
    expect(codes).toEqual([...codes].sort());
    const denied = await failureOf(fares.listDiscountCodes({}, 'customer'));
    expect(denied.code).toBe(status.PERMISSION_DENIED);
  });
});

describe('FareService availability and passenger types', () => {
  const availability = (passengers: string, token = 'customer') =>
    fares.getRouteAvailability(
      {
        routeId: network.routes.main.id,
        date: network.date,
        passengers,
      },
      token,
    );

  it('answers without party fares when no party is named', async () => {
    const response = await availability('');
    expect(response.availability?.trips).toHaveLength(3);
    for (const trip of response.availability?.trips ?? []) expect(trip.partyFares).toEqual([]);
  });

  it('prices ADULT:2,CHILD:1,INFANT:1 per fare class with room for the three seated', async () => {
    const response = await availability('ADULT:2,CHILD:1,INFANT:1');
    const morning = response.availability?.trips.find((trip) => trip.tripId === network.trips.morning);
    expect(morning?.partyFares).toEqual([
      {
        fareClass: 'STANDARD',
        seatsFree: 3,
        total: { amountMinor: 6125, currency: 'EUR' },
        lines: [
          {
            passengerType: 'ADULT',
            count: 2,
            unitPrice: { amountMinor: 2450, currency: 'EUR' },
            amount: { amountMinor: 4900, currency: 'EUR' },
          },
          {
            passengerType: 'CHILD',
            count: 1,
            unitPrice: { amountMinor: 1225, currency: 'EUR' },
            amount: { amountMinor: 1225, currency: 'EUR' },
          },
          {
            passengerType: 'INFANT',
            count: 1,
            unitPrice: { amountMinor: 0, currency: 'EUR' },
            amount: { amountMinor: 0, currency: 'EUR' },
          },
        ],
      },
    ]);
  });

  it('leaves out a trip with fewer free seats than the party takes', async () => {
    const response = await availability('ADULT:4');
    const tripIds = response.availability?.trips.map((trip) => trip.tripId) ?? [];
    expect(tripIds.sort()).toEqual([network.trips.evening, network.trips.afterMidnight].sort());
  });

  it.each([
    ['ADULT:0', 'the count of ADULT must be a whole number from 1 to 9'],
    ['ALIEN:1', 'unknown passenger type ALIEN'],
    ['ADULT:x', '"ADULT:x" is not a type and a count such as ADULT:2'],
    ['ADULT:9,CHILD:1', 'a party has at most 9 passengers; this one has 10'],
  ])('refuses %s with INVALID_ARGUMENT naming passengers', async (party, message) => {
    const failure = await failureOf(availability(party));
    expect(failure.code).toBe(status.INVALID_ARGUMENT);
    expect(failure.reason).toBe('VALIDATION_FAILED');
    expect(failure.fieldViolations.every((violation) => violation.field === 'passengers')).toBe(true);
    expect(failure.fieldViolations.map((violation) => violation.description).join(' | ')).toContain(message);
  });

  it('lists the route’s passenger types to any role; NOT_FOUND for an unknown route', async () => {
    for (const token of ['customer', 'agent', 'admin']) {
      const response = await fares.listPassengerTypes(network.routes.main.id, token);
      expect(response.passengerTypes.map((type) => type.code)).toEqual(['INFANT', 'CHILD', 'YOUTH', 'ADULT']);
      expect(response.passengerTypes[1]).toEqual({
        code: 'CHILD',
        name: 'Child',
        minAge: 3,
        maxAge: 12,
        priceRule: { sharePercent: 50 },
        takesSeat: true,
        birthDateRequired: true,
        requiresCompanion: [],
      });
    }
    const missing = await failureOf(
      fares.listPassengerTypes('0b9d6c1e-3f4a-4b5c-8d6e-7f8091a2b3c4', 'customer'),
    );
    expect(missing.code).toBe(status.NOT_FOUND);
  });
});
