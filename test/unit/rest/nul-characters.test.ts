// U+0000 in any string of a REST request is bad input named by field, and the document says so for every string.
import { expect } from '@jest/globals';
import type { ValidateFunction } from 'ajv/dist/2020';
import {
  openApiDocument,
  openApiOperations,
  openApiOperationsById,
} from '../../../src/contracts/openapi-document';
import {
  anchorSchema,
  compileRequestValidator,
  createOpenApiAjv,
  operationDefinition,
  readRequestBody,
  resolveDocumentReference,
  type RequestInput,
} from '../../../src/api/rest/openapi-validation';

const ajvs = { parameters: createOpenApiAjv({ coerceTypes: true }), bodies: createOpenApiAjv() };
const bookingId = '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e';
const nulMessage = 'must not contain the NUL character (U+0000)';

function violationsOf(operationId: string, overrides: Partial<RequestInput>) {
  const validator = compileRequestValidator(openApiOperationsById.get(operationId)!, ajvs);
  return validator.validate({ path: {}, query: {}, headers: {}, body: undefined, ...overrides }).violations;
}

const passenger = {
  first_name: 'Ana',
  last_name: 'Silva',
  email: 'ana.silva@example.com',
  seat_number: '12C',
  fare_class: 'STANDARD',
};

describe('U+0000 in a REST request', () => {
  it('is refused in query parameters, naming the parameter once', () => {
    expect(violationsOf('listRoutes', { query: { origin: '\u0000' } })).toEqual([
      { field: 'origin', message: nulMessage },
    ]);
    expect(violationsOf('listRoutesApi', { query: { destination: 'a\u0000b' } })).toEqual([
      { field: 'destination', message: nulMessage },
    ]);
  });

  it('is refused in path parameters and declared headers, under their contract names', () => {
    expect(violationsOf('getBooking', { path: { booking_id: `${bookingId}\u0000` } })).toEqual([
      { field: 'booking_id', message: nulMessage },
    ]);
    expect(violationsOf('decodePayloads', { headers: { 'x-namespace': 'default\u0000' }, body: {} })).toEqual(
      [{ field: 'X-Namespace', message: nulMessage }],
    );
  });

  it('is refused anywhere in a JSON body, values and property names alike', () => {
    const body = {
      trip_id: bookingId,
      passengers: [passenger, { ...passenger, seat_number: '12D', last_name: 'Sil\u0000va' }],
      contact_email: 'ana.silva@example.com',
    };
    expect(violationsOf('createBooking', { body })).toEqual([
      { field: 'passengers[1].last_name', message: nulMessage },
    ]);
    expect(
      violationsOf('cancelBooking', { path: { booking_id: bookingId }, body: { reason: '\u0000' } }),
    ).toEqual([{ field: 'reason', message: nulMessage }]);
    const payloads = { payloads: [{ metadata: { 'encod\u0000ing': 'anNvbg==' }, data: 'e30=' }] };
    expect(violationsOf('encodePayloads', { body: payloads })).toEqual([
      {
        field: 'payloads[0].metadata',
        message: 'property names must not contain the NUL character (U+0000)',
      },
    ]);
  });

  it('is reported together with the other bad fields of the request', () => {
    const violations = violationsOf('listRoutes', { query: { origin: 'LIS\u0000', page_size: '101' } });
    expect(violations.map((violation) => violation.field).sort()).toEqual(['origin', 'page_size']);
  });
});

/**
 * Valid values of the parameters the document deliberately gives no example (Swagger UI would send it as it is):
 * values the server issues (an ETag, a page token) or the caller makes up fresh (an Idempotency-Key).
 */
const samplesWithoutExample: Readonly<Record<string, string>> = {
  'If-Match': '"3"',
  'Idempotency-Key': '8e0f7a1c-2b3d-4e5f-a6b7-c8d9e0f1a2b3',
  page_token: 'eyJhZnRlciI6IjIwMjYtMTItMDFUMDg6MzA6MDBaIn0',
  'X-Namespace': 'default',
};

/** Every string schema a request can carry, with a value the document gives as valid for it. */
function requestStringSchemas(): { where: string; schema: object; sample: string }[] {
  const found: { where: string; schema: object; sample: string }[] = [];
  const visit = (node: unknown, where: string, example?: unknown): void => {
    const schema = resolveDocumentReference(openApiDocument, node) as Record<string, unknown>;
    const sample =
      schema.example ??
      example ??
      samplesWithoutExample[where] ??
      (schema.enum as unknown[] | undefined)?.[0];
    if (schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))) {
      // A base64 `byte` string without an example: any short base64 text is one.
      found.push({ where, schema: node as object, sample: typeof sample === 'string' ? sample : 'e30=' });
    }
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) {
      visit(property, `${where}.${name}`);
    }
    if (schema.items !== undefined) visit(schema.items, `${where}[]`);
    if (typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, `${where}.*`);
    if (schema.propertyNames !== undefined)
      visit(schema.propertyNames, `${where} property names`, 'encoding');
  };
  const seen = new Set<string>();
  for (const operation of openApiOperations) {
    const definition = operationDefinition(operation);
    for (const reference of (definition.parameters ?? []) as unknown[]) {
      const parameter = resolveDocumentReference(openApiDocument, reference) as {
        name: string;
        schema: unknown;
        example?: unknown;
      };
      if (seen.has(parameter.name)) continue;
      seen.add(parameter.name);
      visit(parameter.schema, parameter.name, parameter.example);
    }
    const body = readRequestBody(operation);
    if (body !== undefined && !seen.has(operation.canonicalOperationId)) {
      seen.add(operation.canonicalOperationId);
      visit(body.schema, operation.canonicalOperationId);
    }
  }
  return found;
}

describe('the OpenAPI document', () => {
  const strings = requestStringSchemas();

  it('finds the request strings it is about to check', () => {
    expect(strings.map(({ where }) => where)).toEqual(
      expect.arrayContaining([
        'origin',
        'X-Request-Id',
        'createBooking.passengers[].first_name',
        'cancelBooking.reason',
        'login.password',
        'encodePayloads.payloads[].metadata property names',
      ]),
    );
  });

  it.each(requestStringSchemas().map(({ where, schema, sample }) => [where, schema, sample] as const))(
    'states in its schema that %s refuses U+0000, as the server does',
    (_where, schema, sample) => {
      const validate: ValidateFunction = ajvs.bodies.compile(anchorSchema(schema) as object);
      expect(validate(sample)).toBe(true);
      const withNul = `${sample.slice(0, 1)}\u0000${sample.slice(1)}`;
      expect(validate(withNul)).toBe(false);
    },
  );
});
