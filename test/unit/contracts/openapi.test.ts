// Checks the OpenAPI document against the shared contract field list: operations, scopes, roles, fields, errors.
import { expect } from '@jest/globals';
import {
  openApiDocument,
  documentedOperations,
  openApiOperations,
  type OpenApiOperation,
} from '../../../src/contracts/openapi-document';
import { anchorSchema, createOpenApiAjv } from '../../../src/api/rest/openapi-validation';
import { loadStackConfig } from '../../../dev/stack/settings';
import { errorCodes } from '../../../src/domain/errors';

type Node = Record<string, unknown>;

const everyRole = ['customer', 'agent', 'admin'];

/** The authorization table of the contract field list; each row is also served under `/api`. */
const authorizationTable = [
  { method: 'POST', path: '/v1/bookings', operationId: 'createBooking', scope: 'bookings:write' },
  { method: 'GET', path: '/v1/bookings', operationId: 'listBookings', scope: 'bookings:read' },
  { method: 'GET', path: '/v1/bookings/{booking_id}', operationId: 'getBooking', scope: 'bookings:read' },
  {
    method: 'PATCH',
    path: '/v1/bookings/{booking_id}',
    operationId: 'updateBooking',
    scope: 'bookings:write',
  },
  {
    method: 'PUT',
    path: '/v1/bookings/{booking_id}/cancel',
    operationId: 'cancelBooking',
    scope: 'bookings:write',
  },
  {
    method: 'POST',
    path: '/v1/bookings/{booking_id}/passengers/cancel',
    operationId: 'cancelPassengers',
    scope: 'bookings:write',
  },
  {
    method: 'POST',
    path: '/v1/bookings/{booking_id}/payment',
    operationId: 'confirmPayment',
    scope: 'payments:write',
  },
  { method: 'GET', path: '/v1/routes', operationId: 'listRoutes', scope: 'routes:read' },
  {
    method: 'GET',
    path: '/v1/routes/{route_id}/availability',
    operationId: 'getRouteAvailability',
    scope: 'routes:read',
  },
  { method: 'GET', path: '/v1/users/{user_id}', operationId: 'getUser', scope: 'users:read' },
  { method: 'GET', path: '/v1/users/me', operationId: 'getCurrentUser', scope: 'users:read' },
  // Cancelling a whole trip is an operator's action: agents and admins only.
  {
    method: 'POST',
    path: '/v1/trips/{trip_id}/cancel',
    operationId: 'cancelTrip',
    scope: 'trips:cancel',
    roles: ['agent', 'admin'],
  },
  {
    method: 'GET',
    path: '/v1/trips/{trip_id}/cancellation',
    operationId: 'getTripCancellation',
    scope: 'trips:cancel',
    roles: ['agent', 'admin'],
  },
  {
    method: 'GET',
    path: '/v1/bookings/{booking_id}/tickets',
    operationId: 'listBookingTickets',
    scope: 'bookings:read',
  },
  {
    method: 'GET',
    path: '/v1/bookings/{booking_id}/tickets/{passenger_id}.pdf',
    operationId: 'getTicketPdf',
    scope: 'bookings:read',
  },
  // A quote changes no booking: whoever may read the booking may ask what cancelling it would refund.
  {
    method: 'POST',
    path: '/v1/bookings/{booking_id}/refund-quotes',
    operationId: 'createRefundQuote',
    scope: 'bookings:read',
  },
  {
    method: 'GET',
    path: '/v1/bookings/{booking_id}/refund-quotes/{quote_id}',
    operationId: 'getRefundQuote',
    scope: 'bookings:read',
  },
  {
    method: 'GET',
    path: '/v1/routes/{route_id}/passenger-types',
    operationId: 'listPassengerTypes',
    scope: 'routes:read',
  },
  // Discount codes are made and read by agents and admins only.
  {
    method: 'POST',
    path: '/v1/discount-codes',
    operationId: 'createDiscountCode',
    scope: 'discounts:manage',
    roles: ['agent', 'admin'],
  },
  {
    method: 'GET',
    path: '/v1/discount-codes',
    operationId: 'listDiscountCodes',
    scope: 'discounts:manage',
    roles: ['agent', 'admin'],
  },
  {
    method: 'GET',
    path: '/v1/discount-codes/{code}',
    operationId: 'getDiscountCode',
    scope: 'discounts:manage',
    roles: ['agent', 'admin'],
  },
];

/** Boarding data: drivers, agents and admins, never customers; each row is also served under `/api`. */
const boardingTable = [
  {
    method: 'GET',
    path: '/v1/trips/{trip_id}/ticket-revocations',
    operationId: 'listTripTicketRevocations',
    scope: 'trips:read',
  },
  {
    method: 'POST',
    path: '/v1/trips/{trip_id}/boardings',
    operationId: 'recordBoarding',
    scope: 'boarding:write',
  },
  {
    method: 'GET',
    path: '/v1/trips/{trip_id}/manifest',
    operationId: 'getTripManifest',
    scope: 'trips:read',
  },
];

/**
 * Partners' webhook endpoints: the scope alone, any role or none (a partner's service client); only the caller
 * that registered an endpoint (and admins) reach it. Each row is also served under `/api`.
 */
const webhookTable = [
  { method: 'POST', path: '/v1/webhooks/endpoints', operationId: 'createWebhookEndpoint' },
  { method: 'GET', path: '/v1/webhooks/endpoints', operationId: 'listWebhookEndpoints' },
  { method: 'GET', path: '/v1/webhooks/endpoints/{endpoint_id}', operationId: 'getWebhookEndpoint' },
  { method: 'PATCH', path: '/v1/webhooks/endpoints/{endpoint_id}', operationId: 'updateWebhookEndpoint' },
  { method: 'DELETE', path: '/v1/webhooks/endpoints/{endpoint_id}', operationId: 'deleteWebhookEndpoint' },
  {
    method: 'POST',
    path: '/v1/webhooks/endpoints/{endpoint_id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
  },
  { method: 'POST', path: '/v1/webhooks/endpoints/{endpoint_id}/ping', operationId: 'pingWebhookEndpoint' },
  {
    method: 'GET',
    path: '/v1/webhooks/endpoints/{endpoint_id}/deliveries',
    operationId: 'listWebhookDeliveries',
  },
  {
    method: 'GET',
    path: '/v1/webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}',
    operationId: 'getWebhookDelivery',
  },
  {
    method: 'POST',
    path: '/v1/webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver',
    operationId: 'redeliverWebhookDelivery',
  },
];

/** Customers act only on their own bookings and profile; the route catalogue is open to every role. */
const ownedOperationIds = [
  'createBooking',
  'listBookings',
  'getBooking',
  'updateBooking',
  'cancelBooking',
  'cancelPassengers',
  'confirmPayment',
  'getUser',
  'getCurrentUser',
  'listBookingTickets',
  'getTicketPdf',
  'createRefundQuote',
  'getRefundQuote',
];

const publicOperations = [
  { method: 'POST', path: '/api/auth/login', operationId: 'login' },
  { method: 'POST', path: '/api/auth/refresh', operationId: 'refresh' },
  { method: 'GET', path: '/healthz', operationId: 'checkLiveness' },
  { method: 'GET', path: '/readyz', operationId: 'checkReadiness' },
  { method: 'GET', path: '/.well-known/openid-configuration', operationId: 'getOpenIdConfiguration' },
  { method: 'GET', path: '/.well-known/jwks.json', operationId: 'getJsonWebKeySet' },
  { method: 'GET', path: '/v1/tickets/jwks.json', operationId: 'getTicketKeySet' },
  // The card processor's webhooks: the signature over the body is the caller's credential.
  { method: 'POST', path: '/v1/payments/stripe/events', operationId: 'receiveStripeEvent' },
];

/** Operator tools (Temporal's codec-server protocol): staff only, no scope beyond the role. */
const operatorOperations = [
  { method: 'POST', path: '/codec/decode', operationId: 'decodePayloads' },
  { method: 'POST', path: '/codec/encode', operationId: 'encodePayloads' },
];

const serviceOperationIds = ['checkLiveness', 'checkReadiness', 'getOpenIdConfiguration', 'getJsonWebKeySet'];

/** Properties of each schema exactly as the field list names them. */
const schemaFields: Record<string, string[]> = {
  Money: ['amount_minor', 'currency'],
  Stop: ['code', 'name', 'city', 'country_code', 'time_zone'],
  Route: [
    'id',
    'code',
    'origin',
    'destination',
    'intermediate_stops',
    'operator_name',
    'distance_km',
    'typical_duration',
    'matched_stops',
  ],
  SeatMapEntry: ['seat_number', 'fare_class', 'status'],
  TripAvailability: [
    'trip_id',
    'departure_time',
    'arrival_time',
    'seats_total',
    'seats_free',
    'lowest_price',
    'seat_map',
    'party_fares',
  ],
  PartyFare: ['fare_class', 'seats_free', 'total', 'lines'],
  PartyFareLine: ['passenger_type', 'count', 'unit_price', 'amount'],
  RouteAvailability: ['route_id', 'date', 'trips'],
  DiscountCode: [
    'code',
    'kind',
    'value',
    'currency',
    'valid_from',
    'valid_until',
    'route_ids',
    'max_usages',
    'usages',
    'remaining',
    'created_at',
  ],
  CreateDiscountCodeRequest: [
    'code',
    'kind',
    'value',
    'currency',
    'valid_from',
    'valid_until',
    'route_ids',
    'max_usages',
  ],
  PassengerType: [
    'code',
    'name',
    'min_age',
    'max_age',
    'price_rule',
    'takes_seat',
    'birth_date_required',
    'requires_companion',
  ],
  PassengerPriceRule: ['share_percent', 'per_segment'],
  Passenger: [
    'id',
    'first_name',
    'last_name',
    'email',
    'phone',
    'seat_number',
    'fare_class',
    'passenger_type',
    'birth_date',
  ],
  PriceLine: ['passenger_id', 'seat_number', 'fare_class', 'amount', 'passenger_type', 'discount'],
  PriceBreakdown: ['lines', 'total', 'discount'],
  PaymentSummary: ['status', 'method', 'last_attempt_at', 'decline_reason', 'action'],
  PaymentAction: ['status', 'intent_id', 'client_secret', 'next_action'],
  PaymentNextAction: ['type', 'redirect_url'],
  Booking: [
    'id',
    'customer_id',
    'trip_id',
    'route_id',
    'status',
    'passengers',
    'contact_email',
    'contact_phone',
    'price',
    'amount_paid',
    'amount_refunded',
    'hold_expires_at',
    'payment',
    'departure_time',
    'created_at',
    'updated_at',
    'cancelled_at',
    'cancellation_reason',
    'version',
    'segment',
    'cancelled_passengers',
  ],
  CancelledPassenger: ['passenger_id', 'cancelled_at', 'paid', 'refund'],
  CancelPassengersRequest: ['passenger_ids', 'quote_id', 'reason'],
  User: ['id', 'email', 'display_name', 'phone', 'roles', 'created_at'],
  PassengerInput: [
    'first_name',
    'last_name',
    'email',
    'phone',
    'seat_number',
    'fare_class',
    'passenger_type',
    'birth_date',
  ],
  CreateBookingRequest: [
    'trip_id',
    'passengers',
    'contact_email',
    'contact_phone',
    'boarding_stop',
    'alighting_stop',
    'discount_code',
    'expected_total',
  ],
  BookingList: ['bookings', 'next_page_token'],
  SeatChange: ['passenger_id', 'seat_number', 'fare_class'],
  PassengerUpdate: ['passenger_id', 'first_name', 'last_name', 'email', 'phone'],
  UpdateBookingRequest: [
    'seat_changes',
    'add_passengers',
    'passenger_updates',
    'boarding_stop',
    'alighting_stop',
    'expected_total',
  ],
  CancelBookingRequest: ['reason'],
  ConfirmPaymentRequest: ['payment_token', 'payment_method'],
  RouteList: ['routes', 'next_page_token'],
  RecordBoardingRequest: ['ticket', 'stop', 'device_id'],
  Boarding: ['booking_id', 'passenger_id', 'first_name', 'last_name', 'seat_number', 'stop', 'boarded_at'],
  ManifestPassenger: [
    'passenger_id',
    'booking_id',
    'first_name',
    'last_name',
    'seat_number',
    'boarding_stop',
    'alighting_stop',
    'status',
    'boarded_at',
    'boarded_stop',
  ],
  TripManifest: ['passengers', 'next_page_token'],
  LoginRequest: ['email', 'password'],
  RefreshRequest: ['refresh_token'],
  TokenResponse: ['access_token', 'token_type', 'expires_in', 'refresh_token'],
  PayloadList: ['payloads'],
  Ticket: [
    'id',
    'booking_id',
    'passenger_id',
    'passenger_name',
    'trip_id',
    'seat_number',
    'segment',
    'status',
    'valid_from',
    'valid_until',
    'issued_at',
    'revoked_at',
    'revoked_reason',
    'qr_payload',
  ],
  Payload: ['metadata', 'data'],
};

/** Fields the field list marks with (*): and no others. */
const sensitiveFields: Record<string, string[]> = {
  Passenger: ['first_name', 'last_name', 'email', 'phone', 'birth_date'],
  PaymentSummary: ['method'],
  Booking: ['contact_email', 'contact_phone'],
  User: ['email', 'display_name', 'phone'],
  PassengerInput: ['first_name', 'last_name', 'email', 'phone', 'birth_date'],
  CreateBookingRequest: ['contact_email', 'contact_phone'],
  PassengerUpdate: ['first_name', 'last_name', 'email', 'phone'],
  ConfirmPaymentRequest: ['payment_token', 'payment_method'],
  PaymentAction: ['client_secret'],
  RecordBoardingRequest: ['ticket'],
  Boarding: ['first_name', 'last_name'],
  WebhookEndpointSecret: ['secret'],
  ManifestPassenger: ['first_name', 'last_name'],
  LoginRequest: ['email', 'password'],
  RefreshRequest: ['refresh_token'],
  TokenResponse: ['access_token', 'refresh_token'],
  PayloadList: ['payloads'],
  Ticket: ['passenger_name', 'qr_payload'],
};

/** Server-owned booking fields a client must never be able to set. */
const serverOwnedFields = [
  'id',
  'customer_id',
  'status',
  'price',
  'amount_paid',
  'amount_refunded',
  'payment',
  'hold_expires_at',
  'created_at',
  'updated_at',
  'cancelled_at',
  'version',
];

function asNode(value: unknown): Node {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`expected an object, got ${JSON.stringify(value)}`);
  }
  return value as Node;
}

/** Follows a local `$ref` (JSON pointer into this document) until a concrete node is reached. */
function resolve(value: unknown): Node {
  let node = asNode(value);
  while (typeof node.$ref === 'string') {
    const pointer = node.$ref;
    if (!pointer.startsWith('#/')) throw new Error(`only local references are expected, got ${pointer}`);
    node = pointer
      .slice(2)
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Node>((parent, segment) => asNode(parent[segment]), openApiDocument as Node);
  }
  return node;
}

function schema(name: string): Node {
  return asNode(asNode(openApiDocument.components.schemas)[name]);
}

function operationNode(operation: { method: string; documentedPath: string }): Node {
  return asNode(openApiDocument.paths[operation.documentedPath][operation.method.toLowerCase()]);
}

function findOperation(operationId: string): OpenApiOperation {
  const operation = openApiOperations.find((candidate) => candidate.operationId === operationId);
  if (!operation) throw new Error(`operation ${operationId} is missing`);
  return operation;
}

function withTwins(operationId: string): OpenApiOperation[] {
  return [findOperation(operationId), findOperation(`${operationId}Api`)];
}

function responseOf(operationId: string, status: string): Node {
  const responses = asNode(operationNode(findOperation(operationId)).responses);
  return resolve(responses[status]);
}

function headerNames(response: Node): string[] {
  return Object.keys(asNode(response.headers ?? {}));
}

function parameterNamed(operationId: string, name: string): Node | undefined {
  const parameters = (operationNode(findOperation(operationId)).parameters ?? []) as unknown[];
  return parameters.map(resolve).find((parameter) => parameter.name === name);
}

/** Every object schema reachable from a request body, through properties, array items and compositions. */
function objectSchemasUnder(value: unknown, seen = new Set<Node>()): Node[] {
  const node = resolve(value);
  if (seen.has(node)) return [];
  seen.add(node);
  const found: Node[] = node.type === 'object' || node.properties ? [node] : [];
  const children = [
    ...Object.values(asNode(node.properties ?? {})),
    ...(node.items ? [node.items] : []),
    ...(['allOf', 'oneOf', 'anyOf'] as const).flatMap((keyword) => (node[keyword] ?? []) as unknown[]),
  ];
  return [...found, ...children.flatMap((child) => objectSchemasUnder(child, seen))];
}

/**
 * The request bodies the server reads by their schema. Stripe's events are Stripe's: read as raw bytes for their
 * signature and never by the schema, which names only the fields the service uses of the many Stripe sends.
 */
function requestBodySchemas(): { operationId: string; schema: Node }[] {
  return openApiOperations.flatMap((operation) => {
    const requestBody = operationNode(operation).requestBody;
    if (requestBody === undefined || operation.canonicalOperationId === 'receiveStripeEvent') return [];
    const content = asNode(resolve(requestBody).content);
    return Object.values(content).map((mediaType) => ({
      operationId: operation.operationId,
      schema: resolve(asNode(mediaType).schema),
    }));
  });
}

describe('OpenAPI document information', () => {
  it('names whom to contact', () => {
    const contact = asNode(openApiDocument.info.contact);
    expect(contact.name).toEqual(expect.any(String));
    expect(contact.email ?? contact.url).toEqual(expect.any(String));
  });

  it('offers first a base URL a generated client can call: the embedded stack, on the port npm start serves', () => {
    const servers = openApiDocument.servers as { url: string; description?: string }[];
    const { httpPort } = loadStackConfig({}, '/nonexistent');
    expect(servers[0].url).toBe(`http://localhost:${httpPort}`);
    expect(new URL(servers[0].url).port).toBe(String(httpPort));
    for (const server of servers) expect(server.description).toEqual(expect.any(String));
  });
});

describe('OpenAPI operations', () => {
  it('documents exactly the authorization table, the operator tools and the public operations, each once', () => {
    const expected = [
      ...authorizationTable.map(({ method, path, operationId }) => `${method} ${path} ${operationId}`),
      ...boardingTable.map(({ method, path, operationId }) => `${method} ${path} ${operationId}`),
      ...webhookTable.map(({ method, path, operationId }) => `${method} ${path} ${operationId}`),
      ...publicOperations.map(({ method, path, operationId }) => `${method} ${path} ${operationId}`),
      ...operatorOperations.map(({ method, path, operationId }) => `${method} ${path} ${operationId}`),
    ].sort();
    const documented = documentedOperations.map(
      (operation) => `${operation.method} ${operation.path} ${operation.operationId}`,
    );
    expect(documented.sort()).toEqual(expected);
  });

  it('serves the authorization table under /api too, and nothing else beyond the document', () => {
    const versionedPublic = publicOperations.filter(({ path }) => path.startsWith('/v1/'));
    const aliases = [...authorizationTable, ...boardingTable, ...webhookTable, ...versionedPublic].map(
      ({ method, path, operationId }) => `${method} ${path.replace(/^\/v1\//, '/api/')} ${operationId}Api`,
    );
    const served = openApiOperations.map(
      (operation) => `${operation.method} ${operation.path} ${operation.operationId}`,
    );
    const documented = documentedOperations.map(
      (operation) => `${operation.method} ${operation.path} ${operation.operationId}`,
    );
    expect(served.sort()).toEqual([...documented, ...aliases].sort());
  });

  it.each(authorizationTable)('$method $path and its /api twin ask for $scope and its roles', (row) => {
    const [versioned, twin] = withTwins(row.operationId);
    expect(twin.path).toBe(row.path.replace(/^\/v1\//, '/api/'));
    expect(twin.canonicalOperationId).toBe(row.operationId);
    expect(versioned.canonicalOperationId).toBe(row.operationId);
    for (const operation of [versioned, twin]) {
      expect(operation.public).toBe(false);
      expect(operation.scopes).toEqual([row.scope]);
      expect(operation.roles).toEqual('roles' in row ? row.roles : everyRole);
      expect(operation.ownership).toBe(ownedOperationIds.includes(row.operationId) ? 'owner-or-staff' : null);
      expect(operationNode(operation).security).toEqual([
        { oauth2: [row.scope] },
        { openIdConnect: [row.scope] },
        { bearerAuth: [row.scope] },
      ]);
    }
  });

  it.each(boardingTable)(
    '$method $path and its /api twin ask for $scope from drivers, agents and admins',
    (row) => {
      for (const operation of withTwins(row.operationId)) {
        expect(operation.public).toBe(false);
        expect(operation.scopes).toEqual([row.scope]);
        expect([...operation.roles].sort()).toEqual(['admin', 'agent', 'driver']);
        expect(operation.ownership).toBeNull();
      }
    },
  );

  it.each(webhookTable)('$method $path and its /api twin ask for webhooks:manage from any role', (row) => {
    for (const operation of withTwins(row.operationId)) {
      expect(operation.public).toBe(false);
      expect(operation.scopes).toEqual(['webhooks:manage']);
      expect(operation.roles).toEqual([]);
      expect(operation.ownership).toBe('owner-or-admin');
      expect(operationNode(operation).tags).toEqual(['Webhooks']);
    }
  });

  it.each(publicOperations)('$method $path is public', ({ operationId }) => {
    const operation = findOperation(operationId);
    expect(operation.public).toBe(true);
    expect(operationNode(operation).security).toEqual([]);
    expect(operationNode(operation)['x-roles']).toBeUndefined();
    expect(operationNode(operation)['x-ownership']).toBeUndefined();
  });

  it.each(operatorOperations)('$method $path is for agents and admins only, by role', ({ operationId }) => {
    const operation = findOperation(operationId);
    expect(operation.public).toBe(false);
    expect(operation.scopes).toEqual([]);
    expect(operation.roles).toEqual(['agent', 'admin']);
    expect(operation.ownership).toBeNull();
    expect(operationNode(operation).security).toEqual([
      { oauth2: [] },
      { openIdConnect: [] },
      { bearerAuth: [] },
    ]);
    expect(operationNode(operation).tags).toEqual(['Operator tools']);
  });

  it('defines exactly the scopes the operations use, in each OAuth 2.0 flow', () => {
    const securitySchemes = asNode(openApiDocument.components.securitySchemes);
    const flows = asNode(asNode(securitySchemes.oauth2).flows);
    const usedScopes = [...new Set(openApiOperations.flatMap((operation) => operation.scopes))].sort();
    expect(Object.keys(flows).sort()).toEqual(['authorizationCode', 'clientCredentials']);
    for (const flow of Object.values(flows)) {
      const definedScopes = asNode(asNode(flow).scopes);
      expect(Object.keys(definedScopes).sort()).toEqual(usedScopes);
      for (const description of Object.values(definedScopes)) expect(description).toEqual(expect.any(String));
    }
    expect(asNode(securitySchemes.openIdConnect).type).toBe('openIdConnect');
  });

  it("points the OAuth 2.0 flows at the embedded authorization server's endpoints, and offers a bearer scheme", () => {
    const securitySchemes = asNode(openApiDocument.components.securitySchemes);
    const flows = asNode(asNode(securitySchemes.oauth2).flows);
    expect(asNode(flows.authorizationCode)).toMatchObject({
      authorizationUrl: '/oidc/authorize',
      tokenUrl: '/oidc/token',
      refreshUrl: '/oidc/token',
    });
    expect(asNode(flows.clientCredentials)).toMatchObject({ tokenUrl: '/oidc/token' });
    expect(asNode(securitySchemes.openIdConnect).openIdConnectUrl).toBe('/.well-known/openid-configuration');
    expect(asNode(securitySchemes.bearerAuth)).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });
});

describe('OpenAPI schemas', () => {
  it.each(Object.entries(schemaFields))('%s has exactly the field list properties', (name, fields) => {
    expect(Object.keys(asNode(schema(name).properties)).sort()).toEqual([...fields].sort());
  });

  it('marks exactly the sensitive fields of the field list with x-sensitive', () => {
    const schemas = asNode(openApiDocument.components.schemas);
    const marked: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(schemas)) {
      const properties = Object.entries(asNode(asNode(value).properties ?? {}));
      const sensitive = properties.filter(([, property]) => asNode(property)['x-sensitive'] === true);
      if (sensitive.length > 0) marked[name] = sensitive.map(([field]) => field).sort();
    }
    const expected = Object.fromEntries(
      Object.entries(sensitiveFields).map(([name, fields]) => [name, [...fields].sort()]),
    );
    expect(marked).toEqual(expected);
  });

  it('rejects unknown properties in every request body object', () => {
    const bodies = requestBodySchemas();
    expect(bodies.map(({ operationId }) => operationId)).toEqual(
      expect.arrayContaining(['createBooking', 'updateBooking', 'cancelBooking', 'confirmPayment', 'login']),
    );
    for (const { schema: bodySchema } of bodies) {
      for (const objectSchema of objectSchemasUnder(bodySchema)) {
        // A map (the codec protocol's payload metadata) has no named properties, only typed values.
        const isMap =
          objectSchema.properties === undefined && typeof objectSchema.additionalProperties === 'object';
        if (!isMap) expect(objectSchema.additionalProperties).toBe(false);
      }
    }
  });

  it('never accepts server-owned booking fields in a request', () => {
    const requestFields = requestBodySchemas().flatMap(({ schema: bodySchema }) =>
      objectSchemasUnder(bodySchema).flatMap((objectSchema) =>
        Object.keys(asNode(objectSchema.properties ?? {})),
      ),
    );
    expect(requestFields.filter((field) => serverOwnedFields.includes(field))).toEqual([]);
  });

  it('lists every error code of the field list in Problem.code', () => {
    const problemCode = resolve(asNode(schema('Problem').properties).code);
    expect([...(problemCode.enum as string[])].sort()).toEqual([...errorCodes].sort());
  });

  it('bounds passengers and page sizes as the design says', () => {
    const passengers = asNode(asNode(schema('CreateBookingRequest').properties).passengers);
    expect([passengers.minItems, passengers.maxItems]).toEqual([1, 9]);
    const pageSize = asNode(resolve(asNode(openApiDocument.components.parameters).PageSize).schema);
    expect([pageSize.minimum, pageSize.maximum, pageSize.default]).toEqual([1, 100, 20]);
  });
});

describe('OpenAPI responses and headers', () => {
  const tableOperationIds = [...authorizationTable, ...boardingTable, ...webhookTable].flatMap(
    ({ operationId }) => [operationId, `${operationId}Api`],
  );

  it.each([
    ...tableOperationIds,
    'login',
    'refresh',
    ...operatorOperations.map(({ operationId }) => operationId),
  ])('%s answers every 4xx and 5xx with application/problem+json', (operationId) => {
    const responses = asNode(operationNode(findOperation(operationId)).responses);
    const errorStatuses = Object.keys(responses).filter((status) => /^[45]/.test(status));
    expect(errorStatuses).toEqual(expect.arrayContaining(['400', '401', '429', '500', '503']));
    for (const status of errorStatuses) {
      const content = asNode(resolve(responses[status]).content);
      expect(Object.keys(content)).toEqual(['application/problem+json']);
      expect(asNode(content['application/problem+json']).schema).toEqual({
        $ref: '#/components/schemas/Problem',
      });
    }
  });

  it.each(serviceOperationIds)('%s documents its errors too', (operationId) => {
    const responses = asNode(operationNode(findOperation(operationId)).responses);
    const problemStatuses = Object.keys(responses).filter(
      (status) => asNode(resolve(responses[status]).content ?? {})['application/problem+json'] !== undefined,
    );
    expect(problemStatuses).toContain('405');
  });

  it('returns the statuses each operation can produce', () => {
    const statuses = (operationId: string) =>
      Object.keys(asNode(operationNode(findOperation(operationId)).responses));
    expect(statuses('createBooking')).toEqual(expect.arrayContaining(['201', '409', '413', '415', '422']));
    expect(statuses('confirmPayment')).toEqual(expect.arrayContaining(['200', '402', '409', '422']));
    expect(statuses('updateBooking')).toEqual(expect.arrayContaining(['200', '409', '412', '413', '415']));
    expect(statuses('getBooking')).toEqual(expect.arrayContaining(['200', '404']));
    expect(statuses('checkReadiness')).toEqual(expect.arrayContaining(['200', '503']));
  });

  // A generated client types each method by one 2xx answer: every JSON 2xx of an operation that can answer 202 shares
  // one schema, so the method's return type holds a real 202 as well as the booking.
  it.each([
    'createBooking',
    'getBooking',
    'updateBooking',
    'cancelBooking',
    'cancelPassengers',
    'confirmPayment',
    'listBookingTickets',
  ])('%s gives its 2xx answers one body schema', (operationId) => {
    const responses = asNode(operationNode(findOperation(operationId)).responses);
    const successes = Object.keys(responses).filter((status) => status.startsWith('2'));
    expect(successes).toContain('202');
    const schemas = successes.map(
      (status) => asNode(asNode(resolve(responses[status]).content)['application/json']).schema,
    );
    const shared = operationId === 'listBookingTickets' ? 'TicketListResult' : 'BookingResult';
    expect(schemas).toEqual(successes.map(() => ({ $ref: `#/components/schemas/${shared}` })));
  });

  it('tells a booking from a BookingProcessing by status: every booking status maps to Booking', () => {
    const result = schema('BookingResult');
    expect(result.oneOf).toEqual([
      { $ref: '#/components/schemas/Booking' },
      { $ref: '#/components/schemas/BookingProcessing' },
    ]);
    const bookingStatuses = schema('BookingStatus').enum as string[];
    expect(result.discriminator).toEqual({
      propertyName: 'status',
      mapping: {
        ...Object.fromEntries(bookingStatuses.map((status) => [status, '#/components/schemas/Booking'])),
        PROCESSING: '#/components/schemas/BookingProcessing',
      },
    });
    expect(asNode(asNode(schema('BookingProcessing').properties).status).enum).toEqual(['PROCESSING']);
  });

  it('takes Idempotency-Key on booking creation and payment, and If-Match on update', () => {
    for (const operationId of ['createBooking', 'createBookingApi', 'confirmPayment', 'confirmPaymentApi']) {
      expect(parameterNamed(operationId, 'Idempotency-Key')).toMatchObject({ in: 'header' });
    }
    for (const operationId of ['updateBooking', 'updateBookingApi']) {
      expect(parameterNamed(operationId, 'If-Match')).toMatchObject({ in: 'header', required: true });
    }
  });

  it('accepts and returns X-Request-Id on every REST operation', () => {
    for (const operation of openApiOperations) {
      if (serviceOperationIds.includes(operation.operationId)) continue;
      expect(parameterNamed(operation.operationId, 'X-Request-Id')).toMatchObject({ in: 'header' });
      const responses = asNode(operationNode(operation).responses);
      for (const response of Object.values(responses))
        expect(headerNames(resolve(response))).toContain('X-Request-Id');
    }
  });

  it('gives ETag, If-Match and a booking’s version one form: the version from 1, at most 15 digits, in quotes', () => {
    const ajv = createOpenApiAjv();
    const components = openApiDocument.components;
    const etag = ajv.compile(anchorSchema(asNode(components.headers.ETag).schema) as object);
    const ifMatch = ajv.compile(anchorSchema(asNode(components.parameters.IfMatch).schema) as object);
    const version = ajv.compile(anchorSchema(asNode(schema('Booking').properties).version) as object);
    for (const number of [0, 1, 7, 10, 999_999_999_999_999, 1_000_000_000_000_000]) {
      const valid = version(number);
      expect({ number, etag: etag(`"${number}"`), ifMatch: ifMatch(`"${number}"`) }).toEqual({
        number,
        etag: valid,
        ifMatch: valid,
      });
    }
    expect([version(1), version(999_999_999_999_999), version(0)]).toEqual([true, true, false]);
    for (const value of ['W/"1"', '1', '"01"', '""', '"1", "2"']) {
      expect({ value, etag: etag(value), ifMatch: ifMatch(value) }).toEqual({
        value,
        etag: false,
        ifMatch: false,
      });
    }
    expect([ifMatch('*'), etag('*')]).toEqual([true, false]);
  });

  it('documents 428 for a change without If-Match', () => {
    for (const operationId of ['updateBooking', 'updateBookingApi']) {
      expect(Object.keys(asNode(operationNode(findOperation(operationId)).responses))).toContain('428');
    }
  });

  it('sends ETag with bookings, Location on creation, rate-limit headers on 429, Retry-After on 503, Allow on 405', () => {
    expect(headerNames(responseOf('getBooking', '200'))).toContain('ETag');
    expect(headerNames(responseOf('createBooking', '201'))).toEqual(
      expect.arrayContaining(['Location', 'ETag']),
    );
    expect(headerNames(responseOf('getBooking', '429'))).toEqual(
      expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']),
    );
    expect(headerNames(responseOf('getBooking', '503'))).toContain('Retry-After');
    expect(headerNames(responseOf('getBooking', '405'))).toContain('Allow');
    expect(headerNames(responseOf('createBooking', '409'))).toContain('Retry-After');
  });
});
