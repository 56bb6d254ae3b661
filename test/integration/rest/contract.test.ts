// Contract test: every documented operation is driven with the document's own examples over HTTP against the
// whole stack (identity provider, saga, PostgreSQL), and every answer is checked against the document.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  openApiDocument,
  openApiOperations,
  openApiOperationsById,
} from '../../../src/contracts/openapi-document';
import {
  anchorSchema,
  createOpenApiAjv,
  operationDefinition,
  resolveDocumentReference,
} from '../../../src/api/rest/openapi-validation';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { bookingRequest, createTrip, type TestTrip } from '../../support/trips';
import { eventually } from '../../support/outcomes';
import { contractViolations, observe, type ObservedResponse } from '../../support/rest-contract';
import { createNetworkFixture, type NetworkFixture } from '../../support/route-network';
import { composeTestApi, startServer, type RunningServer } from '../../support/rest-app';
import { actorOf, insertLoginUser, insertUser, type TestUser } from '../../support/users';
import { stripeSignature, webhookSecret as newWebhookSecret } from '../../support/payment-events';
import { postForm } from '../../support/oauth-client';
import {
  insertDelivery,
  loopbackWebhookSender,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../support/webhook-endpoint-fixtures';

const webhookSecret = newWebhookSecret();
/** A partner's service client of the embedded authorization server, registered for webhooks:manage alone. */
const partnerClient = {
  client_id: `contract-partner-${randomUUID().slice(0, 8)}`,
  kind: 'service',
  client_secret: `partner-secret-${randomUUID()}`,
  scopes: ['webhooks:manage'],
  roles: [],
};

// Starting the saga's workers (a webpack bundle) and driving Temporal take longer than jest's default.
jest.setTimeout(120_000);

type JsonObject = Record<string, unknown>;

interface Drive {
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
  body?: unknown;
  /** Defaults to the signed-in customer's access token; null sends none. */
  token?: string | null;
}

const loginExample = exampleBody('login', 'demoCustomer') as { email: string; password: string };

let saga: SagaEnvironment;
let database: Knex;
let trip: TestTrip;
let network: NetworkFixture;
let server: RunningServer;
let removeApp: () => Promise<void>;
let receiver: WebhookReceiver;
let customer: TestUser;
let networkOwner: TestUser;
let accessToken = '';
let refreshToken = '';
const statusesByOperation = new Map<string, Set<number>>();
/** Departures from the document seen by the current test; each test ends by expecting none. */
let contractProblems: { operationId: string; status: number; problems: string[] }[] = [];

afterEach(() => {
  const seen = contractProblems;
  contractProblems = [];
  expect(seen).toEqual([]);
});

function exampleBody(operationId: string, exampleName: string): unknown {
  const definition = operationDefinition(openApiOperationsById.get(operationId)!);
  const requestBody = resolveDocumentReference(openApiDocument, definition.requestBody) as {
    content: Record<string, { examples: Record<string, { value: unknown }> }>;
  };
  return structuredClone(requestBody.content['application/json'].examples[exampleName].value);
}

/** The example of an operation's parameter, as the document gives it. */
function parameterExample(operationId: string, name: string): string {
  const definition = operationDefinition(openApiOperationsById.get(operationId)!);
  for (const parameter of (definition.parameters as unknown[]) ?? []) {
    const resolved = resolveDocumentReference(openApiDocument, parameter) as {
      name: string;
      example?: unknown;
    };
    if (resolved.name === name && resolved.example !== undefined) {
      return typeof resolved.example === 'string' ? resolved.example : JSON.stringify(resolved.example);
    }
  }
  throw new Error(`${operationId} documents no example for ${name}`);
}

async function drive(operationId: string, request: Drive = {}): Promise<ObservedResponse> {
  const operation = openApiOperationsById.get(operationId)!;
  const path = operation.path.replace(/\{([a-z_]+)\}/g, (_match, name: string) =>
    encodeURIComponent(request.params?.[name] ?? ''),
  );
  const query = new URLSearchParams(
    Object.entries(request.query ?? {}).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();
  const headers: Record<string, string> = { ...request.headers };
  const token = request.token === undefined ? accessToken : request.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  const response = await observe(
    await fetch(`${server.baseUrl}${path}${query ? `?${query}` : ''}`, {
      method: operation.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    }),
  );
  const problems = contractViolations(operationId, response);
  if (problems.length > 0) contractProblems.push({ operationId, status: response.status, problems });
  const statuses = statusesByOperation.get(operationId) ?? new Set<number>();
  statuses.add(response.status);
  statusesByOperation.set(operationId, statuses);
  return response;
}

function twinsOf(canonicalOperationId: string): string[] {
  return openApiOperations
    .filter((operation) => operation.canonicalOperationId === canonicalOperationId)
    .map((operation) => operation.operationId);
}

beforeAll(async () => {
  saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '50' } });
  database = saga.database;
  // Rows 1-2 PREMIUM, 16 rows of A-D: the examples' seats 12C, 12D and 2A exist with the examples' classes.
  trip = await createTrip(database, { seatCount: 64, premiumRows: 2 });
  // The login example is a demo account; the demo seed is not run here, so the account is made as it would.
  customer = await insertLoginUser(database, saga.cipher, { ...loginExample, roles: ['customer'] });
  // The network's seat holds belong to someone else, so the customer's booking list holds only real bookings.
  networkOwner = await insertUser(database, saga.cipher, { roles: ['customer'] });
  network = await createNetworkFixture(database, {
    cipher: saga.cipher,
    customerId: networkOwner.id,
    date: '2031-12-09',
    nextDate: '2031-12-10',
  });
  receiver = await startWebhookReceiver();
  // Pings reach the loopback receiver over http; the delivery workflow is another suite's.
  const full = await composeTestApi(
    saga,
    {
      STRIPE_WEBHOOK_SECRET: webhookSecret,
      IDP_CLIENTS: JSON.stringify([partnerClient]),
      WEBHOOK_ALLOW_HTTP: 'true',
    },
    { webhookSender: loopbackWebhookSender(), webhookDeliveries: { nudge: () => Promise.resolve() } },
  );
  removeApp = full.remove;
  server = await startServer(full.app);
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await removeApp?.();
  await network?.remove();
  if (database) await database('users').whereIn('id', [networkOwner?.id].filter(Boolean)).delete();
  await saga?.stop();
});

describe('the document’s own examples', () => {
  it('are valid against their schemas, responses included', () => {
    const ajv = createOpenApiAjv();
    let checked = 0;
    for (const operation of openApiOperations) {
      const responses = operationDefinition(operation).responses as Record<string, unknown>;
      for (const [status, node] of Object.entries(responses)) {
        const response = resolveDocumentReference(openApiDocument, node) as {
          content?: Record<string, { schema: unknown; examples?: Record<string, unknown> }>;
        };
        for (const media of Object.values(response.content ?? {})) {
          const validate = ajv.compile(anchorSchema(media.schema) as object);
          for (const [name, example] of Object.entries(media.examples ?? {})) {
            const value = (resolveDocumentReference(openApiDocument, example) as { value: unknown }).value;
            expect({ where: `${operation.operationId} ${status} ${name}`, valid: validate(value) }).toEqual({
              where: `${operation.operationId} ${status} ${name}`,
              valid: true,
            });
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});

describe('every operation with its examples', () => {
  it('serves the probes and the identity provider’s discovery documents', async () => {
    for (const operationId of [
      'checkLiveness',
      'checkReadiness',
      'getOpenIdConfiguration',
      'getJsonWebKeySet',
    ]) {
      expect((await drive(operationId, { token: null })).status).toBe(200);
    }
  });

  it('signs in with the login example and refreshes the tokens', async () => {
    const wrong = await drive('login', {
      body: { ...loginExample, password: 'wrong-password' },
      token: null,
    });
    expect(wrong.status).toBe(401);
    const login = await drive('login', { body: loginExample, token: null });
    expect(login.status).toBe(200);
    const placeholder = await drive('refresh', { body: exampleBody('refresh', 'refresh'), token: null });
    expect(placeholder.status).toBe(401);
    const refreshed = await drive('refresh', {
      body: { refresh_token: (login.body as { refresh_token: string }).refresh_token },
      token: null,
    });
    expect(refreshed.status).toBe(200);
    ({ access_token: accessToken, refresh_token: refreshToken } = refreshed.body as {
      access_token: string;
      refresh_token: string;
    });
    expect(refreshToken).not.toBe('');
  });

  it('searches routes with the parameter examples, and pages through a known network', async () => {
    for (const operationId of twinsOf('listRoutes')) {
      const query = {
        origin: parameterExample(operationId, 'origin'),
        destination: parameterExample(operationId, 'destination'),
        date: parameterExample(operationId, 'date'),
        page_size: parameterExample(operationId, 'page_size'),
      };
      expect((await drive(operationId, { query })).status).toBe(200);
      const foreignToken = await drive(operationId, { query: { ...query, page_token: 'bm90LWlzc3VlZA' } });
      expect(foreignToken.status).toBe(400);
      const known = await drive(operationId, { query: { origin: network.stops.origin, page_size: 1 } });
      expect((known.body as { routes: unknown[] }).routes).toHaveLength(1);
    }
  });

  it('shows availability of a known route, and 404 for the example route id', async () => {
    for (const operationId of twinsOf('getRouteAvailability')) {
      const example = await drive(operationId, {
        params: { route_id: parameterExample(operationId, 'route_id') },
        query: { date: parameterExample(operationId, 'date') },
      });
      expect(example.status).toBe(404);
      const known = await drive(operationId, {
        params: { route_id: network.routes.main.id },
        query: { date: network.date },
      });
      expect((known.body as { trips: unknown[] }).trips.length).toBeGreaterThan(0);
    }
  });

  let booking: { id: string; version: number; passengers: { id: string }[] };
  let apiBooking: { id: string; version: number; passengers: { id: string }[] };
  const createKey = randomUUID();

  it('creates bookings from the create example, and replays it for its Idempotency-Key', async () => {
    const body = { ...(exampleBody('createBooking', 'twoPassengers') as JsonObject), trip_id: trip.tripId };
    const created = await drive('createBooking', { body, headers: { 'idempotency-key': createKey } });
    expect(created.status).toBe(201);
    booking = created.body as typeof booking;
    const replayed = await drive('createBooking', { body, headers: { 'idempotency-key': createKey } });
    expect(replayed.body).toEqual(created.body);

    const apiBody = structuredClone(body) as unknown as { passengers: { seat_number: string }[] };
    apiBody.passengers[0].seat_number = '13C';
    apiBody.passengers[1].seat_number = '13D';
    const apiCreated = await drive('createBookingApi', {
      body: apiBody,
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(apiCreated.status).toBe(201);
    apiBooking = apiCreated.body as typeof apiBooking;
  });

  it('reads bookings by id and lists them, 404 for the example booking id', async () => {
    for (const operationId of twinsOf('getBooking')) {
      const example = await drive(operationId, {
        params: { booking_id: parameterExample(operationId, 'booking_id') },
      });
      expect(example.status).toBe(404);
      expect((await drive(operationId, { params: { booking_id: booking.id } })).status).toBe(200);
    }
    for (const operationId of twinsOf('listBookings')) {
      const query = {
        status: parameterExample(operationId, 'status'),
        page_size: parameterExample(operationId, 'page_size'),
      };
      expect((await drive(operationId, { query })).status).toBe(200);
      expect((await drive(operationId, {})).status).toBe(200);
    }
  });

  it('changes bookings with the update examples, 412 for a stale If-Match', async () => {
    const change = exampleBody('updateBooking', 'changeSeatAndAddPassenger') as {
      seat_changes: { passenger_id: string }[];
      add_passengers: { seat_number: string }[];
    };
    change.seat_changes[0].passenger_id = booking.passengers[1].id;
    // The example's 12E does not exist on a four-abreast coach.
    change.add_passengers[0].seat_number = '14A';
    const stale = await drive('updateBooking', {
      params: { booking_id: booking.id },
      headers: { 'if-match': `"${booking.version + 1}"` },
      body: change,
    });
    expect(stale.status).toBe(412);
    const changed = await drive('updateBooking', {
      params: { booking_id: booking.id },
      headers: { 'if-match': stale.headers.etag },
      body: change,
    });
    expect(changed.status).toBe(200);

    const rename = exampleBody('updateBookingApi', 'correctName') as {
      passenger_updates: { passenger_id: string }[];
    };
    rename.passenger_updates[0].passenger_id = apiBooking.passengers[0].id;
    const renamed = await drive('updateBookingApi', {
      params: { booking_id: apiBooking.id },
      headers: { 'if-match': `"${apiBooking.version}"` },
      body: rename,
    });
    expect(renamed.status).toBe(200);
  });

  it('pays with the payment example; a key already used to create answers 422', async () => {
    const body = exampleBody('confirmPayment', 'visa');
    const reused = await drive('confirmPayment', {
      params: { booking_id: booking.id },
      headers: { 'idempotency-key': createKey },
      body,
    });
    expect(reused.status).toBe(422);
    for (const [operationId, target] of [
      ['confirmPayment', booking],
      ['confirmPaymentApi', apiBooking],
    ] as const) {
      const paid = await drive(operationId, {
        params: { booking_id: target.id },
        headers: { 'idempotency-key': randomUUID() },
        body,
      });
      expect(paid.status).toBe(200);
    }
  });

  it('lists the paid bookings’ tickets, serves each ticket as a PDF and the key set that verifies it', async () => {
    for (const [operationId, target] of [
      ['listBookingTickets', booking],
      ['listBookingTicketsApi', apiBooking],
    ] as const) {
      const listed = await drive(operationId, { params: { booking_id: target.id } });
      expect(listed.status).toBe(200);
      expect(
        (listed.body as { tickets: { status: string }[] }).tickets.map((ticket) => ticket.status),
      ).toContain('VALID');
    }
    for (const [operationId, target] of [
      ['getTicketPdf', booking],
      ['getTicketPdfApi', apiBooking],
    ] as const) {
      const pdf = await drive(operationId, {
        params: { booking_id: target.id, passenger_id: target.passengers[0].id },
      });
      expect([pdf.status, pdf.headers['content-type']]).toEqual([200, 'application/pdf']);
    }
    for (const operationId of twinsOf('getTicketKeySet')) {
      const keySet = await drive(operationId, { token: null });
      expect((keySet.body as { keys: { alg: string }[] }).keys[0].alg).toBe('ES256');
    }
  });

  it('quotes cancelling a paid passenger with the quote example, and reads the quote back', async () => {
    for (const [createId, readId, target] of [
      ['createRefundQuote', 'getRefundQuote', booking],
      ['createRefundQuoteApi', 'getRefundQuoteApi', apiBooking],
    ] as const) {
      const body = exampleBody(createId, 'onePassenger') as { passenger_ids: string[] };
      body.passenger_ids[0] = target.passengers[0].id;
      const quoted = await drive(createId, { params: { booking_id: target.id }, body });
      expect(quoted.status).toBe(201);
      const { id } = quoted.body as { id: string };
      const read = await drive(readId, { params: { booking_id: target.id, quote_id: id } });
      expect([read.status, read.body]).toEqual([200, quoted.body]);
    }
  });

  it('lists a trip’s revoked tickets to a driver, and refuses a customer', async () => {
    const driver = { email: `driver-${randomUUID()}@contract.test`, password: `pw-${randomUUID()}` };
    const driverUser = await insertLoginUser(database, saga.cipher, { ...driver, roles: ['driver'] });
    try {
      const login = await drive('login', { body: driver, token: null });
      const token = (login.body as { access_token: string }).access_token;
      for (const operationId of twinsOf('listTripTicketRevocations')) {
        const listed = await drive(operationId, { params: { trip_id: trip.tripId }, token });
        expect(listed.status).toBe(200);
        const example = await drive(operationId, {
          params: { trip_id: parameterExample(operationId, 'trip_id') },
          token,
        });
        expect(example.status).toBe(404);
      }
      const asCustomer = await drive('listTripTicketRevocations', { params: { trip_id: trip.tripId } });
      expect(asCustomer.status).toBe(403);
    } finally {
      await database('users').where({ id: driverUser.id }).delete();
    }
  });

  it('cancels one of two passengers with the example’s reason, the other travelling on', async () => {
    for (const [operationId, target] of [
      ['cancelPassengers', booking],
      ['cancelPassengersApi', apiBooking],
    ] as const) {
      const { reason } = exampleBody(operationId, 'oneWithQuote') as { reason: string };
      const cancelled = await drive(operationId, {
        params: { booking_id: target.id },
        body: { passenger_ids: [target.passengers[1].id], reason },
      });
      expect(cancelled.status).toBe(200);
      const travelling = (cancelled.body as { passengers: { id: string }[] }).passengers;
      expect(travelling.map((passenger) => passenger.id)).not.toContain(target.passengers[1].id);
      expect(travelling.length).toBeGreaterThan(0);
    }
  });

  it('cancels with the cancel example', async () => {
    for (const [operationId, target] of [
      ['cancelBooking', booking],
      ['cancelBookingApi', apiBooking],
    ] as const) {
      const cancelled = await drive(operationId, {
        params: { booking_id: target.id },
        body: exampleBody(operationId, 'withReason'),
      });
      expect(cancelled.status).toBe(200);
    }
  });

  it('reads the caller’s profile, and 404 for the example user id', async () => {
    for (const operationId of twinsOf('getCurrentUser')) {
      expect((await drive(operationId)).status).toBe(200);
    }
    for (const operationId of twinsOf('getUser')) {
      const example = await drive(operationId, {
        params: { user_id: parameterExample(operationId, 'user_id') },
      });
      expect(example.status).toBe(404);
      expect((await drive(operationId, { params: { user_id: customer.id } })).status).toBe(200);
    }
  });

  it('lets an agent encode and decode payloads at the codec endpoint; the foreign-key example answers 400', async () => {
    const agent = { email: `agent-${randomUUID()}@contract.test`, password: `pw-${randomUUID()}` };
    const agentUser = await insertLoginUser(database, saga.cipher, { ...agent, roles: ['agent'] });
    try {
      const login = await drive('login', { body: agent, token: null });
      const token = (login.body as { access_token: string }).access_token;
      // The example is sealed under a key id ("k1") this deployment's keyring does not hold.
      const foreign = await drive('decodePayloads', {
        body: exampleBody('decodePayloads', 'encrypted'),
        token,
      });
      expect(foreign.status).toBe(400);
      const plaintext = {
        payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'eyJzdGF0dXMiOiJDT05GSVJNRUQifQ==' }],
      };
      const encoded = await drive('encodePayloads', { body: plaintext, token });
      expect(encoded.status).toBe(200);
      const decoded = await drive('decodePayloads', { body: encoded.body as object, token });
      expect([decoded.status, decoded.body]).toEqual([200, plaintext]);
      const asCustomer = await drive('decodePayloads', { body: encoded.body as object });
      expect(asCustomer.status).toBe(403);
    } finally {
      await database('users').where({ id: agentUser.id }).delete();
    }
  });

  it('lets an agent board passengers by the tickets the service issued, over both twins, and read the manifest', async () => {
    // Tickets open three hours before departure: this trip's are valid now.
    const soon = await createTrip(database, { seatCount: 4, departureInMs: 3_600_000 });
    const agent = { email: `agent-${randomUUID()}@contract.test`, password: `pw-${randomUUID()}` };
    const agentUser = await insertLoginUser(database, saga.cipher, { ...agent, roles: ['agent'] });
    try {
      const login = await drive('login', { body: agent, token: null });
      const token = (login.body as { access_token: string }).access_token;
      for (const [index, operationId] of twinsOf('recordBoarding').entries()) {
        const owner = actorOf(customer);
        const pending = await saga.application.createBooking(
          owner,
          bookingRequest(soon, [soon.seatNumbers[index]]),
        );
        const confirmed = await saga.application.confirmPayment(owner, pending.id, {
          paymentToken: 'tok_visa',
        });
        const ticket = await eventually(
          (): Promise<{ token: string } | undefined> =>
            database('tickets').where({ booking_id: confirmed.id }).whereNull('revoked_at').first('token'),
          (row) => row !== undefined,
        );
        const boarded = await drive(operationId, {
          params: { trip_id: soon.tripId },
          body: { ticket: ticket!.token, stop: soon.stopCodes[0], device_id: 'bus-17' },
          token,
        });
        expect(boarded.status).toBe(200);
        const again = await drive(operationId, {
          params: { trip_id: soon.tripId },
          body: { ticket: ticket!.token, stop: soon.stopCodes[0] },
          token,
        });
        expect([again.status, (again.body as { code?: string }).code]).toEqual([409, 'ALREADY_BOARDED']);
      }
      for (const operationId of twinsOf('getTripManifest')) {
        const manifest = await drive(operationId, { params: { trip_id: soon.tripId }, token });
        expect(manifest.status).toBe(200);
        const { passengers } = manifest.body as { passengers: { status: string }[] };
        expect(passengers.map((passenger) => passenger.status)).toEqual(['BOARDED', 'BOARDED']);
      }
    } finally {
      await database('users').where({ id: agentUser.id }).delete();
    }
  });

  it('lets a partner’s service client manage its webhook endpoints and their deliveries, over both twins', async () => {
    const discovery = await drive('getOpenIdConfiguration', { token: null });
    // The issuer names a host of its own; its token endpoint is served here, on the same path.
    const tokenPath = new URL(String((discovery.body as JsonObject).token_endpoint)).pathname;
    const tokenEndpoint = `${server.baseUrl}${tokenPath}`;
    const granted = await postForm(
      tokenEndpoint,
      { grant_type: 'client_credentials', scope: 'webhooks:manage' },
      { basic: { clientId: partnerClient.client_id, clientSecret: partnerClient.client_secret } },
    );
    expect(granted.status).toBe(200);
    const token = String(granted.body.access_token);
    for (const suffix of ['', 'Api']) {
      const named = (operationId: string) => `${operationId}${suffix}`;
      const created = await drive(named('createWebhookEndpoint'), {
        body: { ...(exampleBody('createWebhookEndpoint', 'confirmations') as JsonObject), url: receiver.url },
        token,
      });
      expect(created.status).toBe(201);
      const endpoint = (created.body as { endpoint: { id: string; partner_id: string } }).endpoint;
      expect(endpoint.partner_id).toBe(partnerClient.client_id);
      const params = { endpoint_id: endpoint.id };
      expect((await drive(named('listWebhookEndpoints'), { token })).status).toBe(200);
      expect((await drive(named('getWebhookEndpoint'), { params, token })).status).toBe(200);
      const disabled = await drive(named('updateWebhookEndpoint'), {
        params,
        body: { enabled: false },
        token,
      });
      expect((disabled.body as JsonObject).status).toBe('DISABLED');
      const enabled = await drive(named('updateWebhookEndpoint'), {
        params,
        body: exampleBody('updateWebhookEndpoint', 'enable'),
        token,
      });
      expect((enabled.body as JsonObject).status).toBe('ENABLED');
      const rotated = await drive(named('rotateWebhookSecret'), {
        params,
        body: exampleBody('rotateWebhookSecret', 'hour'),
        token,
      });
      expect(rotated.status).toBe(200);
      const ping = await drive(named('pingWebhookEndpoint'), { params, token });
      expect([ping.status, (ping.body as JsonObject).outcome]).toEqual([200, 'DELIVERED']);
      const { deliveryId } = await insertDelivery(database, { endpointId: endpoint.id, status: 'failed' });
      const deliveries = await drive(named('listWebhookDeliveries'), {
        params,
        query: { status: 'FAILED' },
        token,
      });
      expect((deliveries.body as { deliveries: { id: string }[] }).deliveries.map((item) => item.id)).toEqual(
        [deliveryId],
      );
      const deliveryParams = { ...params, delivery_id: deliveryId };
      expect((await drive(named('getWebhookDelivery'), { params: deliveryParams, token })).status).toBe(200);
      const again = await drive(named('redeliverWebhookDelivery'), { params: deliveryParams, token });
      expect([again.status, (again.body as JsonObject).status]).toEqual([202, 'PENDING']);
      expect((await drive(named('deleteWebhookEndpoint'), { params, token })).status).toBe(204);
      expect((await drive(named('getWebhookEndpoint'), { params, token })).status).toBe(404);
    }
  });

  it('lets an agent create a discount code from the summer example, list and read it, price a party and list passenger types', async () => {
    const agent = { email: `agent-${randomUUID()}@contract.test`, password: `pw-${randomUUID()}` };
    const agentUser = await insertLoginUser(database, saga.cipher, { ...agent, roles: ['agent'] });
    const codes: string[] = [];
    try {
      const login = await drive('login', { body: agent, token: null });
      const token = (login.body as { access_token: string }).access_token;
      for (const [createId, listId, readId] of [
        ['createDiscountCode', 'listDiscountCodes', 'getDiscountCode'],
        ['createDiscountCodeApi', 'listDiscountCodesApi', 'getDiscountCodeApi'],
      ] as const) {
        // The example's terms under a code of this run's own: codes are unique for good.
        const code = `C-${randomUUID().slice(0, 18).toUpperCase()}`;
        codes.push(code);
        const created = await drive(createId, {
          body: { ...(exampleBody(createId, 'summer') as JsonObject), code },
          token,
        });
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject({ code, usages: 0 });
        const listed = await drive(listId, { query: { page_size: 100 }, token });
        expect(listed.status).toBe(200);
        const read = await drive(readId, { params: { code: code.toLowerCase() }, token });
        expect(read.status).toBe(200);
        expect(read.body).toMatchObject({
          code,
          remaining: (created.body as { max_usages: number }).max_usages,
        });
      }
      for (const operationId of twinsOf('getRouteAvailability')) {
        const priced = await drive(operationId, {
          params: { route_id: network.routes.main.id },
          query: { date: network.date, passengers: parameterExample(operationId, 'passengers') },
          token,
        });
        expect(priced.status).toBe(200);
        const { trips } = priced.body as { trips: { party_fares: unknown[] }[] };
        expect(trips.length).toBeGreaterThan(0);
        for (const pricedTrip of trips) expect(pricedTrip.party_fares.length).toBeGreaterThan(0);
      }
      for (const operationId of twinsOf('listPassengerTypes')) {
        const known = await drive(operationId, { params: { route_id: network.routes.main.id }, token });
        expect(known.status).toBe(200);
        const example = await drive(operationId, {
          params: { route_id: parameterExample(operationId, 'route_id') },
          token,
        });
        expect(example.status).toBe(404);
      }
    } finally {
      await database('discount_codes').whereIn('code', codes).delete();
      await database('users').where({ id: agentUser.id }).delete();
    }
  });

  it('lets an agent cancel a trip with the breakdown example and read its cancellation', async () => {
    const agent = { email: `agent-${randomUUID()}@contract.test`, password: `pw-${randomUUID()}` };
    const agentUser = await insertLoginUser(database, saga.cipher, { ...agent, roles: ['agent'] });
    try {
      const login = await drive('login', { body: agent, token: null });
      const token = (login.body as { access_token: string }).access_token;
      for (const [cancelId, readId] of [
        ['cancelTrip', 'getTripCancellation'],
        ['cancelTripApi', 'getTripCancellationApi'],
      ] as const) {
        const { tripId } = await createTrip(database, { seatCount: 4 });
        const started = await drive(cancelId, {
          params: { trip_id: tripId },
          body: exampleBody(cancelId, 'breakdown'),
          token,
        });
        expect(started.status).toBe(202);
        const read = await drive(readId, { params: { trip_id: tripId }, token });
        expect(read.status).toBe(200);
        expect(read.body).toMatchObject({
          trip_id: tripId,
          reason: 'The bus broke down and no replacement is available',
        });
      }
    } finally {
      await database('users').where({ id: agentUser.id }).delete();
    }
  });

  it('receives a signed Stripe event, and answers a second delivery of it as a duplicate', async () => {
    for (const operationId of twinsOf('receiveStripeEvent')) {
      const body = {
        id: `evt_contract_${randomUUID().replace(/-/g, '')}`,
        type: 'customer.created',
        created: Math.floor(Date.now() / 1000),
        data: { object: { id: 'cus_contract', object: 'customer' } },
      };
      const signed = () => ({
        body,
        headers: { 'stripe-signature': stripeSignature(JSON.stringify(body), webhookSecret) },
        token: null,
      });
      const first = await drive(operationId, signed());
      const again = await drive(operationId, signed());
      expect([first.status, first.body]).toEqual([200, { event_id: body.id, outcome: 'ignored' }]);
      expect([again.status, again.body]).toEqual([200, { event_id: body.id, outcome: 'duplicate' }]);
    }
  });

  it('drove every documented operation to a success', () => {
    const missing = openApiOperations
      .map((operation) => operation.operationId)
      .filter(
        (operationId) => ![...(statusesByOperation.get(operationId) ?? [])].some((status) => status < 300),
      );
    expect(missing).toEqual([]);
  });
});
