// Authorization matrix over every OpenAPI operation × token cases, against the real REST app, saga and database.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { BookingView } from '../../../src/application/interface';
import {
  openApiDocument,
  openApiOperations,
  type OpenApiOperation,
} from '../../../src/contracts/openapi-document';
import { createDiscountCode } from '../../../src/db/discount-codes';
import { validateDiscountCodeInput } from '../../../src/domain/discount-codes';
import { errorCodeMappings } from '../../../src/domain/errors';
import { startServer, type RunningServer } from '../../support/rest-app';
import { authorizationCells, partyOf, type Cell, type Requirement } from '../../support/authorization-cells';
import { startMatrixEnvironment, type MatrixEnvironment } from '../../support/authorization-matrix';
import { answerOf, type ProblemAnswer } from '../../support/responses';
import { stripeEventBody, stripeSignature } from '../../support/payment-events';

interface RestRequest {
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
}

interface RequestContext {
  world: MatrixEnvironment;
  /** The owner's booking this cell acts on: a fresh one when the cell is expected to change it. */
  booking: () => Promise<BookingView>;
  /** Whether the cell is expected to change what it names (a served change), so it gets a resource of its own. */
  fresh: boolean;
}

type RequestBuilder = (context: RequestContext) => Promise<RestRequest>;

const plainPayload = {
  metadata: { encoding: Buffer.from('json/plain').toString('base64') },
  data: Buffer.from(JSON.stringify({ note: 'authorization matrix' })).toString('base64'),
};

/** A valid request of each guarded operation (by canonical id), so a cell that gets through is served. */
const guardedRequests: Record<string, RequestBuilder> = {
  createBooking: ({ world }) =>
    Promise.resolve({
      headers: { 'Idempotency-Key': randomUUID() },
      body: {
        trip_id: world.trip.tripId,
        passengers: [
          {
            first_name: 'Ana',
            last_name: 'Silva',
            email: 'ana.silva@example.com',
            seat_number: world.nextSeat(),
            fare_class: 'STANDARD',
          },
        ],
        contact_email: 'ana.silva@example.com',
      },
    }),
  listBookings: () => Promise.resolve({}),
  getBooking: async ({ booking }) => ({ pathParameters: { booking_id: (await booking()).id } }),
  updateBooking: async ({ booking }) => {
    const target = await booking();
    return {
      pathParameters: { booking_id: target.id },
      headers: { 'If-Match': `"${target.version}"` },
      body: { passenger_updates: [{ passenger_id: target.passengers[0].id, last_name: 'Silva Santos' }] },
    };
  },
  cancelBooking: async ({ booking }) => ({
    pathParameters: { booking_id: (await booking()).id },
    body: { reason: 'Plans changed' },
  }),
  cancelPassengers: async ({ booking }) => {
    const target = await booking();
    return {
      pathParameters: { booking_id: target.id },
      body: { passenger_ids: [target.passengers[0].id], reason: 'Plans changed' },
    };
  },
  confirmPayment: async ({ booking }) => ({
    pathParameters: { booking_id: (await booking()).id },
    headers: { 'Idempotency-Key': randomUUID() },
    body: { payment_token: 'tok_visa' },
  }),
  cancelTrip: async ({ world }) => ({
    pathParameters: { trip_id: await world.createSpareTrip() },
    body: { reason: 'The bus broke down' },
  }),
  getTripCancellation: async ({ world }) => ({
    pathParameters: { trip_id: await world.createCancelledTrip() },
  }),
  listRoutes: () => Promise.resolve({}),
  getRouteAvailability: ({ world }) =>
    Promise.resolve({
      pathParameters: { route_id: world.trip.routeId },
      query: { date: world.tripDate },
    }),
  listBookingTickets: async ({ booking }) => ({ pathParameters: { booking_id: (await booking()).id } }),
  createRefundQuote: async ({ booking }) => ({ pathParameters: { booking_id: (await booking()).id } }),
  getRefundQuote: async ({ world, booking }) => {
    const target = await booking();
    const quote = await world.quoteOf(target);
    return { pathParameters: { booking_id: target.id, quote_id: quote.id } };
  },
  getTicketPdf: async ({ booking }) => {
    const target = await booking();
    return { pathParameters: { booking_id: target.id, passenger_id: target.passengers[0].id } };
  },
  listTripTicketRevocations: ({ world }) =>
    Promise.resolve({ pathParameters: { trip_id: world.trip.tripId } }),
  // A cell that is served boards a fresh confirmed booking's passenger: a second scan would be ALREADY_BOARDED.
  recordBoarding: async ({ world, booking }) => {
    const target = await booking();
    const confirmed = target.status === 'CONFIRMED' ? target : await world.confirmOwnerBooking(target);
    return {
      pathParameters: { trip_id: world.trip.tripId },
      body: { ticket: await world.ticketOf(confirmed), stop: world.trip.stopCodes[0] },
    };
  },
  getTripManifest: ({ world }) => Promise.resolve({ pathParameters: { trip_id: world.trip.tripId } }),
  listPassengerTypes: ({ world }) => Promise.resolve({ pathParameters: { route_id: world.trip.routeId } }),
  // Each served create makes a code of its own; a read names one made for it.
  createDiscountCode: () => Promise.resolve({ body: matrixDiscountCode() }),
  listDiscountCodes: () => Promise.resolve({}),
  getDiscountCode: async ({ world }) => {
    const body = matrixDiscountCode();
    await createDiscountCode(
      world.saga.database,
      validateDiscountCodeInput(
        {
          code: body.code,
          kind: 'percent',
          value: body.value,
          validFrom: body.valid_from,
          validUntil: body.valid_until,
          maxUsages: body.max_usages,
        },
        new Date().toISOString(),
      ),
      'authorization-matrix',
    );
    return { pathParameters: { code: body.code } };
  },
  getCurrentUser: () => Promise.resolve({}),
  getUser: ({ world }) => Promise.resolve({ pathParameters: { user_id: world.parties.owner.id } }),
  // Partners' webhook endpoints: the owner's, registered as its service client would; a served delete gets its own.
  createWebhookEndpoint: ({ world }) =>
    Promise.resolve({ body: { url: world.receiverUrl, event_types: ['booking.confirmed'] } }),
  listWebhookEndpoints: () => Promise.resolve({}),
  getWebhookEndpoint: async ({ world }) => ({
    pathParameters: { endpoint_id: (await world.ownerEndpoint()).endpointId },
  }),
  updateWebhookEndpoint: async ({ world }) => ({
    pathParameters: { endpoint_id: (await world.ownerEndpoint()).endpointId },
    body: { description: 'authorization matrix' },
  }),
  deleteWebhookEndpoint: async ({ world, fresh }) => ({
    pathParameters: { endpoint_id: (await world.ownerEndpoint(fresh)).endpointId },
  }),
  rotateWebhookSecret: async ({ world }) => ({
    pathParameters: { endpoint_id: (await world.ownerEndpoint()).endpointId },
    body: { overlap_seconds: 0 },
  }),
  pingWebhookEndpoint: async ({ world }) => ({
    pathParameters: { endpoint_id: (await world.ownerEndpoint()).endpointId },
  }),
  listWebhookDeliveries: async ({ world }) => ({
    pathParameters: { endpoint_id: (await world.ownerEndpoint()).endpointId },
  }),
  getWebhookDelivery: async ({ world }) => {
    const { endpointId, deliveryId } = await world.ownerEndpoint();
    return { pathParameters: { endpoint_id: endpointId, delivery_id: deliveryId } };
  },
  redeliverWebhookDelivery: async ({ world }) => {
    const { endpointId, deliveryId } = await world.ownerEndpoint();
    return { pathParameters: { endpoint_id: endpointId, delivery_id: deliveryId } };
  },
  // A plain JSON payload: decoding passes it through, encoding encrypts it.
  decodePayloads: () => Promise.resolve({ body: { payloads: [plainPayload] } }),
  encodePayloads: () => Promise.resolve({ body: { payloads: [plainPayload] } }),
};

function matrixDiscountCode() {
  return {
    code: `M-${randomUUID().slice(0, 13).toUpperCase()}`,
    kind: 'PERCENT',
    value: 10,
    valid_from: new Date(Date.now() - 86_400_000).toISOString(),
    valid_until: new Date(Date.now() + 86_400_000).toISOString(),
    max_usages: 5,
  };
}

/** Public operations never look at a token: each cell must get the answer a tokenless caller gets. */
const publicRequests: Record<string, RequestBuilder> = {
  login: ({ world }) =>
    Promise.resolve({
      body: { email: world.parties.owner.email, password: world.parties.owner.password },
    }),
  // Refresh tokens rotate, so each cell redeems one of its own.
  refresh: async ({ world }) => {
    const { email, password } = world.parties.owner;
    const tokens = await world.identityProvider.login({ email, password }, '127.0.0.1');
    return { body: { refresh_token: tokens.refresh_token } };
  },
  checkLiveness: () => Promise.resolve({}),
  checkReadiness: () => Promise.resolve({}),
  getOpenIdConfiguration: () => Promise.resolve({}),
  getJsonWebKeySet: () => Promise.resolve({}),
  getTicketKeySet: () => Promise.resolve({}),
  getTicketKeySetApi: () => Promise.resolve({}),
  // A signed event of a type the service ignores: answered 200 and recorded, whatever token comes with it.
  receiveStripeEvent: ({ world }) => Promise.resolve(signedStripeEvent(world.webhookSecret)),
  receiveStripeEventApi: ({ world }) => Promise.resolve(signedStripeEvent(world.webhookSecret)),
};

/** The body as bytes already (the signature covers them), with its signature. */
function signedStripeEvent(secret: string): RestRequest {
  const body = stripeEventBody({
    type: 'customer.created',
    object: { id: 'cus_matrix', object: 'customer' },
  });
  return {
    headers: { 'Content-Type': 'application/json', 'Stripe-Signature': stripeSignature(body, secret) },
    body,
  };
}

const guardedOperations = openApiOperations.filter((operation) => !operation.public);
const publicOperations = openApiOperations.filter((operation) => operation.public);

function requirementOf(operation: OpenApiOperation): Requirement {
  return {
    scopes: operation.scopes,
    roles: operation.roles,
    namesOwnedResource: operation.ownership !== null && operation.path.includes('{'),
  };
}

/** The lowest 2xx the contract documents for the operation: what a served call answers. */
function successStatus(operation: OpenApiOperation): number {
  const item = openApiDocument.paths[operation.documentedPath][operation.method.toLowerCase()] as {
    responses: Record<string, unknown>;
  };
  return Math.min(
    ...Object.keys(item.responses)
      .filter((code) => /^2\d\d$/.test(code))
      .map(Number),
  );
}

function concretePath(operation: OpenApiOperation, parameters: Record<string, string> = {}): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = parameters[name];
    if (value === undefined) throw new Error(`${operation.operationId} needs path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** Whose data a served answer shows, when that is wrong for the caller; undefined when it is right. */
function wrongParty(
  operation: OpenApiOperation,
  parties: { callerId: string; ownerId: string; staff: boolean },
  body: unknown,
  ownerBookingIds: ReadonlySet<string>,
): string | undefined {
  const { callerId, ownerId, staff } = parties;
  const served = body as { customer_id?: string; id?: string; bookings?: { customer_id: string }[] };
  const expectations: Record<string, () => string | undefined> = {
    createBooking: () => (served.customer_id === callerId ? undefined : `booking of ${served.customer_id}`),
    listBookings: () => {
      // Every customer of the matrix has a booking of their own to list.
      if (staff) return undefined;
      if (!served.bookings?.length) return 'no booking at all';
      const foreign = served.bookings.find((booking) => booking.customer_id !== callerId);
      return foreign === undefined ? undefined : `a booking of ${foreign.customer_id}`;
    },
    getBooking: () => (served.customer_id === ownerId ? undefined : `booking of ${served.customer_id}`),
    getCurrentUser: () => (served.id === callerId ? undefined : `profile of ${served.id}`),
    // The owner's booking is confirmed, so it has tickets: all of them its own.
    listBookingTickets: () => {
      const tickets = (body as { tickets?: { booking_id: string }[] }).tickets ?? [];
      const ownTickets =
        tickets.length > 0 && tickets.every((ticket) => ticket.booking_id === sharedBooking.id);
      return ownTickets ? undefined : 'tickets of another booking';
    },
    listTripTicketRevocations: () =>
      (body as { trip_id?: string }).trip_id === world.trip.tripId ? undefined : 'another trip',
    recordBoarding: () =>
      (body as { stop?: string }).stop === world.trip.stopCodes[0] ? undefined : 'no boarding',
    // The owner's confirmed booking is on the trip: its passenger is on the manifest.
    getTripManifest: () =>
      (body as { passengers?: { booking_id: string }[] }).passengers?.some(
        (passenger) => passenger.booking_id === sharedBooking.id,
      )
        ? undefined
        : 'a manifest without the trip’s passengers',
    getUser: () => (served.id === ownerId ? undefined : `profile of ${served.id}`),
    // A partner's endpoints are its own: the listing shows no other partner's, a read the owner's only.
    listWebhookEndpoints: () => {
      const endpoints = (body as { endpoints?: { partner_id: string }[] }).endpoints ?? [];
      const foreign = endpoints.find((endpoint) => endpoint.partner_id !== callerId);
      return foreign === undefined ? undefined : `an endpoint of ${foreign.partner_id}`;
    },
    createWebhookEndpoint: () => {
      const partnerId = (body as { endpoint?: { partner_id?: string } }).endpoint?.partner_id;
      return partnerId === callerId ? undefined : `an endpoint registered for ${partnerId}`;
    },
    getWebhookEndpoint: () =>
      (body as { partner_id?: string }).partner_id === ownerId ? undefined : 'another partner’s endpoint',
  };
  // A quote is served only to whoever may read its booking, which is always the owner's.
  expectations.createRefundQuote = () =>
    ownerBookingIds.has(String((body as { booking_id?: string }).booking_id))
      ? undefined
      : 'a quote of another booking';
  expectations.getRefundQuote = expectations.createRefundQuote;
  expectations.updateBooking = expectations.getBooking;
  expectations.cancelBooking = expectations.getBooking;
  expectations.cancelPassengers = expectations.getBooking;
  expectations.confirmPayment = expectations.getBooking;
  return expectations[operation.canonicalOperationId]?.();
}

let world: MatrixEnvironment;
let server: RunningServer;
let cells: Cell[];
let sharedBooking: BookingView;

beforeAll(async () => {
  world = await startMatrixEnvironment();
  server = await startServer(world.app);
  cells = await authorizationCells(world.identityProvider, world.parties);
  sharedBooking = await world.confirmOwnerBooking(await world.createOwnerBooking());
});

afterAll(async () => {
  await server?.close();
  await world?.close();
});

async function send(operation: OpenApiOperation, restRequest: RestRequest, authorization?: string) {
  const method = operation.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  let call = request(server.baseUrl)[method](concretePath(operation, restRequest.pathParameters));
  if (restRequest.query) call = call.query(restRequest.query);
  for (const [name, value] of Object.entries(restRequest.headers ?? {})) call = call.set(name, value);
  if (authorization !== undefined) call = call.set('Authorization', authorization);
  return answerOf<Partial<ProblemAnswer> & Record<string, unknown>>(
    restRequest.body === undefined ? call : call.send(restRequest.body as object),
  );
}

describe('REST authorization matrix against the real handlers', () => {
  it('has a request for exactly the operations of the OpenAPI document', () => {
    const canonicalGuarded = [
      ...new Set(guardedOperations.map((operation) => operation.canonicalOperationId)),
    ];
    expect(Object.keys(guardedRequests).sort()).toEqual(canonicalGuarded.sort());
    expect(Object.keys(publicRequests).sort()).toEqual(
      publicOperations.map((operation) => operation.operationId).sort(),
    );
  });

  it.each(guardedOperations.map((operation) => [operation.operationId, operation] as const))(
    '%s answers each token case as the contract says',
    async (_operationId, operation) => {
      const requirement = requirementOf(operation);
      const success = successStatus(operation);
      const prepared = await Promise.all(
        cells.map(async (cell) => {
          const outcome = cell.expected(requirement);
          const changesBooking = outcome === 'OK' && operation.method !== 'GET';
          const restRequest = await guardedRequests[operation.canonicalOperationId]({
            world,
            booking: () => (changesBooking ? world.createOwnerBooking() : Promise.resolve(sharedBooking)),
            fresh: changesBooking,
          });
          return { cell, outcome, restRequest, authorization: await cell.authorization(requirement) };
        }),
      );
      const observed: Record<string, string> = {};
      const expected: Record<string, string> = {};
      const ownerBookingIds = new Set(
        await world.saga
          .database('bookings')
          .where({ customer_id: world.parties.owner.id })
          .pluck<string[]>('id'),
      );
      for (const { cell, outcome, restRequest, authorization } of prepared) {
        const response = await send(operation, restRequest, authorization);
        expected[cell.name] =
          `${outcome} ${outcome === 'OK' ? success : errorCodeMappings[outcome].httpStatus}`;
        const served = response.status === success;
        const parties = {
          callerId: partyOf(world.parties, cell.caller).id,
          ownerId: world.parties.owner.id,
          staff: cell.caller === 'agent' || cell.caller === 'admin',
        };
        const leak = served ? wrongParty(operation, parties, response.body, ownerBookingIds) : undefined;
        observed[cell.name] =
          `${served ? 'OK' : response.body.code} ${response.status}` + (leak ? ` but served ${leak}` : '');
        if (response.status === 401) {
          expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="bus-booking"/);
          expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
        }
        if (cell.name === 'missing scope' && requirement.scopes.length > 0 && response.status === 403) {
          expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
        }
      }
      expect(observed).toEqual(expected);
    },
  );

  it.each(publicOperations.map((operation) => [operation.operationId, operation] as const))(
    '%s (public) answers every token case as it answers no token',
    async (_operationId, operation) => {
      const success = successStatus(operation);
      const observed: Record<string, number> = {};
      const expected: Record<string, number> = {};
      for (const cell of cells) {
        const restRequest = await publicRequests[operation.operationId]({
          world,
          booking: () => Promise.resolve(sharedBooking),
          fresh: false,
        });
        const response = await send(
          operation,
          restRequest,
          await cell.authorization(requirementOf(operation)),
        );
        observed[cell.name] = response.status;
        expected[cell.name] = success;
      }
      expect(observed).toEqual(expected);
    },
  );
});
