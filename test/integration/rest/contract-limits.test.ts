// Walks the OpenAPI document: for every operation, a request at its schemas' limits is served and one just
// outside a limit is refused with 400 VALIDATION_FAILED naming the field, on the real REST app and saga.
import { randomUUID } from 'node:crypto';
import type { ValidateFunction } from 'ajv/dist/2020';
import {
  anchorSchema,
  createOpenApiAjv,
  operationDefinition,
  readRequestBody,
  resolveDocumentReference,
} from '../../../src/api/rest/openapi-validation';
import type { BookingView } from '../../../src/application/interface';
import type { Actor } from '../../../src/domain/actor';
import {
  openApiDocument,
  openApiOperations,
  type OpenApiOperation,
} from '../../../src/contracts/openapi-document';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, type TestTrip } from '../../support/trips';
import { observe, type ObservedResponse } from '../../support/rest-contract';
import { composeTestApi, startServer, type RunningServer } from '../../support/rest-app';
import { insertLoginUser, type TestUser } from '../../support/users';
import { stripeSignature, webhookSecret as newWebhookSecret } from '../../support/payment-events';
import { mintToken } from '../../support/identity-provider';

// The saga's workers (a webpack bundle) start first; then a few hundred requests, most refused before any work.
jest.setTimeout(300_000);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;
type Location = 'path' | 'query' | 'header';

interface RequestParts {
  path: Record<string, string>;
  query: Record<string, string>;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body?: Json;
  /** Sent instead of `body` when set: the same JSON padded to a chosen size. */
  rawBody?: string;
}

interface Parameter {
  name: string;
  in: Location | 'cookie';
  schema: unknown;
}

/** A value in one place of a request: a parameter, or a JSON pointer into the body. */
type Place = { kind: 'parameter'; parameter: Parameter } | { kind: 'body'; pointer: (string | number)[] };

interface Probe {
  place: Place;
  field: string;
  label: string;
  value: Json;
}

/**
 * Values the server issues (a page token, an ETag): their limits are probed, but a valid one comes only from
 * the server, so requests at the limits keep the issued value (or leave an optional one out).
 */
const issuedParameters = new Set(['page_token', 'If-Match']);
/** Dates around the documented range and the years PostgreSQL and JavaScript read differently. */
const dateCandidates = ['0000-12-31', '0001-01-01', '0054-10-15', '0099-12-31', '9999-12-31', '2031-02-29'];
/** Answers that mean "refused as malformed"; anything else below 500 is the operation's own business. */
const malformedStatuses = new Set([400, 413, 415, 422]);

const parameterAjv = createOpenApiAjv({ coerceTypes: true });
const bodyAjv = createOpenApiAjv();

function resolve(node: unknown): Schema {
  return resolveDocumentReference(openApiDocument, node) as Schema;
}

function parametersOf(operation: OpenApiOperation): Parameter[] {
  const parameters = (operationDefinition(operation).parameters ?? []) as unknown[];
  return parameters.map((parameter) => resolve(parameter) as unknown as Parameter);
}

function requestBodyLimit(operation: OpenApiOperation): number | undefined {
  const reference = operationDefinition(operation).requestBody;
  if (reference === undefined) return undefined;
  const limit = resolve(reference)['x-max-body-bytes'];
  if (typeof limit !== 'number')
    throw new Error(`${operation.operationId}: request body states no x-max-body-bytes`);
  return limit;
}

/** The document as the oracle: does it accept this request? */
function documentJudge(operation: OpenApiOperation) {
  const parameterValidators = new Map<string, ValidateFunction>(
    parametersOf(operation).map((parameter) => [
      `${parameter.in}:${parameter.name.toLowerCase()}`,
      parameterAjv.compile({
        type: 'object',
        properties: { value: anchorSchema(parameter.schema) },
        required: ['value'],
      }),
    ]),
  );
  const body = readRequestBody(operation);
  const bodyValidator = body === undefined ? undefined : bodyAjv.compile(anchorSchema(body.schema) as object);
  const parameterAccepts = (parameter: Parameter, value: Json) =>
    parameterValidators.get(`${parameter.in}:${parameter.name.toLowerCase()}`)!({ value });
  const bodyAccepts = (value: Json) => bodyValidator === undefined || bodyValidator(structuredClone(value));
  return (parts: RequestParts): boolean =>
    parametersOf(operation).every((parameter) => {
      const value = valueOfParameter(parts, parameter);
      return value === undefined || parameterAccepts(parameter, value);
    }) &&
    (parts.body === undefined || bodyAccepts(parts.body));
}

function partOf(parts: RequestParts, location: Location | 'cookie'): Record<string, string> {
  if (location === 'path') return parts.path;
  if (location === 'query') return parts.query;
  if (location === 'header') return parts.headers;
  throw new Error('cookie parameters are not used');
}

function valueOfParameter(parts: RequestParts, parameter: Parameter): string | undefined {
  return partOf(parts, parameter.in)[
    parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name
  ];
}

function withValue(parts: RequestParts, place: Place, value: Json): RequestParts {
  const copy: RequestParts = structuredClone(parts);
  if (place.kind === 'parameter') {
    const { parameter } = place;
    const key = parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name;
    partOf(copy, parameter.in)[key] = typeof value === 'string' ? value : JSON.stringify(value);
    return copy;
  }
  if (place.pointer.length === 0) {
    copy.body = value;
    return copy;
  }
  let node = copy.body as Record<string | number, Json>;
  for (const segment of place.pointer.slice(0, -1)) node = node[segment] as Record<string | number, Json>;
  node[place.pointer[place.pointer.length - 1]] = value;
  return copy;
}

/** `['passengers', 0, 'email']` → `passengers[0].email`, the contract's notation. */
function fieldName(place: Place): string {
  if (place.kind === 'parameter') return place.parameter.name;
  return place.pointer.reduce<string>(
    (path, segment) =>
      typeof segment === 'number' ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment,
    '',
  );
}

function length(value: string): number {
  return [...value].length;
}

/** Strings of `size` characters made from `base`, most like it first; the caller keeps the first the schema takes. */
function stringsOfSize(base: string, size: number): string[] {
  const shapes: string[] = [];
  if (length(base) >= size) shapes.push([...base].slice(0, size).join(''), [...base].slice(-size).join(''));
  const missing = Math.max(0, size - length(base));
  for (const filler of ['x', '9', 'a', 'A']) {
    const padding = filler.repeat(missing);
    if (missing > 0)
      shapes.push(base + padding, padding + base, base.slice(0, -1) + padding + base.slice(-1));
    shapes.push(filler.repeat(size));
  }
  return shapes.filter((shape) => length(shape) === size);
}

/** The smallest value a schema takes: what fills an array or an object up to its maximum. */
function minimalValue(node: unknown): Json {
  const schema = resolve(node);
  if (schema.type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    return Object.fromEntries(
      ((schema.required ?? []) as string[]).map((name) => [name, minimalValue(properties[name])]),
    );
  }
  if (schema.type === 'array') return [];
  if (schema.format === 'byte') return 'e30=';
  if (typeof schema.example === 'string') return schema.example;
  if (Array.isArray(schema.enum)) return schema.enum[0] as Json;
  return 'a';
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every place of a body, with its schema, following the value: first array items and present properties. */
function bodyPlaces(node: unknown, value: Json, pointer: (string | number)[] = []) {
  const schema = resolve(node);
  const places: { place: Place; schema: Schema; value: Json }[] = [
    { place: { kind: 'body', pointer }, schema, value },
  ];
  if (Array.isArray(value) && schema.items !== undefined && value.length > 0) {
    places.push(...bodyPlaces(schema.items, value[0], [...pointer, 0]));
  }
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    const extra = Object.keys(value).find((key) => !(key in properties));
    for (const [name, item] of Object.entries(value)) {
      if (name in properties) places.push(...bodyPlaces(properties[name], item, [...pointer, name]));
    }
    if (extra !== undefined && typeof schema.additionalProperties === 'object') {
      places.push(...bodyPlaces(schema.additionalProperties, value[extra], [...pointer, extra]));
    }
  }
  return places;
}

/** Values just outside each limit of a schema, and the troublesome texts any string may meet. */
function candidatesFor(
  schema: Schema,
  value: Json,
  location: Location | 'body',
): { label: string; value: Json }[] {
  const candidates: { label: string; value: Json }[] = [];
  if (typeof value === 'string') {
    if (typeof schema.maxLength === 'number') {
      const size = schema.maxLength + 1;
      candidates.push({ label: `maxLength ${schema.maxLength} + 1`, value: stringsOfSize(value, size)[0] });
    }
    if (typeof schema.minLength === 'number' && schema.minLength > 0) {
      candidates.push({
        label: `minLength ${schema.minLength} - 1`,
        value: [...value].slice(0, schema.minLength - 1).join(''),
      });
    }
    if (Array.isArray(schema.enum)) candidates.push({ label: 'not one of the enum', value: 'ECONOMY' });
    if (schema.format === 'date') {
      candidates.push(...dateCandidates.map((date) => ({ label: `date ${date}`, value: date })));
    }
    // HTTP carries no control characters in header values, and trims their spaces.
    if (location !== 'header') {
      const middle = Math.min(1, value.length);
      const inserted = (text: string) => value.slice(0, middle) + text + value.slice(middle);
      candidates.push(
        { label: 'U+0000 inside', value: inserted('\u0000') },
        { label: 'U+0001 inside', value: inserted('\u0001') },
        { label: 'a line break inside', value: inserted('\n') },
        { label: 'spaces only', value: ' ' },
      );
    }
  }
  if (typeof value === 'number' || schema.type === 'integer') {
    if (typeof schema.maximum === 'number')
      candidates.push({ label: 'maximum + 1', value: schema.maximum + 1 });
    if (typeof schema.minimum === 'number')
      candidates.push({ label: 'minimum - 1', value: schema.minimum - 1 });
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number') {
      // Grown with the smallest items, so the body stays far below its byte limit.
      const grown = [...value];
      while (grown.length <= schema.maxItems) grown.push(minimalValue(schema.items));
      candidates.push({ label: `maxItems ${schema.maxItems} + 1`, value: grown });
    }
    if (typeof schema.minItems === 'number' && schema.minItems > 0) {
      candidates.push({
        label: `minItems ${schema.minItems} - 1`,
        value: value.slice(0, schema.minItems - 1),
      });
    }
  }
  if (isObject(value) && typeof schema.maxProperties === 'number') {
    const grown = { ...value };
    for (let index = 0; Object.keys(grown).length <= schema.maxProperties; index += 1) {
      grown[`extra${index}`] = minimalValue(schema.additionalProperties);
    }
    candidates.push({ label: `maxProperties ${schema.maxProperties} + 1`, value: grown });
  }
  return candidates;
}

/** Every probe of an operation from one well-formed request: one place changed at a time. */
function probesOf(operation: OpenApiOperation, parts: RequestParts): Probe[] {
  const judge = documentJudge(operation);
  const probes: Probe[] = [];
  for (const parameter of parametersOf(operation)) {
    const issued = issuedParameters.has(parameter.name);
    const value = valueOfParameter(parts, parameter) ?? (issued ? 'AAAA' : undefined);
    if (value === undefined || parameter.in === 'cookie') continue;
    const schema = resolve(parameter.schema);
    const typed: Json = schema.type === 'integer' ? Number(value) : value;
    const place: Place = { kind: 'parameter', parameter };
    for (const candidate of candidatesFor(schema, typed, parameter.in)) {
      probes.push({ place, field: parameter.name, ...candidate });
    }
    // Requests at the limits keep an issued value, so its longest form the document allows is probed here.
    if (issued && valueOfParameter(parts, parameter) !== undefined && typeof schema.maxLength === 'number') {
      const longest = stringsOfSize(value, schema.maxLength).find((shape) =>
        judge(withValue(parts, place, shape)),
      );
      if (longest !== undefined)
        probes.push({ place, field: parameter.name, label: 'maxLength', value: longest });
    }
  }
  const body = readRequestBody(operation);
  if (body !== undefined && parts.body !== undefined) {
    for (const { place, schema, value } of bodyPlaces(body.schema, parts.body)) {
      for (const candidate of candidatesFor(schema, value, 'body')) {
        probes.push({ place, field: fieldName(place), ...candidate });
      }
    }
  }
  return probes;
}

/**
 * The request with every limited value at its limit: strings at maxLength (minLength), numbers at maximum
 * (minimum), arrays and objects filled to maxItems and maxProperties (cut to minItems). Each step is kept only
 * if the document still accepts the whole request, so the result is always a request the document allows.
 */
function atLimits(operation: OpenApiOperation, parts: RequestParts, end: 'upper' | 'lower'): RequestParts {
  const judge = documentJudge(operation);
  let current: RequestParts = structuredClone(parts);
  const tryValue = (place: Place, values: Json[]) => {
    for (const value of values) {
      const candidate = withValue(current, place, value);
      if (judge(candidate)) {
        current = candidate;
        return;
      }
    }
  };
  const limitedValues = (schema: Schema, value: Json): Json[] => {
    if (typeof value === 'string') {
      const size = end === 'upper' ? schema.maxLength : schema.minLength;
      return typeof size === 'number' ? stringsOfSize(value, size) : [];
    }
    if (typeof value === 'number') {
      const bound = end === 'upper' ? schema.maximum : schema.minimum;
      return typeof bound === 'number' ? [bound] : [];
    }
    if (Array.isArray(value)) {
      if (end === 'lower')
        return typeof schema.minItems === 'number' ? [value.slice(0, schema.minItems)] : [];
      if (typeof schema.maxItems !== 'number') return [];
      const filled = [...value];
      while (filled.length < schema.maxItems) filled.push(minimalValue(schema.items));
      return [filled];
    }
    if (isObject(value) && end === 'upper' && typeof schema.maxProperties === 'number') {
      const filled = { ...value };
      for (let index = 0; Object.keys(filled).length < schema.maxProperties; index += 1) {
        filled[`extra${index}`] = minimalValue(schema.additionalProperties);
      }
      return [filled];
    }
    return [];
  };
  for (const parameter of parametersOf(operation)) {
    const value = valueOfParameter(current, parameter);
    if (value === undefined || parameter.in === 'cookie' || issuedParameters.has(parameter.name)) continue;
    const schema = resolve(parameter.schema);
    const typed: Json = schema.type === 'integer' ? Number(value) : value;
    tryValue({ kind: 'parameter', parameter }, limitedValues(schema, typed));
  }
  const body = readRequestBody(operation);
  if (body !== undefined && current.body !== undefined) {
    // Containers first (growing them adds places), then every place of the grown body, item by item.
    for (const { place, schema, value } of bodyPlaces(body.schema, current.body)) {
      if (typeof value === 'object' && value !== null) tryValue(place, limitedValues(schema, value));
    }
    const everyPlace = (node: unknown, value: Json, pointer: (string | number)[]): void => {
      const schema = resolve(node);
      if (Array.isArray(value))
        value.forEach((item, index) => everyPlace(schema.items, item, [...pointer, index]));
      else if (isObject(value)) {
        const properties = (schema.properties ?? {}) as Record<string, unknown>;
        for (const [name, item] of Object.entries(value)) {
          const itemSchema = properties[name] ?? schema.additionalProperties;
          if (typeof itemSchema === 'object') everyPlace(itemSchema, item, [...pointer, name]);
        }
      } else tryValue({ kind: 'body', pointer }, limitedValues(schema, value));
    };
    everyPlace(body.schema, current.body, []);
  }
  expect({ operation: operation.operationId, end, documentAccepts: judge(current) }).toEqual({
    operation: operation.operationId,
    end,
    documentAccepts: true,
  });
  return current;
}

let saga: SagaEnvironment;
/** Trips whose seats the probes hold: a new one whenever the last is full. */
const trips: TestTrip[] = [];
let server: RunningServer;
let removeApp: () => Promise<void>;
let customer: TestUser;
let customerPassword = '';
let actor: Actor;
let readableBookingId = '';
const tokens: Record<string, string> = {};
let nextSeat = 0;
const webhookSecret = newWebhookSecret();

/**
 * Seats of rows 10 to 99 nobody holds yet, all on one trip: their numbers are already at SeatNumber's
 * maxLength, so requests at the limits keep them rather than turning `4B` into `94B`, another probe's seat.
 */
async function freshSeats(count: number): Promise<{ tripId: string; seats: string[] }> {
  const longSeatsOf = (trip: TestTrip) => trip.seatNumbers.filter((seatNumber) => seatNumber.length === 3);
  let trip = trips.at(-1);
  if (trip === undefined || nextSeat + count > longSeatsOf(trip).length) {
    trip = await createTrip(saga.database, { seatCount: 396 });
    trips.push(trip);
    nextSeat = 0;
  }
  nextSeat += count;
  return { tripId: trip.tripId, seats: longSeatsOf(trip).slice(nextSeat - count, nextSeat) };
}

function passengerJson(seatNumber: string, index: number): Json {
  return {
    first_name: `Probe${index}`,
    last_name: 'Limits',
    email: `probe${index}@example.com`,
    phone: '+351912345678',
    seat_number: seatNumber,
    fare_class: 'STANDARD',
  };
}

/** A booking held by the customer, and `extraSeats` free seats of its trip. */
async function freshBooking(
  passengers: number,
  extraSeats = 0,
): Promise<{ booking: BookingView; free: string[] }> {
  const { tripId, seats } = await freshSeats(passengers + extraSeats);
  const booking = await saga.application.createBooking(actor, {
    tripId,
    passengers: seats.slice(0, passengers).map((seatNumber, index) => ({
      firstName: `Holder${index}`,
      lastName: 'Limits',
      email: 'holder@example.com',
      seatNumber,
      fareClass: 'STANDARD',
    })),
    contactEmail: 'holder@example.com',
  });
  return { booking, free: seats.slice(passengers) };
}

async function signIn(
  email: string,
  password: string,
): Promise<{ access_token: string; refresh_token: string }> {
  const response = await fetch(`${server.baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string };
}

const empty = (): RequestParts => ({ path: {}, query: {}, headers: {} });

/**
 * Well-formed requests per canonical operation, built on fresh state where a served request changes it. Several
 * bases when one request cannot reach every limit at once (9 seat changes need 9 passengers, adding 8 needs 1).
 */
const contexts: Record<string, { token?: () => string; bases: (() => Promise<RequestParts>)[] }> = {
  createBooking: {
    bases: [
      async () => {
        const { tripId, seats } = await freshSeats(9);
        return {
          ...empty(),
          headers: { 'idempotency-key': randomUUID() },
          body: {
            trip_id: tripId,
            passengers: seats.map(passengerJson),
            contact_email: 'contact@example.com',
            contact_phone: '+351912345678',
          },
        };
      },
    ],
  },
  listBookings: {
    bases: [() => Promise.resolve({ ...empty(), query: { status: 'PENDING_PAYMENT', page_size: '20' } })],
  },
  getBooking: { bases: [() => Promise.resolve({ ...empty(), path: { booking_id: readableBookingId } })] },
  updateBooking: {
    bases: [
      async () => {
        const { booking, free: seats } = await freshBooking(9, 9);
        return {
          ...empty(),
          path: { booking_id: booking.id },
          headers: { 'if-match': `"${booking.version}"` },
          body: {
            seat_changes: booking.passengers.map((passenger, index) => ({
              passenger_id: passenger.id,
              seat_number: seats[index],
              fare_class: 'STANDARD',
            })),
            passenger_updates: booking.passengers.map((passenger) => ({
              passenger_id: passenger.id,
              first_name: 'Renamed',
              last_name: 'Person',
              email: 'renamed@example.com',
              phone: '+351912345679',
            })),
          },
        };
      },
      async () => {
        const { booking, free } = await freshBooking(1, 8);
        return {
          ...empty(),
          path: { booking_id: booking.id },
          headers: { 'if-match': `"${booking.version}"` },
          body: { add_passengers: free.map(passengerJson) },
        };
      },
    ],
  },
  cancelBooking: {
    bases: [
      async () => ({
        ...empty(),
        path: { booking_id: (await freshBooking(1)).booking.id },
        body: { reason: 'Plans changed' },
      }),
    ],
  },
  // One passenger of two leaves: a served cancel needs a booking of its own.
  cancelPassengers: {
    bases: [
      async () => {
        const { booking } = await freshBooking(2);
        return {
          ...empty(),
          path: { booking_id: booking.id },
          body: { passenger_ids: [booking.passengers[0].id], reason: 'Plans changed' },
        };
      },
    ],
  },
  confirmPayment: {
    bases: [
      async () => ({
        ...empty(),
        path: { booking_id: (await freshBooking(1)).booking.id },
        headers: { 'idempotency-key': randomUUID() },
        body: { payment_token: 'tok_visa' },
      }),
    ],
  },
  // An operator's actions on a whole trip: each served cancel needs a trip of its own.
  cancelTrip: {
    token: () => tokens.agent,
    bases: [
      async () => ({
        ...empty(),
        path: { trip_id: (await createTrip(saga.database, { seatCount: 4 })).tripId },
        body: { reason: 'The bus broke down' },
      }),
    ],
  },
  getTripCancellation: {
    token: () => tokens.agent,
    bases: [
      async () => {
        const { tripId } = await createTrip(saga.database, { seatCount: 4 });
        await saga.database('trips').where({ id: tripId }).update({
          status: 'CANCELLED',
          cancelled_at: new Date(),
          cancellation_reason: 'The bus broke down',
        });
        return { ...empty(), path: { trip_id: tripId } };
      },
    ],
  },
  listRoutes: {
    bases: [
      () =>
        Promise.resolve({
          ...empty(),
          query: { origin: 'Lisbon', destination: 'Porto', date: '2031-12-02', page_size: '20' },
        }),
    ],
  },
  getRouteAvailability: {
    bases: [
      () =>
        Promise.resolve({ ...empty(), path: { route_id: trips[0].routeId }, query: { date: '2031-12-02' } }),
    ],
  },
  getCurrentUser: { bases: [() => Promise.resolve(empty())] },
  getUser: { bases: [() => Promise.resolve({ ...empty(), path: { user_id: customer.id } })] },
  login: {
    token: () => '',
    bases: [
      () => Promise.resolve({ ...empty(), body: { email: customer.email, password: customerPassword } }),
    ],
  },
  refresh: {
    token: () => '',
    bases: [
      async () => ({
        ...empty(),
        body: { refresh_token: (await signIn(customer.email, customerPassword)).refresh_token },
      }),
    ],
  },
  receiveStripeEvent: {
    token: () => '',
    bases: [
      () =>
        Promise.resolve({
          ...empty(),
          headers: { 'stripe-signature': 'signed-when-sent' },
          body: {
            id: `evt_limits_${randomUUID().replace(/-/g, '')}`,
            type: 'customer.created',
            created: Math.floor(Date.now() / 1000),
            data: { object: { id: 'cus_limits', object: 'customer' } },
          },
        }),
    ],
  },
  decodePayloads: {
    token: () => tokens.agent,
    bases: [
      () =>
        Promise.resolve({
          ...empty(),
          query: { preserveStorageRefs: 'true' },
          headers: { 'x-namespace': 'default' },
          body: { payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'eyJhIjoxfQ==' }] },
        }),
    ],
  },
};
// The scan's own checks (the trip, then the ticket) answer after the document's: an unknown trip is a served 404.
contexts.recordBoarding = {
  token: () => tokens.agent,
  bases: [
    () =>
      Promise.resolve({
        ...empty(),
        path: { trip_id: randomUUID() },
        body: { ticket: 'header.payload.signature', stop: 'LIS', device_id: 'bus-17' },
      }),
  ],
};
contexts.getTripManifest = {
  token: () => tokens.agent,
  bases: [
    () => Promise.resolve({ ...empty(), path: { trip_id: trips[0].tripId }, query: { page_size: '20' } }),
  ],
};
// A booking nobody holds: the ticket reads answer a served 404 once the document's limits pass.
contexts.listBookingTickets = {
  bases: [() => Promise.resolve({ ...empty(), path: { booking_id: randomUUID() } })],
};
contexts.getTicketPdf = {
  bases: [
    () => Promise.resolve({ ...empty(), path: { booking_id: randomUUID(), passenger_id: randomUUID() } }),
  ],
};
// Quotes of a booking nobody holds: served 404s once the document's limits pass, as the ticket reads.
contexts.createRefundQuote = {
  bases: [
    () =>
      Promise.resolve({
        ...empty(),
        path: { booking_id: randomUUID() },
        body: { passenger_ids: [randomUUID()] },
      }),
  ],
};
contexts.getRefundQuote = {
  bases: [() => Promise.resolve({ ...empty(), path: { booking_id: randomUUID(), quote_id: randomUUID() } })],
};
contexts.listTripTicketRevocations = {
  token: () => tokens.agent,
  bases: [() => Promise.resolve({ ...empty(), path: { trip_id: trips[0].tripId } })],
};
contexts.encodePayloads = contexts.decodePayloads;
// Fares: a route's types for any role; codes for agents, each create a code of its own (an amount code, whose value
// may reach the document's maximum), a read of one there is none of a served 404.
contexts.listPassengerTypes = {
  bases: [() => Promise.resolve({ ...empty(), path: { route_id: trips[0].routeId } })],
};
contexts.createDiscountCode = {
  token: () => tokens.agent,
  bases: [
    () =>
      Promise.resolve({
        ...empty(),
        body: {
          code: `L-${randomUUID().slice(0, 18).toUpperCase()}`,
          kind: 'AMOUNT',
          value: 500,
          currency: 'EUR',
          valid_from: new Date(Date.now() - 86_400_000).toISOString(),
          valid_until: new Date(Date.now() + 86_400_000).toISOString(),
          max_usages: 5,
        },
      }),
  ],
};
contexts.listDiscountCodes = {
  token: () => tokens.agent,
  bases: [() => Promise.resolve({ ...empty(), query: { page_size: '20' } })],
};
contexts.getDiscountCode = {
  token: () => tokens.agent,
  bases: [() => Promise.resolve({ ...empty(), path: { code: 'LIMITS-NONE' } })],
};

/** Partners' service clients, each a new one: a served create per partner stays far below its endpoint cap. */
const partnerTokens: string[] = [];
let partnersUsed = 0;
const partnerToken = () => partnerTokens[partnersUsed++ % partnerTokens.length];
contexts.createWebhookEndpoint = {
  token: partnerToken,
  bases: [
    () =>
      Promise.resolve({
        ...empty(),
        body: {
          url: 'https://partner.example/webhooks/bus-bookings',
          event_types: ['booking.confirmed', 'booking.cancelled'],
          description: 'Limits receiver',
        },
      }),
  ],
};
contexts.listWebhookEndpoints = {
  token: partnerToken,
  bases: [() => Promise.resolve({ ...empty(), query: { page_size: '20' } })],
};
// An endpoint nobody registered: once the document's limits pass, the partner is answered a served 404.
const unknownEndpoint = (): RequestParts => ({ ...empty(), path: { endpoint_id: randomUUID() } });
const unknownDelivery = (): RequestParts => ({
  ...empty(),
  path: { endpoint_id: randomUUID(), delivery_id: randomUUID() },
});
for (const operationId of ['getWebhookEndpoint', 'deleteWebhookEndpoint', 'pingWebhookEndpoint']) {
  contexts[operationId] = { token: partnerToken, bases: [() => Promise.resolve(unknownEndpoint())] };
}
contexts.updateWebhookEndpoint = {
  token: partnerToken,
  bases: [
    () =>
      Promise.resolve({
        ...unknownEndpoint(),
        body: {
          url: 'https://partner.example/v2',
          event_types: ['payment.refunded'],
          description: 'Limits receiver',
          enabled: true,
        },
      }),
  ],
};
contexts.rotateWebhookSecret = {
  token: partnerToken,
  bases: [() => Promise.resolve({ ...unknownEndpoint(), body: { overlap_seconds: 3600 } })],
};
contexts.listWebhookDeliveries = {
  token: partnerToken,
  bases: [() => Promise.resolve({ ...unknownEndpoint(), query: { status: 'FAILED', page_size: '20' } })],
};
contexts.getWebhookDelivery = { token: partnerToken, bases: [() => Promise.resolve(unknownDelivery())] };
contexts.redeliverWebhookDelivery = {
  token: partnerToken,
  bases: [() => Promise.resolve(unknownDelivery())],
};

function contextOf(operation: OpenApiOperation) {
  const context = contexts[operation.canonicalOperationId] ?? {
    token: () => '',
    bases: [() => Promise.resolve(empty())],
  };
  return {
    token: context.token ?? (() => tokens.customer),
    bases: context.bases.map((base) => async () => {
      const parts = await base();
      // Every operation that documents X-Request-Id gets one, so its limits are probed too.
      if (parametersOf(operation).some((parameter) => parameter.name === 'X-Request-Id')) {
        parts.headers['x-request-id'] = randomUUID();
      }
      return parts;
    }),
  };
}

async function send(
  operation: OpenApiOperation,
  parts: RequestParts,
  token: string,
): Promise<ObservedResponse> {
  const path = operation.path.replace(/\{([a-z_]+)\}/g, (_match, name: string) =>
    encodeURIComponent(parts.path[name]),
  );
  const query = new URLSearchParams(parts.query).toString();
  const headers: Record<string, string> = { ...parts.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  const body = parts.rawBody ?? (parts.body === undefined ? undefined : JSON.stringify(parts.body));
  // Stripe's events are signed over their bytes: a signature of the shape the document allows is made for the body
  // as sent, so that the limits probed are the document's (a wrong signature is webhook-security.test.ts's case).
  const signature = headers['stripe-signature'];
  if (
    operation.canonicalOperationId === 'receiveStripeEvent' &&
    body !== undefined &&
    signature !== undefined &&
    /^[!-~]{1,4096}$/.test(signature)
  ) {
    headers['stripe-signature'] = stripeSignature(body, webhookSecret);
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  return observe(
    await fetch(`${server.baseUrl}${path}${query ? `?${query}` : ''}`, {
      method: operation.method,
      headers,
      body,
    }),
  );
}

function describeAnswer(response: ObservedResponse): string {
  const body = response.body as { code?: string; errors?: { field: string; message: string }[] };
  return `${response.status} ${body?.code ?? ''} ${JSON.stringify(body?.errors ?? [])}`.slice(0, 400);
}

function served(response: ObservedResponse): boolean {
  return response.status < 500 && !malformedStatuses.has(response.status);
}

function refusedNaming(response: ObservedResponse, field: string): boolean {
  const body = response.body as { code?: string; errors?: { field: string }[] };
  return (
    response.status === 400 &&
    body?.code === 'VALIDATION_FAILED' &&
    (body.errors ?? []).some((violation) => violation.field === field)
  );
}

beforeAll(async () => {
  saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '1000' } });
  await saga.startWorkers();
  customerPassword = `limits-${randomUUID()}`;
  customer = await insertLoginUser(saga.database, saga.cipher, {
    email: `limits-${randomUUID()}@example.com`,
    password: customerPassword,
    roles: ['customer'],
  });
  const agentPassword = `limits-${randomUUID()}`;
  const agent = await insertLoginUser(saga.database, saga.cipher, {
    email: `limits-agent-${randomUUID()}@example.com`,
    password: agentPassword,
    roles: ['agent'],
  });
  actor = {
    userId: customer.id,
    roles: ['customer'],
    scopes: ['bookings:read', 'bookings:write', 'payments:write'],
  };
  const full = await composeTestApi(saga, { STRIPE_WEBHOOK_SECRET: webhookSecret });
  removeApp = full.remove;
  server = await startServer(full.app);
  tokens.customer = (await signIn(customer.email, customerPassword)).access_token;
  tokens.agent = (await signIn(agent.email, agentPassword)).access_token;
  const authority = { issuer: full.identityProvider.issuer, identityProvider: full.identityProvider };
  for (let index = 0; index < 60; index += 1) {
    partnerTokens.push(
      await mintToken(authority, {
        sub: `limits-partner-${randomUUID()}`,
        scope: 'webhooks:manage',
        roles: [],
      }),
    );
  }
  readableBookingId = (await freshBooking(1)).booking.id;
});

afterAll(async () => {
  await server?.close();
  await removeApp?.();
  await saga?.stop();
});

describe.each(openApiOperations.map((operation) => [operation.operationId, operation] as const))(
  '%s',
  (_operationId, operation) => {
    test('a request just outside any limit of the document is refused with 400 VALIDATION_FAILED naming the field, one inside is served', async () => {
      const context = contextOf(operation);
      const judge = documentJudge(operation);
      const failures: string[] = [];
      let refusedCount = 0;
      for (const base of context.bases) {
        const parts = await base();
        for (const probe of probesOf(operation, parts)) {
          const request = withValue(parts, probe.place, probe.value);
          const accepted = judge(request);
          if (accepted) {
            // Served requests may change what they touch: each runs on fresh state of its own.
            const fresh = withValue(await base(), probe.place, probe.value);
            const response = await send(operation, fresh, context.token());
            if (!served(response))
              failures.push(
                `${probe.field} (${probe.label}): the document allows it, the server answered ${describeAnswer(response)}`,
              );
          } else {
            refusedCount += 1;
            const response = await send(operation, request, context.token());
            if (!refusedNaming(response, probe.field))
              failures.push(
                `${probe.field} (${probe.label}): the document refuses it, the server answered ${describeAnswer(response)}`,
              );
          }
        }
      }
      expect(failures).toEqual([]);
      // Operations with inputs have limits to probe; the others (probes, discovery) have none.
      const hasInputs = parametersOf(operation).length > 0 || readRequestBody(operation) !== undefined;
      expect(refusedCount > 0).toBe(hasInputs);
    });

    test('requests with every value at the upper or at the lower limits of the document are served', async () => {
      const context = contextOf(operation);
      const failures: string[] = [];
      for (const [end, bases] of [
        ['upper', context.bases],
        ['lower', context.bases.slice(0, 1)],
      ] as const) {
        for (const base of bases) {
          const request = atLimits(operation, await base(), end);
          const response = await send(operation, request, context.token());
          if (!served(response)) failures.push(`${end} limits: ${describeAnswer(response)}`);
        }
      }
      expect(failures).toEqual([]);
    });

    test('a body of exactly the documented x-max-body-bytes is read, one byte more answers 413', async () => {
      const limit = requestBodyLimit(operation);
      if (limit === undefined) {
        expect(readRequestBody(operation)).toBeUndefined();
        return;
      }
      const context = contextOf(operation);
      // JSON allows whitespace after the value: the same request, padded to the size under test.
      const padded = (parts: RequestParts, size: number): RequestParts => {
        const json = JSON.stringify(parts.body);
        return { ...parts, rawBody: json + ' '.repeat(size - Buffer.byteLength(json)) };
      };
      const atLimit = await send(operation, padded(await context.bases[0](), limit), context.token());
      expect({ status: atLimit.status, served: served(atLimit) }).toEqual({
        status: atLimit.status,
        served: true,
      });
      const over = await send(operation, padded(await context.bases[0](), limit + 1), context.token());
      expect([over.status, (over.body as { code?: string }).code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    });
  },
);
