// The one error model over HTTP: unknown paths and methods, media types, malformed and oversized bodies,
// timeouts, unexpected failures; plus request ids, compression and rate limits.
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { Knex } from 'knex';
import { readRequestBody } from '../../../src/api/rest/openapi-validation';
import type { CatalogApplication } from '../../../src/application/interface';
import { createApiMetrics, type ApiMetrics } from '../../../src/observability/metrics';
import { openApiOperations, type OpenApiOperation } from '../../../src/contracts/openapi-document';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { expectContract, observe, type ObservedResponse } from '../../support/rest-contract';
import {
  bookingsOutOfScope,
  buildApp,
  createTokenIssuer,
  startServer,
  testSettings,
  type RunningServer,
} from '../../support/rest-app';
import { openTestDatabase, testCipher } from '../../support/database';
import { insertUser, type TestUser } from '../../support/users';

jest.setTimeout(30_000);

/** A catalogue that fails the way a broken database would, or never answers. */
const failingCatalog: CatalogApplication = {
  listRoutes: () =>
    Promise.reject(new Error('relation "routes" does not exist: SELECT * FROM routes WHERE code = $1')),
  getRouteAvailability: () => new Promise(() => undefined),
  listPassengerTypes: () => new Promise(() => undefined),
};

const bookingId = '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e';

let database: Knex;
let cipher: FieldCipher;
let issuer: Awaited<ReturnType<typeof createTokenIssuer>>;
let customer: TestUser;
let otherCustomer: TestUser;
let token: string;
let otherToken: string;
let server: RunningServer;
const extraServers: RunningServer[] = [];

beforeAll(async () => {
  database = openTestDatabase();
  cipher = testCipher();
  issuer = await createTokenIssuer();
  customer = await insertUser(database, cipher, { roles: ['customer'] });
  otherCustomer = await insertUser(database, cipher, { roles: ['customer'] });
  token = await issuer.issueToken({ userId: customer.id, roles: ['customer'] });
  otherToken = await issuer.issueToken({ userId: otherCustomer.id, roles: ['customer'] });
  server = await startServer(
    buildApp({
      database,
      cipher,
      operationGuard: issuer.operationGuard,
      bookings: bookingsOutOfScope,
      settings: testSettings({ bodyLimitBytes: 2048, requestTimeoutMs: 300 }),
      applications: { catalog: failingCatalog },
    }),
  );
});

afterAll(async () => {
  await server?.close();
  await Promise.all(extraServers.map((running) => running.close()));
  if (database) {
    await database('users').whereIn('id', [customer?.id, otherCustomer?.id].filter(Boolean)).delete();
    await database.destroy();
  }
});

async function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {},
  base: RunningServer = server,
): Promise<ObservedResponse> {
  const response = await fetch(`${base.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...init.headers },
    body: init.body,
  });
  return observe(response);
}

function staffToken(): Promise<string> {
  return issuer.issueToken({ userId: customer.id, roles: ['agent'] });
}

function expectProblem(response: ObservedResponse, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status,
    code,
    type: `urn:bus-booking:problem:${code.toLowerCase().replace(/_/g, '-')}`,
    request_id: response.headers['x-request-id'],
  });
}

describe('paths and methods', () => {
  it.each(['/v1/nothing-here', '/api/bookings/x/unknown', '/nothing'])(
    'answers 404 problem+json for %s',
    async (path) => {
      const response = await send(path);
      expectProblem(response, 404, 'NOT_FOUND');
      expect(response.body).toMatchObject({ instance: path });
    },
  );

  it('answers 405 with Allow for a method the path does not support', async () => {
    const response = await send(`/v1/bookings/${bookingId}`, { method: 'DELETE' });
    expectContract('getBooking', response);
    expectProblem(response, 405, 'VALIDATION_FAILED');
    expect(response.body).toMatchObject({ title: 'Method not allowed' });
    expect(response.headers.allow?.split(/,\s*/).sort()).toEqual(['GET', 'HEAD', 'PATCH']);
  });

  it('answers 405, not 501, for a method no route knows', async () => {
    const response = await send('/v1/routes', { method: 'PROPFIND' });
    expectProblem(response, 405, 'VALIDATION_FAILED');
    expect(response.headers.allow).toContain('GET');
  });
});

describe('request bodies', () => {
  const post = (
    body: string | Uint8Array,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ) => send('/v1/bookings', { method: 'POST', headers, body });

  it('refuses a body that is not application/json with 415', async () => {
    const response = await post('trip_id=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expectContract('createBooking', response);
    expectProblem(response, 415, 'VALIDATION_FAILED');
    expect(response.body).toMatchObject({ title: 'Unsupported media type' });
    const noType = await send('/v1/bookings', { method: 'POST', body: new TextEncoder().encode('{}') });
    expect(noType.status).toBe(415);
  });

  it.each([
    ['truncated JSON', '{"trip_id": '],
    ['a JSON scalar', '"just a string"'],
    ['trailing garbage', '{} {}'],
  ])('refuses %s with 400 without quoting it', async (_name, body) => {
    const response = await post(body);
    expectContract('createBooking', response);
    expectProblem(response, 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(response.body)).not.toContain('trip_id');
  });

  it('refuses a missing body where one is required', async () => {
    const response = await send('/v1/bookings', { method: 'POST' });
    expectContract('createBooking', response);
    expectProblem(response, 400, 'VALIDATION_FAILED');
  });

  it('refuses a body over the limit with 413', async () => {
    const response = await post(JSON.stringify({ contact_email: `${'a'.repeat(4000)}@example.com` }));
    expectContract('createBooking', response);
    expectProblem(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('measures the limit after decompression, so a gzip bomb is refused too', async () => {
    const inflated = JSON.stringify({ reason: 'x'.repeat(100_000) });
    const response = await send(`/v1/bookings/${bookingId}/cancel`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(inflated),
    });
    expectContract('cancelBooking', response);
    expectProblem(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('lists every field problem, never accepting server-owned fields', async () => {
    const response = await post(
      JSON.stringify({
        trip_id: 'nope',
        passengers: [],
        contact_email: 'ana@example.com',
        status: 'CONFIRMED',
        customer_id: otherCustomer.id,
      }),
    );
    expectContract('createBooking', response);
    expectProblem(response, 400, 'VALIDATION_FAILED');
    expect(
      (response.body as { errors: { field: string }[] }).errors.map((error) => error.field).sort(),
    ).toEqual(['customer_id', 'passengers', 'status', 'trip_id']);
  });

  it('names each bad field once, in words without a pattern, and counts fields in the detail', async () => {
    const response = await post(
      JSON.stringify({
        trip_id: '5a8d2f1e-7c3b-4e9a-b6d4-0e1f2a3b4c5d',
        passengers: [
          {
            first_name: 'Ana',
            last_name: 'Silva',
            email: 'ana.silva@',
            seat_number: '12C',
            fare_class: 'STANDARD',
          },
        ],
        contact_email: 'not-an-address',
      }),
    );
    expectContract('createBooking', response);
    expectProblem(response, 400, 'VALIDATION_FAILED');
    expect(response.body).toMatchObject({
      detail: 'The request has 2 invalid fields',
      errors: [
        { field: 'passengers[0].email', message: 'must be a valid email address' },
        { field: 'contact_email', message: 'must be a valid email address' },
      ],
    });
    expect((response.body as { errors: unknown[] }).errors).toHaveLength(2);
  });

  it('tells an empty change what it must give', async () => {
    const response = await send(`/v1/bookings/${bookingId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'if-match': '"1"' },
      body: '{}',
    });
    expectContract('updateBooking', response);
    expectProblem(response, 400, 'VALIDATION_FAILED');
    expect(response.body).toMatchObject({
      detail: 'The request has 1 invalid field',
      errors: [
        {
          field: '',
          message: 'an update must give at least one of seat_changes, add_passengers or passenger_updates',
        },
      ],
    });
  });

  it('authenticates before it reads the body: no token is 401 whatever the body', async () => {
    const response = await send('/v1/bookings', {
      method: 'POST',
      headers: { authorization: '', 'content-type': 'application/json' },
      body: '{',
    });
    expectContract('createBooking', response);
    expectProblem(response, 401, 'UNAUTHENTICATED');
  });
});

describe('failures below the API', () => {
  it('turns an unexpected error into 500 INTERNAL with no SQL and no stack', async () => {
    const response = await send('/v1/routes');
    expectContract('listRoutes', response);
    expectProblem(response, 500, 'INTERNAL');
    const text = JSON.stringify(response.body);
    expect(text).not.toMatch(/SELECT|relation|at .*\.ts/);
  });

  it('answers 503 UNAVAILABLE with Retry-After when a request takes too long', async () => {
    const started = Date.now();
    const response = await send(`/v1/routes/${bookingId}/availability?date=2031-12-02`);
    expectContract('getRouteAvailability', response);
    expectProblem(response, 503, 'UNAVAILABLE');
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('passes on the application’s UNAVAILABLE with Retry-After', async () => {
    const response = await send(`/v1/bookings/${bookingId}`);
    expectContract('getBooking', response);
    expectProblem(response, 503, 'UNAVAILABLE');
    expect(response.headers['retry-after']).toBe('1');
  });
});

describe('request ids and compression', () => {
  it('echoes a well-formed X-Request-Id and puts it in problem documents', async () => {
    const response = await send('/v1/nothing', { headers: { 'x-request-id': 'client-chosen-id-42' } });
    expect(response.headers['x-request-id']).toBe('client-chosen-id-42');
    expect(response.body).toMatchObject({ request_id: 'client-chosen-id-42' });
  });

  it('replaces a malformed X-Request-Id with a fresh one', async () => {
    const response = await send('/healthz', { headers: { 'x-request-id': 'has spaces in it' } });
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  /** The headers and byte length of GET `path`, with the Accept-Encoding given (none when undefined). */
  function fetchRaw(path: string, acceptEncoding: string | undefined) {
    return new Promise<{ headers: http.IncomingHttpHeaders; bytes: number }>((resolve, reject) => {
      const request = http.get(
        `${server.baseUrl}${path}`,
        { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } },
        (response) => {
          let bytes = 0;
          response.on('data', (chunk: Buffer) => (bytes += chunk.length));
          response.on('end', () => resolve({ headers: response.headers, bytes }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
    });
  }

  it('compresses large responses for clients that accept it', async () => {
    const { headers } = await fetchRaw('/openapi.yaml', 'gzip');
    expect(headers['content-encoding']).toBe('gzip');
    expect(headers.vary).toMatch(/accept-encoding/i);
    expect(headers['x-request-id']).toBeDefined();
  });

  it('answers the same large response uncompressed to a client that accepts no encoding, varying on it', async () => {
    const plain = await fetchRaw('/openapi.yaml', undefined);
    const identity = await fetchRaw('/openapi.yaml', 'identity');
    for (const { headers, bytes } of [plain, identity]) {
      expect(headers['content-encoding']).toBeUndefined();
      expect(headers.vary).toMatch(/accept-encoding/i);
      expect(Number(headers['content-length'])).toBe(bytes);
    }
    expect(plain.bytes).toBe(identity.bytes);
    expect(plain.bytes).toBeGreaterThan(1024);
  });
});

describe('rate limits', () => {
  let metrics: ApiMetrics;

  /** The 429s the app counted as refusals of `reason`, from its metrics exposition. */
  async function refusalsCounted(reason: string): Promise<number> {
    const exposition = await metrics.registry.metrics();
    const sample = new RegExp(
      `^bus_booking_request_refusals_total\\{front="rest",reason="${reason}"\\} (\\d+)$`,
      'm',
    );
    return Number(sample.exec(exposition)?.[1] ?? 0);
  }

  async function limitedServer(perUser: number, perAddress: number): Promise<RunningServer> {
    metrics = createApiMetrics();
    const running = await startServer(
      buildApp({
        database,
        cipher,
        operationGuard: issuer.operationGuard,
        bookings: bookingsOutOfScope,
        settings: testSettings({ rateLimits: { windowSeconds: 60, perUser, perAddress } }),
        metrics,
      }),
    );
    extraServers.push(running);
    return running;
  }

  it('announces the per-address quota and answers 429 with Retry-After once it is spent', async () => {
    const limited = await limitedServer(0, 3);
    const answers: ObservedResponse[] = [];
    for (let index = 0; index < 4; index += 1) answers.push(await send('/v1/users/me', {}, limited));
    expect(answers.slice(0, 3).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => answer.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(answers[0].headers['ratelimit-limit']).toBe('3');
    const refused = answers[3];
    expectContract('getCurrentUser', refused);
    expectProblem(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(await refusalsCounted('rate_limit_address')).toBe(1);
    expect(await refusalsCounted('rate_limit_user')).toBe(0);

    const probe = await send('/healthz', {}, limited);
    expect(probe.status).toBe(200);
  });

  it('counts each user separately from the others on the same address', async () => {
    const limited = await limitedServer(2, 0);
    const statuses = [];
    for (let index = 0; index < 3; index += 1)
      statuses.push((await send('/v1/users/me', {}, limited)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await refusalsCounted('rate_limit_user')).toBe(1);
    const other = await send('/v1/users/me', { headers: { authorization: `Bearer ${otherToken}` } }, limited);
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('1');
  });

  it('ignores X-Forwarded-For unless a proxy is trusted, so clients cannot pick their address', async () => {
    const limited = await limitedServer(0, 1);
    const first = await send('/v1/users/me', { headers: { 'x-forwarded-for': '203.0.113.1' } }, limited);
    const second = await send('/v1/users/me', { headers: { 'x-forwarded-for': '203.0.113.2' } }, limited);
    expect([first.status, second.status]).toEqual([200, 429]);
  });
});

describe('the protocol errors of every operation the API router serves', () => {
  const served = openApiOperations.filter(
    (operation) => !operation.public && !operation.path.includes('/auth/'),
  );
  const withBody = served.filter((operation) => readRequestBody(operation) !== undefined);
  const names = (operations: OpenApiOperation[]) =>
    operations.map((operation): [string, OpenApiOperation] => [operation.operationId, operation]);

  function pathOf(operation: OpenApiOperation): string {
    const path = operation.path.replace(/\{[a-z_]+\}/g, bookingId);
    return operation.canonicalOperationId === 'getRouteAvailability' ? `${path}?date=2031-12-02` : path;
  }

  it('covers every /v1 and /api operation and the two codec operations', () => {
    expect(served).toHaveLength(70);
    expect(withBody).toHaveLength(26);
  });

  it.each(names(served))('%s: 401 without a token, 403 without its scope', async (operationId, operation) => {
    const anonymous = await send(pathOf(operation), {
      method: operation.method,
      headers: { authorization: '' },
    });
    expectContract(operationId, anonymous);
    expectProblem(anonymous, 401, 'UNAUTHENTICATED');
    const scopeless = await issuer.issueToken({ userId: customer.id, roles: ['customer'], scopes: [] });
    const unscoped = await send(pathOf(operation), {
      method: operation.method,
      headers: { authorization: `Bearer ${scopeless}` },
    });
    expectContract(operationId, unscoped);
    expectProblem(unscoped, 403, 'PERMISSION_DENIED');
  });

  it.each(names(served))('%s: 405 with Allow for a method its path lacks', async (operationId, operation) => {
    const methods = new Set(
      openApiOperations.filter((other) => other.path === operation.path).map((other) => other.method),
    );
    const method = ['DELETE', 'PUT', 'PATCH', 'POST'].find(
      (candidate) => !methods.has(candidate as OpenApiOperation['method']),
    )!;
    const response = await send(pathOf(operation), { method });
    expectContract(operationId, response);
    expectProblem(response, 405, 'VALIDATION_FAILED');
  });

  it.each(names(withBody))(
    '%s: 415, 413 and 400 for the wrong media type, size and syntax',
    async (operationId, operation) => {
      // A caller the operation admits, so the body is what fails (the codec operations are staff only; an
      // operation open to any role, a partner's webhooks, admits a service client holding its scopes).
      const caller = operation.roles.includes('customer')
        ? token
        : operation.roles.length === 0
          ? await issuer.issueToken({ userId: customer.id, roles: [], scopes: [...operation.scopes] })
          : await staffToken();
      const headers = {
        authorization: `Bearer ${caller}`,
        'content-type': 'application/json',
        'if-match': '"1"',
      };
      const wrongType = await send(pathOf(operation), {
        method: operation.method,
        headers: { ...headers, 'content-type': 'text/plain' },
        body: '{}',
      });
      expectContract(operationId, wrongType);
      expectProblem(wrongType, 415, 'VALIDATION_FAILED');
      const tooLarge = await send(pathOf(operation), {
        method: operation.method,
        headers,
        body: JSON.stringify({ padding: 'p'.repeat(4096) }),
      });
      expectContract(operationId, tooLarge);
      expectProblem(tooLarge, 413, 'PAYLOAD_TOO_LARGE');
      const malformed = await send(pathOf(operation), { method: operation.method, headers, body: '{"' });
      expectContract(operationId, malformed);
      expectProblem(malformed, 400, 'VALIDATION_FAILED');
    },
  );

  it('answers 429 to every operation once the address has spent its quota', async () => {
    const limited = await startServer(
      buildApp({
        database,
        cipher,
        operationGuard: issuer.operationGuard,
        bookings: bookingsOutOfScope,
        settings: testSettings({ rateLimits: { windowSeconds: 60, perUser: 0, perAddress: 1 } }),
      }),
    );
    extraServers.push(limited);
    await send('/v1/users/me', {}, limited);
    for (const operation of served) {
      const response = await send(pathOf(operation), { method: operation.method }, limited);
      expectContract(operation.operationId, response);
      expectProblem(response, 429, 'RATE_LIMITED');
    }
  });
});
