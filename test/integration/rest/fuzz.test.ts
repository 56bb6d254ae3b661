// Fuzz test: over a thousand generated malformed requests across every documented operation get only
// documented 4xx answers (never a 5xx), each valid against the document, and leave the database unchanged.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { openApiOperations, type OpenApiOperation } from '../../../src/contracts/openapi-document';
import { readRequestBody } from '../../../src/api/rest/openapi-validation';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import {
  contractViolations,
  documentedResponse,
  observe,
  type ObservedResponse,
} from '../../support/rest-contract';
import { composeTestApi, startServer, type RunningServer } from '../../support/rest-app';
import { insertLoginUser, type TestUser } from '../../support/users';

// Starting the saga's workers (a webpack bundle) and driving Temporal take longer than jest's default.
jest.setTimeout(120_000);

const requestCount = 1600;
const concurrency = 8;
const seed = Number(process.env.REST_FUZZ_SEED ?? 20261122);
const bodyLimitBytes = 64 * 1024;

/** A small seeded generator (mulberry32), so a failing case can be replayed with REST_FUZZ_SEED. */
function seededRandom(initial: number): () => number {
  let state = initial >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

interface FuzzRequest {
  operationId: string;
  mutation: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

let saga: SagaEnvironment;
let database: Knex;
let trip: TestTrip;
let server: RunningServer;
let removeApp: () => Promise<void>;
let customer: TestUser;
let accessToken = '';
let bookingId = '';
let passengerId = '';
let password = '';
let refreshToken = '';
/** Ids a partner's webhook operations name; the customer's token reaches no endpoint, so none need exist. */
const webhookEndpointId = randomUUID();
const webhookDeliveryId = randomUUID();

beforeAll(async () => {
  saga = await startSagaEnvironment();
  database = saga.database;
  trip = await createTrip(database, { seatCount: 8 });
  password = `fuzz-${randomUUID()}`;
  customer = await insertLoginUser(database, saga.cipher, {
    email: `fuzz-${randomUUID()}@example.com`,
    password,
    roles: ['customer'],
  });
  const full = await composeTestApi(saga);
  removeApp = full.remove;
  server = await startServer(full.app);
  const login = await fetch(`${server.baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: customer.email, password }),
  });
  ({ access_token: accessToken, refresh_token: refreshToken } = (await login.json()) as {
    access_token: string;
    refresh_token: string;
  });
  const created = await fetch(`${server.baseUrl}/v1/bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({
      trip_id: trip.tripId,
      passengers: [
        {
          first_name: 'Fuzz',
          last_name: 'Target',
          email: 'fuzz@example.com',
          seat_number: '1A',
          fare_class: 'STANDARD',
        },
      ],
      contact_email: 'fuzz@example.com',
    }),
  });
  const booking = (await created.json()) as { id: string; passengers: { id: string }[] };
  bookingId = booking.id;
  passengerId = booking.passengers[0].id;
});

afterAll(async () => {
  await server?.close();
  await removeApp?.();
  await saga?.stop();
});

/** Rows the fuzzed requests could touch, as one digest per table: any write shows up as a different digest. */
async function databaseFingerprint(): Promise<Record<string, string>> {
  const digest = async (sql: string, bindings: readonly string[]) => {
    const result = await database.raw<{ rows: { digest: string }[] }>(
      `SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS digest FROM (${sql}) t`,
      bindings,
    );
    return result.rows[0].digest;
  };
  const ownBookings = `SELECT id FROM bookings WHERE customer_id = ? OR trip_id = ?`;
  const scope = [customer.id, trip.tripId];
  return {
    users: await digest(`SELECT * FROM users WHERE id = ?`, [customer.id]),
    bookings: await digest(`SELECT * FROM bookings WHERE id IN (${ownBookings})`, scope),
    passengers: await digest(`SELECT * FROM passengers WHERE booking_id IN (${ownBookings})`, scope),
    seatAllocations: await digest(`SELECT * FROM seat_allocations WHERE trip_id = ?`, [trip.tripId]),
    payments: await digest(`SELECT * FROM payments WHERE booking_id IN (${ownBookings})`, scope),
    refunds: await digest(`SELECT * FROM refunds WHERE booking_id IN (${ownBookings})`, scope),
    refundQuotes: await digest(`SELECT * FROM refund_quotes WHERE booking_id IN (${ownBookings})`, scope),
    notifications: await digest(`SELECT * FROM notifications WHERE booking_id IN (${ownBookings})`, scope),
    idempotencyKeys: await digest(`SELECT * FROM idempotency_keys WHERE customer_id = ?`, [customer.id]),
    refreshTokens: await digest(`SELECT * FROM identity_refresh_tokens WHERE user_id = ?`, [customer.id]),
  };
}

function generator(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const text = (length: number) => Array.from({ length }, () => pick([...'abcXYZ019 -_.'])).join('');

  const malformedIds = [
    'abc',
    '12345',
    randomUUID().replace(/-/g, ''),
    `${randomUUID()}0`,
    `urn:uuid:${randomUUID()}`,
    '%00',
    '%E0%A4%A',
    "1' OR '1'='1",
    'x'.repeat(300),
    'ünïcødé',
    '{{booking_id}}',
  ];

  function baseBody(operation: OpenApiOperation): Json | undefined {
    switch (operation.canonicalOperationId) {
      case 'createBooking':
        return {
          trip_id: trip.tripId,
          passengers: [
            {
              first_name: 'Ana',
              last_name: 'Silva',
              email: 'ana@example.com',
              phone: '+351912345678',
              seat_number: '2A',
              fare_class: 'STANDARD',
            },
          ],
          contact_email: 'ana@example.com',
          contact_phone: '+351912345678',
        };
      case 'updateBooking':
        return {
          seat_changes: [{ passenger_id: passengerId, seat_number: '2B', fare_class: 'STANDARD' }],
          passenger_updates: [
            { passenger_id: passengerId, last_name: 'Santos', email: 'santos@example.com' },
          ],
        };
      case 'cancelBooking':
        return { reason: 'Plans changed' };
      case 'createRefundQuote':
        return { passenger_ids: [passengerId] };
      case 'cancelPassengers':
        return { passenger_ids: [passengerId], reason: 'Plans changed' };
      case 'cancelTrip':
        // A customer's token: the operator's operation answers 403 to the base and every mutation but a few.
        return { reason: 'The bus broke down' };
      case 'recordBoarding':
        // A customer's token: a driver's scan answers 403 to the base and every mutation but a few.
        return { ticket: 'header.payload.signature', stop: trip.stopCodes[0], device_id: 'bus-17' };
      case 'confirmPayment':
        return { payment_token: 'tok_visa' };
      case 'createDiscountCode':
        // A customer's token: the agents' operation answers 403 to the base and every mutation but a few.
        return {
          code: 'FUZZ-CODE',
          kind: 'PERCENT',
          value: 10,
          valid_from: '2031-01-01T00:00:00Z',
          valid_until: '2031-12-31T00:00:00Z',
          max_usages: 5,
        };
      case 'login':
        return { email: customer.email, password };
      case 'refresh':
        return { refresh_token: refreshToken };
      case 'receiveStripeEvent':
        // Unsigned: Stripe's webhook answers 400 naming Stripe-Signature to the base and every mutation.
        return {
          id: 'evt_fuzz',
          type: 'payment_intent.succeeded',
          created: 1795939200,
          data: { object: { id: 'pi_fuzz', object: 'payment_intent', metadata: { booking_id: bookingId } } },
        };
      // A customer's token holds no webhooks:manage: a partner's operations answer 403 to the base and to every
      // mutation but a few.
      case 'createWebhookEndpoint':
        return {
          url: 'https://partner.example/hooks',
          event_types: ['booking.confirmed', 'booking.cancelled'],
          description: 'Fuzz receiver',
        };
      case 'updateWebhookEndpoint':
        return { url: 'https://partner.example/v2', description: 'Fuzz receiver', enabled: true };
      case 'rotateWebhookSecret':
        return { overlap_seconds: 3600 };
      case 'decodePayloads':
      case 'encodePayloads':
        // A customer's token, so the codec operations answer 403 to the base and to every mutation but a few.
        return { payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'eyJhIjoxfQ==' }] };
      default:
        return undefined;
    }
  }

  function basePath(operation: OpenApiOperation, overrides: Record<string, string> = {}): string {
    const values: Record<string, string> = {
      booking_id: bookingId,
      route_id: trip.routeId,
      trip_id: trip.tripId,
      passenger_id: passengerId,
      user_id: customer.id,
      // No such quote: the read answers 404 once the request's form passes.
      quote_id: '00000000-0000-4000-8000-000000000000',
      endpoint_id: webhookEndpointId,
      delivery_id: webhookDeliveryId,
      ...overrides,
    };
    const path = operation.path.replace(/\{([a-z_]+)\}/g, (_match, name: string) => values[name]);
    // Well-formed queries: availability needs its date; a search is narrowed to a stop no route serves, so
    // the answer does not depend on what other suites have put in the shared database.
    if (operation.canonicalOperationId === 'getRouteAvailability') return `${path}?date=2031-12-02`;
    if (operation.canonicalOperationId === 'listRoutes') return `${path}?origin=NOWHERE`;
    return path;
  }

  function baseHeaders(operation: OpenApiOperation): Record<string, string> {
    const headers: Record<string, string> = {};
    if (!operation.public) headers.authorization = `Bearer ${accessToken}`;
    if (operation.canonicalOperationId === 'updateBooking') headers['if-match'] = '"1"';
    return headers;
  }

  /** Every path into an object or array of the body, with the value found there. */
  function leaves(value: Json, path: (string | number)[] = []): { path: (string | number)[]; value: Json }[] {
    if (Array.isArray(value))
      return value.flatMap((item, index) => [
        { path: [...path, index], value: item },
        ...leaves(item, [...path, index]),
      ]);
    if (value !== null && typeof value === 'object') {
      return Object.entries(value).flatMap(([key, item]) => [
        { path: [...path, key], value: item },
        ...leaves(item, [...path, key]),
      ]);
    }
    return [];
  }

  function setAt(root: Json, path: (string | number)[], value: Json | undefined): void {
    let node = root as Record<string | number, Json>;
    for (const segment of path.slice(0, -1)) node = node[segment] as Record<string | number, Json>;
    const last = path[path.length - 1];
    if (value === undefined) delete node[last];
    else node[last] = value;
  }

  /** A value of a different JSON type from `value`, so the schema can never accept it in its place. */
  function otherType(value: Json): Json {
    const candidates: Json[] = [42, true, null, [], {}, 'text'];
    const typeOf = (item: Json) => (item === null ? 'null' : Array.isArray(item) ? 'array' : typeof item);
    return pick(candidates.filter((candidate) => typeOf(candidate) !== typeOf(value)));
  }

  const bodyMutations: Record<string, (body: Json, request: FuzzRequest) => void> = {
    truncatedJson(body, request) {
      const json = JSON.stringify(body);
      request.body = json.slice(0, 1 + Math.floor(random() * (json.length - 1)));
    },
    rootNotAnObject(_body, request) {
      request.body = pick(['42', '"text"', 'null', 'true', '[]', '[{}]', '[[1],[2]]']);
    },
    wrongContentType(body, request) {
      request.headers['content-type'] = pick([
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json-patch+json',
      ]);
      request.body = JSON.stringify(body);
    },
    oversized(body, request) {
      request.body = JSON.stringify({ ...(body as object), padding: 'p'.repeat(bodyLimitBytes + 1024) });
    },
    unknownField(body, request) {
      const targets = [
        [] as (string | number)[],
        ...leaves(body)
          .filter(
            (leaf) => leaf.value !== null && typeof leaf.value === 'object' && !Array.isArray(leaf.value),
          )
          .map((leaf) => leaf.path),
      ];
      const target = pick(targets);
      const field = pick([
        'status',
        'customer_id',
        'price',
        'amount_paid',
        'payment',
        'version',
        'id',
        text(8),
      ]);
      if (target.length === 0) (body as Record<string, Json>)[field] = 'injected';
      else setAt(body, [...target, field], 'injected');
      request.body = JSON.stringify(body);
    },
    wrongFieldType(body, request) {
      const leaf = pick(leaves(body));
      setAt(body, leaf.path, otherType(leaf.value));
      request.body = JSON.stringify(body);
    },
    overlongString(body, request) {
      const strings = leaves(body).filter((leaf) => typeof leaf.value === 'string');
      setAt(body, pick(strings).path, 'x'.repeat(3000));
      request.body = JSON.stringify(body);
    },
    deepNesting(_body, request) {
      const depth = 2000 + Math.floor(random() * 3000);
      request.body = pick([
        `${'['.repeat(depth)}${']'.repeat(depth)}`,
        `{"a":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
      ]);
    },
    prototypePollution(body, request) {
      request.body = `{"__proto__":{"admin":true},${JSON.stringify(body).slice(1)}`;
    },
    emptyBody(_body, request) {
      request.body = '';
    },
  };

  function requiredFieldRemoval(
    operation: OpenApiOperation,
  ): ((body: Json, request: FuzzRequest) => void) | undefined {
    const required: Record<string, string[]> = {
      createBooking: ['trip_id', 'passengers', 'contact_email'],
      confirmPayment: ['payment_token'],
      login: ['email', 'password'],
      refresh: ['refresh_token'],
    };
    const fields = required[operation.canonicalOperationId];
    if (fields === undefined) return undefined;
    return (body, request) => {
      delete (body as Record<string, Json>)[pick(fields)];
      request.body = JSON.stringify(body);
    };
  }

  const validatedByTheRouter = (operation: OpenApiOperation) =>
    !operation.public && operation.operationId !== 'login' && operation.operationId !== 'refresh';

  function mutationsFor(operation: OpenApiOperation): [string, (request: FuzzRequest) => void][] {
    const mutations: [string, (request: FuzzRequest) => void][] = [];
    const methodsOfPath = new Set(
      openApiOperations.filter((other) => other.path === operation.path).map((other) => other.method),
    );
    mutations.push([
      'wrongMethod',
      (request) => {
        request.method = pick(
          ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
            (method) => !methodsOfPath.has(method as OpenApiOperation['method']),
          ),
        );
        delete request.body;
      },
    ]);
    if (operation.path.includes('{')) {
      mutations.push([
        'malformedPathParameter',
        (request) => {
          const malformed = encodeURIComponent(pick(malformedIds)).replace(
            /%25([0-9A-F]{2})/g,
            (match, hex: string) => (random() < 0.5 ? `%${hex}` : match),
          );
          request.path = basePath(operation, {
            booking_id: malformed,
            route_id: malformed,
            user_id: malformed,
          });
        },
      ]);
    }
    if (validatedByTheRouter(operation)) {
      mutations.push([
        'unknownQueryParameter',
        (request) => {
          request.path += `${request.path.includes('?') ? '&' : '?'}${pick(['sort', 'debug', 'admin', 'fields', text(5).replace(/\W/g, 'q') || 'q'])}=1`;
        },
      ]);
      mutations.push([
        'badAuthorization',
        (request) => {
          request.headers.authorization = pick([
            'Basic dXNlcjpwYXNz',
            'Bearer',
            'Bearer not.a.jwt',
            `Bearer ${accessToken.slice(0, -4)}AAAA`,
            `Bearer ${accessToken.split('.').slice(0, 2).join('.')}.`,
            'bearer  ',
            `Token ${accessToken}`,
          ]);
        },
      ]);
    }
    const queryParameters: Record<string, [string, string[]][]> = {
      listRoutes: [
        ['page_size', ['0', '-1', '101', 'ten', '1.5', '']],
        ['date', ['2031-02-30', '31-12-2031', 'tomorrow', '']],
        ['origin', ['', 'o'.repeat(101)]],
        ['page_token', ['', 't'.repeat(513), '!!!']],
      ],
      listBookings: [
        ['page_size', ['0', '101', 'many']],
        ['status', ['LOST', 'confirmed', '']],
        ['page_token', ['', 'z'.repeat(513)]],
      ],
      getRouteAvailability: [['date', ['2031-13-01', 'now', '', '2031-1-1']]],
    };
    const query = queryParameters[operation.canonicalOperationId];
    if (query !== undefined) {
      mutations.push([
        'badQueryValue',
        (request) => {
          const [name, values] = pick(query);
          request.path += `${request.path.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(pick(values))}`;
        },
      ]);
    }
    if (
      operation.canonicalOperationId === 'createBooking' ||
      operation.canonicalOperationId === 'confirmPayment'
    ) {
      mutations.push([
        'badIdempotencyKey',
        (request) => {
          request.headers['idempotency-key'] = pick([
            'has spaces',
            'k'.repeat(256),
            'clé',
            'a/b',
            'semi;colon',
          ]);
        },
      ]);
    }
    if (operation.canonicalOperationId === 'updateBooking') {
      mutations.push([
        'badIfMatch',
        (request) => {
          // `*` is left out: it is a well-formed If-Match (any version), so the change would be made.
          const value = pick(['1', 'W/"1"', '"one"', '"0"', '"1", "2"', '""', undefined]);
          if (value === undefined) delete request.headers['if-match'];
          else request.headers['if-match'] = value;
        },
      ]);
    }
    const requestBody = readRequestBodyOf(operation);
    if (requestBody) {
      const removal = requiredFieldRemoval(operation);
      // A body without a string (a secret rotation's overlap alone) has none to make overlong.
      const hasString = leaves(baseBody(operation) as Json).some((leaf) => typeof leaf.value === 'string');
      const entries = Object.entries(bodyMutations).filter(
        ([name]) =>
          (name !== 'emptyBody' || requestBody.required) && (name !== 'overlongString' || hasString),
      );
      if (removal) entries.push(['missingRequiredField', removal]);
      if (operation.canonicalOperationId === 'updateBooking') {
        entries.push(['noChangeAtAll', (_body, request) => (request.body = '{}')]);
      }
      for (const [name, mutate] of entries) {
        mutations.push([
          name,
          (request) => {
            request.headers['content-type'] ??= 'application/json';
            mutate(structuredClone(baseBody(operation)) as Json, request);
          },
        ]);
      }
    }
    return mutations;
  }

  function readRequestBodyOf(operation: OpenApiOperation) {
    if (operation.operationId === 'login' || operation.operationId === 'refresh') return { required: true };
    return readRequestBody(operation);
  }

  function base(operation: OpenApiOperation): FuzzRequest {
    const body = baseBody(operation);
    return {
      operationId: operation.operationId,
      mutation: 'none',
      method: operation.method,
      path: basePath(operation),
      headers: {
        ...baseHeaders(operation),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
  }

  // Every (operation, mutation) pair is equally likely, so operations with many inputs get many cases.
  const cases = openApiOperations.flatMap((operation) =>
    mutationsFor(operation).map(([mutation, mutate]) => ({ operation, mutation, mutate })),
  );

  return {
    base,
    /** One malformed request: the well-formed base of an operation with exactly one thing broken. */
    next: (): FuzzRequest => {
      const { operation, mutation, mutate } = pick(cases);
      const request = { ...base(operation), mutation };
      request.headers = { ...request.headers };
      mutate(request);
      return request;
    },
  };
}

async function send(request: FuzzRequest): Promise<ObservedResponse> {
  return observe(
    await fetch(`${server.baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    }),
  );
}

test('the unbroken base requests are well-formed, so each mutation alone makes a request malformed', async () => {
  const { base } = generator(seededRandom(seed));
  // Reads first, then the writes in an order where each still applies to the booking.
  const order = [
    'getBooking',
    'listBookings',
    'listRoutes',
    'getRouteAvailability',
    'getUser',
    'getCurrentUser',
    'login',
    'refresh',
    'createBooking',
    'updateBooking',
    'confirmPayment',
    'cancelBooking',
  ];
  for (const operationId of order) {
    const response = await send(
      base(openApiOperations.find((operation) => operation.operationId === operationId)!),
    );
    expect({ operationId, problems: contractViolations(operationId, response) }).toEqual({
      operationId,
      problems: [],
    });
    expect({ operationId, malformed: [400, 413, 415].includes(response.status) }).toEqual({
      operationId,
      malformed: false,
    });
  }
});

test(`${requestCount} malformed requests get only documented 4xx answers and change nothing (seed ${seed})`, async () => {
  const before = await databaseFingerprint();
  const { next } = generator(seededRandom(seed));
  const requests = Array.from({ length: requestCount }, next);
  const failures: { request: string; status: number; problems: string[] }[] = [];
  const statusCounts = new Map<number, number>();
  const mutationsSeen = new Set<string>();
  const operationsSeen = new Set<string>();

  async function check(request: FuzzRequest): Promise<void> {
    const response = await send(request);
    statusCounts.set(response.status, (statusCounts.get(response.status) ?? 0) + 1);
    mutationsSeen.add(request.mutation);
    operationsSeen.add(request.operationId);
    const problems: string[] = [];
    if (response.status < 400 || response.status > 499) problems.push('not a 4xx');
    if (documentedResponse(request.operationId, response.status) === undefined)
      problems.push('status not documented');
    if (!/^application\/problem\+json/.test(response.headers['content-type'] ?? ''))
      problems.push('not problem+json');
    problems.push(...contractViolations(request.operationId, response));
    if (problems.length > 0) {
      const summary = `${request.operationId}/${request.mutation}: ${request.method} ${request.path.slice(0, 120)} ${JSON.stringify(request.headers).slice(0, 200)} ${(request.body ?? '').slice(0, 120)}`;
      failures.push({ request: summary, status: response.status, problems });
    }
  }

  let index = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (index < requests.length) {
        const request = requests[index];
        index += 1;
        await check(request);
      }
    }),
  );

  expect(failures.slice(0, 10)).toEqual([]);
  expect([...statusCounts.keys()].every((status) => status >= 400 && status < 500)).toBe(true);
  expect([...statusCounts.keys()]).toEqual(expect.arrayContaining([400, 401, 405, 413, 415]));
  expect(operationsSeen.size).toBe(openApiOperations.length);
  expect(mutationsSeen.size).toBeGreaterThanOrEqual(15);
  expect(await databaseFingerprint()).toEqual(before);
});
