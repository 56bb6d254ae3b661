// Request validation compiled from the OpenAPI document: what it refuses, how it names fields, what it coerces.
import { expect } from '@jest/globals';
import type { ErrorObject } from 'ajv';
import { openApiDocument, openApiOperationsById } from '../../../src/contracts/openapi-document';
import {
  compileRequestValidator,
  createOpenApiAjv,
  fieldPath,
  readRequestBody,
  resolveDocumentReference,
  toFieldViolations,
  type RequestInput,
} from '../../../src/api/rest/openapi-validation';
import { openApiOperations } from '../../../src/contracts/openapi-document';

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
      const definition = openApiDocument.paths[operation.path][operation.method.toLowerCase()] as {
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
      const path = operation.path.includes('{booking_id}') ? { booking_id: bookingId } : {};
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
        { field: 'trip_id', message: 'must be a valid uuid' },
        { field: 'passengers[0].first_name', message: 'must be string' },
        { field: 'passengers[0].email', message: 'must be a valid email' },
        { field: 'contact_email', message: 'is required' },
      ]),
    );
  });

  it('refuses urn:uuid: ids, which the generic uuid format would let through', () => {
    const { violations } = validatorFor('getBooking').validate(
      request({ path: { booking_id: `urn:uuid:${bookingId}` } }),
    );
    expect(violations).toEqual([{ field: 'booking_id', message: 'must be a valid uuid' }]);
  });

  it('refuses impossible dates and unknown query parameters', () => {
    const { violations } = validatorFor('listRoutes').validate(
      request({ query: { date: '2026-02-30', sort: 'price' } }),
    );
    expect(violations).toEqual(
      expect.arrayContaining([
        { field: 'date', message: 'must be a valid date' },
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
      { field: 'page_size', message: 'must be <= 100' },
    ]);
    expect(validator.validate(request({ query: { page_size: ['1', '2'] } })).violations).toEqual([
      { field: 'page_size', message: 'must be integer' },
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
    ).toEqual([{ field: 'If-Match', message: 'must match pattern "^(?:\\*|"[1-9][0-9]{0,14}")$"' }]);
    expect(
      update.validate(request({ path: { booking_id: bookingId }, headers: { 'if-match': '*' }, body }))
        .violations,
    ).toEqual([]);
    const create = validatorFor('createBookingApi');
    expect(
      create.validate(request({ headers: { 'idempotency-key': 'has spaces' }, body: validCreateBody }))
        .violations,
    ).toEqual([{ field: 'Idempotency-Key', message: 'must match pattern "^[A-Za-z0-9._:-]{1,255}$"' }]);
  });

  it('refuses an X-Request-Id that breaks the documented pattern or length, naming the header', () => {
    const listRoutes = validatorFor('listRoutes');
    expect(
      listRoutes.validate(request({ headers: { 'x-request-id': 'spaces are bad' } })).violations,
    ).toEqual([{ field: 'X-Request-Id', message: 'must match pattern "^[!-~]+$"' }]);
    expect(listRoutes.validate(request({ headers: { 'x-request-id': 'r'.repeat(129) } })).violations).toEqual(
      [{ field: 'X-Request-Id', message: 'must NOT have more than 128 characters' }],
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
