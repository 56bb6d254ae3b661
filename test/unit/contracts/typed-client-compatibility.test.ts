// Unit tests: the typed-client check's verdicts on small inline OpenAPI documents, all pairs in one tsc program.
import path from 'node:path';
import { stringify } from 'yaml';
import {
  checkPairs,
  type Contract,
  type Pair,
  type PairVerdict,
  parseRecord,
  recordSuggestion,
} from '../../../scripts/typed-clients.js';

const repositoryRoot = path.join(__dirname, '../../..');

const booking = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'passengers'],
  properties: {
    id: { type: 'string' },
    passengers: { type: 'array', items: { type: 'string' } },
  },
};
const processing = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status'],
  properties: { id: { type: 'string' }, status: { type: 'string', enum: ['PROCESSING'] } },
};
const problem = {
  type: 'object',
  required: ['code'],
  properties: { code: { type: 'string', enum: ['NOT_FOUND'] } },
};

const tree = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string' },
    children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } },
  },
};

function json(schema: object): object {
  return { content: { 'application/json': { schema } } };
}

interface Shape {
  /** The payment's answers besides 200 Booking and 404 Problem. */
  paymentAnswers?: Record<string, object>;
  bookingSchema?: object;
  paymentBody?: object;
  paymentQuery?: object[];
  withoutRead?: boolean;
}

function contract(name: string, shape: Shape = {}): Contract {
  const bookingSchema = shape.bookingSchema ?? booking;
  const paths: Record<string, object> = {
    '/bookings/{id}/payment': {
      post: {
        operationId: 'payBooking',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          ...(shape.paymentQuery ?? []),
        ],
        requestBody: {
          required: true,
          ...json(
            shape.paymentBody ?? {
              type: 'object',
              required: ['token'],
              properties: { token: { type: 'string' }, note: { type: 'string' } },
            },
          ),
        },
        responses: {
          '200': { description: 'The booking.', ...json(bookingSchema) },
          '404': { description: 'No such booking.', ...json(problem) },
          ...shape.paymentAnswers,
        },
      },
    },
  };
  if (!shape.withoutRead) {
    paths['/bookings/{id}'] = {
      get: {
        operationId: 'getBooking',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The booking.', ...json(bookingSchema) } },
      },
    };
  }
  const document = {
    openapi: '3.1.0',
    info: { title: 'Bookings', version: '1.0.0' },
    paths,
    components: { schemas: { Tree: tree } },
  };
  return { name, text: stringify(document, { aliasDuplicateObjects: false }) };
}

const released = contract('01-first');
const with202 = contract('02-processing', {
  paymentAnswers: { '202': { description: 'Still being held.', ...json(processing) } },
});
const processingRecord = parseRecord(
  stringify({
    changes: [
      {
        operation: 'payBooking',
        direction: 'response',
        status: '202',
        integrators:
          "Narrow on response.status === 202 (data.status === 'PROCESSING') before reading booking fields.",
      },
    ],
  }),
  'inline record',
);

const cases = {
  added202: { old: released, new: with202, record: [] },
  addedOptionalField: {
    old: released,
    new: contract('02-seat', {
      bookingSchema: { ...booking, properties: { ...booking.properties, seat: { type: 'string' } } },
    }),
    record: [],
  },
  requiredRequestField: {
    old: released,
    new: contract('02-email', {
      paymentBody: {
        type: 'object',
        required: ['token', 'email'],
        properties: { token: { type: 'string' }, note: { type: 'string' }, email: { type: 'string' } },
      },
    }),
    record: [],
  },
  requiredQueryParameter: {
    old: released,
    new: contract('02-currency', {
      paymentQuery: [{ name: 'currency', in: 'query', required: true, schema: { type: 'string' } }],
    }),
    record: [],
  },
  optionalQueryParameter: {
    old: released,
    new: contract('02-currency', {
      paymentQuery: [{ name: 'currency', in: 'query', required: false, schema: { type: 'string' } }],
    }),
    record: [],
  },
  removedOperation: { old: released, new: contract('02-no-read', { withoutRead: true }), record: [] },
  removedOptionalFields: {
    old: contract('01-seat', {
      bookingSchema: { ...booking, properties: { ...booking.properties, seat: { type: 'string' } } },
    }),
    new: contract('02-unseated', {
      paymentBody: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } },
    }),
    record: [],
  },
  recursiveSchema: {
    old: contract('01-tree', { bookingSchema: { $ref: '#/components/schemas/Tree' } }),
    new: contract('02-tree', { bookingSchema: { $ref: '#/components/schemas/Tree' } }),
    record: [],
  },
  recorded202: { old: released, new: with202, record: processingRecord },
  staleRecord: { old: released, new: released, record: processingRecord },
} satisfies Record<string, Pair>;

type Case = keyof typeof cases;
let verdicts: Record<Case, PairVerdict>;

beforeAll(() => {
  const names = Object.keys(cases) as Case[];
  const judged = checkPairs(
    names.map((name) => cases[name]),
    repositoryRoot,
  );
  verdicts = Object.fromEntries(names.map((name, index) => [name, judged[index]])) as Record<
    Case,
    PairVerdict
  >;
});

function sites(verdict: PairVerdict): string[] {
  return verdict.unrecorded.map((finding) =>
    `${finding.operation} ${finding.direction} ${finding.status ?? finding.part ?? ''}`.trimEnd(),
  );
}

describe('checkPairs', () => {
  it('refuses a new 2xx answer whose body the old data type cannot hold, naming what the client reads', () => {
    const verdict = verdicts.added202;
    expect(sites(verdict)).toEqual(['payBooking response 202']);
    expect(verdict.unrecorded[0]?.message).toBe(
      "its 202 answer in 02-processing is no longer readable as 01-first's data: Property 'passengers' is missing in " +
        `type '{ id: string; status: "PROCESSING"; }' but required in type '{ id: string; passengers: string[]; }'.`,
    );
    expect(verdict.stale).toEqual([]);
  });

  it('passes a new optional field in an answer and a new optional query parameter', () => {
    expect(sites(verdicts.addedOptionalField)).toEqual([]);
    expect(sites(verdicts.optionalQueryParameter)).toEqual([]);
  });

  it('refuses a newly required request body field and a newly required query parameter', () => {
    expect(sites(verdicts.requiredRequestField)).toEqual(['payBooking request body']);
    expect(verdicts.requiredRequestField.unrecorded[0]?.message).toBe(
      "the body a 01-first client sends is no longer accepted by 02-email: Property 'email' is missing in type " +
        "'{ token: string; note?: string | undefined; } & {}' but required in type " +
        "'{ token: string; note?: string | undefined; email: string; }'.",
    );
    expect(sites(verdicts.requiredQueryParameter)).toEqual(['payBooking request query']);
  });

  it('refuses an optional field gone from an answer (reading it stops compiling) or from a request body', () => {
    const verdict = verdicts.removedOptionalFields;
    expect(sites(verdict)).toEqual([
      'payBooking response 200',
      'payBooking request body',
      'getBooking response 200',
    ]);
    expect(verdict.unrecorded.map((finding) => finding.reason)).toEqual([
      ': no longer has seat',
      ': no longer has note',
      ': no longer has seat',
    ]);
  });

  it('compares a recursive schema with itself without a break', () => {
    expect(sites(verdicts.recursiveSchema)).toEqual([]);
  });

  it('refuses a removed operation', () => {
    expect(sites(verdicts.removedOperation)).toEqual(['getBooking removed']);
    expect(verdicts.removedOperation.unrecorded[0]?.route).toBe('GET /bookings/{id}');
  });

  it('passes a break its record names', () => {
    const verdict = verdicts.recorded202;
    expect(verdict.unrecorded).toEqual([]);
    expect(verdict.recorded.map((finding) => finding.operation)).toEqual(['payBooking']);
    expect(verdict.stale).toEqual([]);
  });

  it('reports a record entry no break matches as stale', () => {
    const verdict = verdicts.staleRecord;
    expect(verdict.unrecorded).toEqual([]);
    expect(verdict.stale).toEqual(processingRecord);
  });
});

describe('parseRecord', () => {
  it('expands operations into one recorded site each, error answers under the status error', () => {
    const changes = parseRecord(
      stringify({
        changes: [
          {
            operations: ['getBooking', 'payBooking'],
            direction: 'response',
            status: 'error',
            integrators: 'Keep a default branch.',
          },
        ],
      }),
      'record.yaml',
    );
    expect(changes).toEqual([
      {
        operation: 'getBooking',
        direction: 'response',
        status: 'error',
        integrators: 'Keep a default branch.',
      },
      {
        operation: 'payBooking',
        direction: 'response',
        status: 'error',
        integrators: 'Keep a default branch.',
      },
    ]);
  });

  it.each([
    [{ operation: 'payBooking', direction: 'response', status: '202' }, 'needs integrators'],
    [{ operation: 'payBooking', direction: 'response', status: 202, integrators: 'x' }, 'needs a status'],
    [{ operation: 'payBooking', direction: 'request', part: 'bodies', integrators: 'x' }, 'needs a part'],
    [
      { operation: 'payBooking', direction: 'request', status: '202', part: 'body', integrators: 'x' },
      'has a status',
    ],
    [{ operations: [], direction: 'removed', integrators: 'x' }, 'must name an operationId'],
    [{ operation: 'payBooking', direction: 'sideways', integrators: 'x' }, 'needs a direction'],
    [{ operation: 'payBooking', direction: 'removed', integrators: 'x', why: 'y' }, 'has unknown keys: why'],
  ])('refuses %j', (entry, problem) => {
    expect(() => parseRecord(stringify({ changes: [entry] }), 'record.yaml')).toThrow(
      `typed clients: record.yaml: changes[0] ${problem}`,
    );
  });
});

describe('recordSuggestion', () => {
  it('groups the operations a break hits the same way into one entry left for integrators to fill', () => {
    const finding = {
      direction: 'response' as const,
      status: 'error',
      route: 'GET /x',
      reason: ' at code: Type \'"GONE"\' is not assignable to type \'"NOT_FOUND"\'.',
      summary: '',
      message: '',
    };
    expect(
      recordSuggestion([
        { ...finding, operation: 'getBooking' },
        { ...finding, operation: 'payBooking' },
      ]),
    ).toBe(
      [
        'changes:',
        '  # at code: Type \'"GONE"\' is not assignable to type \'"NOT_FOUND"\'.',
        '  - operations: [getBooking, payBooking]',
        '    direction: response',
        "    status: 'error'",
        '    integrators: ',
        '',
      ].join('\n'),
    );
  });
});
