// Request validation compiled from the OpenAPI document: what it refuses, how it names fields, what it coerces.
import { expect } from '@jest/globals';
import type { ErrorObject } from 'ajv';
import { openApiDocument, openApiOperationsById } from '../../../src/contracts/openapi-document';
import {
  compileRequestValidator,
  createOpenApiAjv,
  fieldPath,
  hasRuleMessage,
  readRequestBody,
  resolveDocumentReference,
  toFieldViolations,
  type RequestInput,
} from '../../../src/api/rest/openapi-validation';
import { openApiOperations } from '../../../src/contracts/openapi-document';
import { validationFailed, type DomainError } from '../../../src/domain/errors';
import { validateCreateBooking } from '../../../src/domain/validation';

const ajvs = { parameters: createOpenApiAjv({ coerceTypes: true }), bodies: createOpenApiAjv() };
const bookingId = '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e';

function validatorFor(operationId: string) {
  const operation = openApiOperationsById.get(operationId);
  if (operation === undefined) throw new Error(`no operation ${operationId}`);
  return compileRequestValidator(operation, ajvs);
}

function request(overrides: Partial<RequestInput>): RequestInput {
  return { path: {}, query: {}, headers: {}, body: undefined, ...overrides };
}

const validPassenger = {
  first_name: 'Ana',
  last_name: 'Silva',
  email: 'ana.silva@example.com',
  seat_number: '12C',
  fare_class: 'STANDARD',
};

const validCreateBody = {
  trip_id: '5a8d2f1e-7c3b-4e9a-b6d4-0e1f2a3b4c5d',
  passengers: [validPassenger],
  contact_email: 'ana.silva@example.com',
};

describe('compileRequestValidator', () => {
  it('compiles a validator for every documented operation', () => {
    for (const operation of openApiOperations) {
      expect(() => compileRequestValidator(operation, ajvs)).not.toThrow();
    }
  });

  it('accepts every request body example the document gives', () => {
    const examples = openApiOperations.flatMap((operation) => {
      const definition = openApiDocument.paths[operation.documentedPath][operation.method.toLowerCase()] as {
        requestBody?: unknown;
      };
      if (definition.requestBody === undefined) return [];
      const requestBody = resolveDocumentReference(openApiDocument, definition.requestBody) as {
        content: Record<string, { examples?: Record<string, { value: unknown }> }>;
      };
      return Object.values(requestBody.content['application/json'].examples ?? {}).map((example) => ({
        operation,
        body: example.value,
      }));
    });
    expect(examples.length).toBeGreaterThanOrEqual(6);
    for (const { operation, body } of examples) {
      const validator = compileRequestValidator(operation, ajvs);
      const headers = operation.canonicalOperationId === 'updateBooking' ? { 'if-match': '"3"' } : {};
      const path = {
        ...(operation.path.includes('{booking_id}') ? { booking_id: bookingId } : {}),
        ...(operation.path.includes('{trip_id}') ? { trip_id: bookingId } : {}),
        ...(operation.path.includes('{endpoint_id}') ? { endpoint_id: bookingId } : {}),
      };
      expect(validator.validate(request({ path, headers, body })).violations).toEqual([]);
    }
  });

  it('refuses unknown fields at every depth, so clients cannot set server fields', () => {
    const { violations } = validatorFor('createBooking').validate(
      request({
        body: {
          ...validCreateBody,
          status: 'CONFIRMED',
          passengers: [{ ...validPassenger, price: 1 }],
        },
      }),
    );
    expect(violations).toEqual(
      expect.arrayContaining([
        { field: 'status', message: 'is not a known field' },
        { field: 'passengers[0].price', message: 'is not a known field' },
      ]),
    );
  });

  it('names every wrong type, format and missing field in the contract notation', () => {
    const { violations } = validatorFor('createBooking').validate(
      request({
        body: {
          trip_id: 'not-a-uuid',
          passengers: [{ ...validPassenger, first_name: 7, email: 'nope' }],
        },
      }),
    );
    expect(violations).toEqual(
      expect.arrayContaining([
        { field: 'trip_id', message: 'must be a UUID' },
        { field: 'passengers[0].first_name', message: 'is required and must be a string' },
        { field: 'passengers[0].email', message: 'must be a valid email address' },
        { field: 'contact_email', message: 'is required' },
      ]),
    );
  });

  it('refuses urn:uuid: ids, which the generic uuid format would let through', () => {
    const { violations } = validatorFor('getBooking').validate(
      request({ path: { booking_id: `urn:uuid:${bookingId}` } }),
    );
    expect(violations).toEqual([{ field: 'booking_id', message: 'must be a UUID' }]);
  });

  it('refuses impossible dates and unknown query parameters', () => {
    const { violations } = validatorFor('listRoutes').validate(
      request({ query: { date: '2026-02-30', sort: 'price' } }),
    );
    expect(violations).toEqual(
      expect.arrayContaining([
        { field: 'date', message: 'must be a date YYYY-MM-DD from 0001-01-01 to 9999-12-31' },
        { field: 'sort', message: 'is not a known field' },
      ]),
    );
  });

  it('coerces query strings to their declared types and checks the bounds', () => {
    const validator = validatorFor('listBookings');
    const accepted = validator.validate(request({ query: { page_size: '25', status: 'CONFIRMED' } }));
    expect(accepted.violations).toEqual([]);
    expect(accepted.input.query.page_size).toBe(25);
    expect(validator.validate(request({ query: { page_size: '101' } })).violations).toEqual([
      { field: 'page_size', message: 'must be at most 100' },
    ]);
    expect(validator.validate(request({ query: { page_size: ['1', '2'] } })).violations).toEqual([
      { field: 'page_size', message: 'must be an integer' },
    ]);
    expect(validator.validate(request({ query: { status: 'LOST' } })).violations).toEqual([
      {
        field: 'status',
        message: 'must be one of PENDING_PAYMENT, CONFIRMED, CANCELLED, EXPIRED, COMPLETED',
      },
    ]);
  });

  it('checks declared headers under their documented names', () => {
    const update = validatorFor('updateBooking');
    const body = { passenger_updates: [{ passenger_id: bookingId, last_name: 'Santos' }] };
    expect(update.validate(request({ path: { booking_id: bookingId }, body })).violations).toEqual([
      { field: 'If-Match', message: 'is required' },
    ]);
    expect(
      update.validate(request({ path: { booking_id: bookingId }, headers: { 'if-match': 'W/"3"' }, body }))
        .violations,
    ).toEqual([
      {
        field: 'If-Match',
        message: 'must be the booking\'s ETag as last read (its version in quotes, such as "3"), or *',
      },
    ]);
    expect(
      update.validate(request({ path: { booking_id: bookingId }, headers: { 'if-match': '*' }, body }))
        .violations,
    ).toEqual([]);
    const create = validatorFor('createBookingApi');
    expect(
      create.validate(request({ headers: { 'idempotency-key': 'has spaces' }, body: validCreateBody }))
        .violations,
    ).toEqual([
      {
        field: 'Idempotency-Key',
        message: 'must be 1 to 255 characters, each a letter, a digit or one of . _ : -',
      },
    ]);
  });

  it('refuses an X-Request-Id that breaks the documented pattern or length, naming the header', () => {
    const listRoutes = validatorFor('listRoutes');
    expect(
      listRoutes.validate(request({ headers: { 'x-request-id': 'spaces are bad' } })).violations,
    ).toEqual([
      { field: 'X-Request-Id', message: 'must be 1 to 128 printable ASCII characters without spaces' },
    ]);
    expect(listRoutes.validate(request({ headers: { 'x-request-id': 'r'.repeat(129) } })).violations).toEqual(
      [{ field: 'X-Request-Id', message: 'must be 1 to 128 printable ASCII characters without spaces' }],
    );
    expect(listRoutes.validate(request({ headers: { 'x-request-id': 'r'.repeat(128) } })).violations).toEqual(
      [],
    );
  });

  it('knows which operations change a versioned booking only under If-Match', () => {
    expect(validatorFor('updateBooking').requiresIfMatch).toBe(true);
    expect(validatorFor('updateBookingApi').requiresIfMatch).toBe(true);
    expect(validatorFor('cancelBooking').requiresIfMatch).toBe(false);
    expect(validatorFor('createBooking').requiresIfMatch).toBe(false);
  });

  it('knows which operations take a body and whether it is required', () => {
    expect(readRequestBody(openApiOperationsById.get('createBooking')!)?.required).toBe(true);
    expect(readRequestBody(openApiOperationsById.get('cancelBooking')!)?.required).toBe(false);
    expect(readRequestBody(openApiOperationsById.get('getBooking')!)).toBeUndefined();
  });
});

/** Every schema node a request's values meet: parameters and bodies, through references, items and properties. */
function requestSchemaNodes(): Record<string, unknown>[] {
  const nodes = new Set<Record<string, unknown>>();
  const visit = (node: unknown): void => {
    const schema = resolveDocumentReference(openApiDocument, node) as Record<string, unknown>;
    if (nodes.has(schema)) return;
    nodes.add(schema);
    for (const property of Object.values((schema.properties ?? {}) as Record<string, unknown>))
      visit(property);
    for (const keyword of ['items', 'additionalProperties', 'propertyNames'])
      if (typeof schema[keyword] === 'object') visit(schema[keyword]);
  };
  for (const operation of openApiOperations) {
    const definition = openApiDocument.paths[operation.documentedPath][operation.method.toLowerCase()] as {
      parameters?: unknown[];
    };
    for (const parameter of definition.parameters ?? []) {
      visit((resolveDocumentReference(openApiDocument, parameter) as { schema: unknown }).schema);
    }
    const body = readRequestBody(operation);
    if (body !== undefined) visit(body.schema);
  }
  return [...nodes];
}

describe('violations in words', () => {
  const regexLike = /\^|\$"|pattern|must NOT|\[|<=|>=/;

  it('says a bad email once, in the sentence gRPC uses, and quotes no pattern', () => {
    const body = {
      ...validCreateBody,
      passengers: [{ ...validPassenger, email: 'ana.silva@' }],
      contact_email: 'nope',
    };
    const { violations } = validatorFor('createBooking').validate(request({ body }));
    expect(violations).toEqual([
      { field: 'passengers[0].email', message: 'must be a valid email address' },
      { field: 'contact_email', message: 'must be a valid email address' },
    ]);
    let domainViolations: { field: string; message: string }[] = [];
    try {
      validateCreateBooking({
        tripId: body.trip_id,
        passengers: [
          {
            firstName: 'Ana',
            lastName: 'Silva',
            email: 'ana.silva@',
            seatNumber: '12C',
            fareClass: 'STANDARD',
          },
        ],
        contactEmail: 'nope',
      });
    } catch (error) {
      domainViolations = [...(error as DomainError).fieldViolations];
    }
    const byField = (a: { field: string }, b: { field: string }) => a.field.localeCompare(b.field);
    expect(domainViolations.sort(byField)).toEqual([...violations].sort(byField));
  });

  it('names each field once, however many of its rules it breaks', () => {
    const { violations } = validatorFor('createBooking').validate(
      request({
        body: {
          ...validCreateBody,
          passengers: [{ ...validPassenger, first_name: ` ${'\u0007'.repeat(150)}`, seat_number: '123Z' }],
        },
      }),
    );
    const fields = violations.map((violation) => violation.field);
    expect(fields).toEqual([...new Set(fields)]);
    expect(fields.sort()).toEqual(['passengers[0].first_name', 'passengers[0].seat_number']);
    expect(validationFailed(violations).message).toBe('The request has 2 invalid fields');
    for (const { message } of violations) expect(message).not.toMatch(regexLike);
  });

  it('tells an empty update, or a passenger update that changes nothing, what it must give', () => {
    const update = validatorFor('updateBooking');
    const headers = { 'if-match': '"3"' };
    expect(
      update.validate(request({ path: { booking_id: bookingId }, headers, body: {} })).violations,
    ).toEqual([
      {
        field: '',
        message: 'an update must give at least one of seat_changes, add_passengers or passenger_updates',
      },
    ]);
    expect(
      update.validate(
        request({
          path: { booking_id: bookingId },
          headers,
          body: { passenger_updates: [{ passenger_id: bookingId }] },
        }),
      ).violations,
    ).toEqual([
      {
        field: 'passenger_updates[0]',
        message: 'must change at least one of first_name, last_name, email, phone',
      },
    ]);
  });

  it('has a sentence for every pattern a request can break, so none is ever quoted', () => {
    const patterned = requestSchemaNodes().filter((node) => typeof node.pattern === 'string');
    expect(patterned.length).toBeGreaterThan(10);
    expect(patterned.filter((node) => !hasRuleMessage(node)).map((node) => node.pattern)).toEqual([]);
  });
});

describe('field violations', () => {
  it('writes JSON pointers as contract paths', () => {
    expect(fieldPath('/passengers/0/email')).toBe('passengers[0].email');
    expect(fieldPath('', 'trip_id')).toBe('trip_id');
    expect(fieldPath('/seat_changes/3', 'seat_number')).toBe('seat_changes[3].seat_number');
    expect(fieldPath('/a~1b')).toBe('a/b');
  });

  it('bounds the number and the size of violations, and never repeats one', () => {
    const longName = 'x'.repeat(1000);
    const errors: ErrorObject[] = Array.from({ length: 80 }, (_, index) => ({
      keyword: 'additionalProperties',
      instancePath: '',
      schemaPath: '#/additionalProperties',
      params: { additionalProperty: `${index}${longName}` },
    }));
    const duplicate: ErrorObject = { ...errors[0] };
    const violations = toFieldViolations([errors[0], duplicate, ...errors.slice(1)]);
    expect(violations).toHaveLength(50);
    expect(violations.every((violation) => violation.field.length <= 200)).toBe(true);
    expect(new Set(violations.map((violation) => violation.field)).size).toBe(50);
  });
});
