// Request validators compiled once from the OpenAPI document's own parameters, bodies and schemas (ajv, JSON Schema 2020-12).
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { blankTripCancellationReason } from '../../domain/trip-cancellation';
import {
  documentNodeAt,
  openApiDocument,
  type OpenApiDocument,
  type OpenApiOperation,
} from '../../contracts/openapi-document';
import { validationFailed, type FieldViolation } from '../../domain/errors';
import { defaultMaxPassengers, fieldMessages, isUuid, nulCharacterViolations } from '../../domain/validation';

/** The document is registered under this id, so every `#/components/...` reference resolves against it. */
export const documentSchemaId = 'urn:bus-booking:openapi';

const maximumFieldLength = 200;
const maximumMessageLength = 500;
const maximumViolations = 50;

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Follows a local `$ref` (`#/components/parameters/PageSize`) to the node it names. */
export function resolveDocumentReference(document: OpenApiDocument, node: unknown): unknown {
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops += 1) {
    const reference = current.$ref;
    if (!reference.startsWith('#/') || hops > 10)
      throw new Error(`unsupported OpenAPI reference ${reference}`);
    current = documentNodeAt(document, reference);
    if (current === undefined) throw new Error(`OpenAPI reference ${reference} names nothing`);
  }
  return current;
}

/**
 * A schema whose local references point into the registered document. Only nodes holding a reference are
 * copied: the others stay the document's own, so a failed rule can be traced to the document node it is in.
 */
export function anchorSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) {
    const items = schema.map(anchorSchema);
    return items.every((item, index) => item === schema[index]) ? schema : items;
  }
  if (!isObject(schema)) return schema;
  let copied = false;
  const entries = Object.entries(schema).map(([key, value]) => {
    const anchored =
      key === '$ref' && typeof value === 'string' && value.startsWith('#/')
        ? `${documentSchemaId}${value}`
        : anchorSchema(value);
    if (anchored !== value) copied = true;
    return [key, anchored];
  });
  return copied ? Object.fromEntries(entries) : schema;
}

/**
 * An ajv instance that knows the document. Strict mode stays on so a typo in the document fails at start;
 * the OpenAPI annotations (`example`, `x-sensitive`, `discriminator`) are declared as known keywords instead.
 * A `discriminator` is a hint for generated clients only: the `oneOf` beside it already admits exactly one of its
 * schemas, and ajv's own discriminator support refuses the `mapping` those clients read.
 */
export function createOpenApiAjv(options: { coerceTypes?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    coerceTypes: options.coerceTypes ?? false,
    // Each error then names the schema node it failed in, which is how it is told in words (ruleMessages).
    verbose: true,
  });
  addFormats(ajv);
  // ajv-formats also accepts `urn:uuid:` prefixes; ids here are bare UUIDs like everywhere else in the service.
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) });
  ajv.addFormat('password', true);
  ajv.addVocabulary(['example', 'x-sensitive', 'discriminator', 'components']);
  ajv.addSchema({ $id: documentSchemaId, components: openApiDocument.components });
  return ajv;
}

export type ParameterLocation = 'path' | 'query' | 'header';

interface ParameterDefinition {
  name: string;
  in: ParameterLocation | 'cookie';
  required?: boolean;
  schema: unknown;
}

function readParameters(operation: JsonObject): ParameterDefinition[] {
  const parameters = Array.isArray(operation.parameters) ? operation.parameters : [];
  return parameters.map(
    (parameter) => resolveDocumentReference(openApiDocument, parameter) as ParameterDefinition,
  );
}

export function operationDefinition(operation: OpenApiOperation): JsonObject {
  const pathItem = openApiDocument.paths[operation.documentedPath];
  const definition = pathItem?.[operation.method.toLowerCase()];
  if (!isObject(definition)) throw new Error(`no OpenAPI operation ${operation.operationId}`);
  return definition;
}

export interface RequestBodyDefinition {
  required: boolean;
  schema: unknown;
}

export function readRequestBody(operation: OpenApiOperation): RequestBodyDefinition | undefined {
  const definition = operationDefinition(operation);
  if (definition.requestBody === undefined) return undefined;
  const requestBody = resolveDocumentReference(openApiDocument, definition.requestBody) as JsonObject;
  const content = requestBody.content as Record<string, { schema: unknown }> | undefined;
  const json = content?.['application/json'];
  if (json === undefined)
    throw new Error(`${operation.operationId}: only application/json bodies are served`);
  return { required: requestBody.required === true, schema: json.schema };
}

/** Turns `/passengers/0/email` into `passengers[0].email`, the contract's field path notation. */
export function fieldPath(instancePath: string, child?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  return segments
    .reduce(
      (path, segment) =>
        /^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment,
      '',
    )
    .slice(0, maximumFieldLength);
}

type RuleMessage = (error: ErrorObject) => string | undefined;

const always =
  (message: string): RuleMessage =>
  () =>
    message;

/** The `maxLength` of the node a rule failed in, so a sentence states the document's own limit. */
const withMaxLength =
  (sentence: (maxLength: number) => string): RuleMessage =>
  (error) =>
    sentence(Number((error.parentSchema as { maxLength?: unknown }).maxLength));

const onlyFor =
  (keywords: readonly string[], message: string): RuleMessage =>
  (error) =>
    keywords.includes(error.keyword) ? message : undefined;

const discountCodeMessage = 'must be 4 to 32 letters, digits or -, such as SUMMER-27';
const instantMessage = 'must be an RFC 3339 date and time such as 2027-06-01T00:00:00Z';

/**
 * Document nodes whose rules a generic sentence would not say well (a pattern above all, which is never quoted):
 * the sentence the caller gets when a value breaks a rule of that node. The domain's messages are reused where the
 * domain states the same rule (gRPC answers with them). test/unit/rest/openapi-validation.test.ts checks that every
 * pattern a request can break is here.
 */
const ruleMessageSources: readonly [pointer: string, message: RuleMessage][] = [
  ['#/components/schemas/Email', always(fieldMessages.email)],
  ['#/components/schemas/Phone', always(fieldMessages.phone)],
  ['#/components/schemas/NullablePhone', always(fieldMessages.phone)],
  ['#/components/schemas/SeatNumber', always(fieldMessages.seatNumber)],
  ['#/components/schemas/StopCode', always(fieldMessages.stopCode)],
  [
    '#/components/schemas/PersonName',
    (error) => {
      if (error.keyword === 'type') return fieldMessages.notAString;
      const spacesOnly = typeof error.data === 'string' && error.data.trim() === '';
      return error.keyword === 'pattern' && !spacesOnly
        ? fieldMessages.controlCharacters
        : fieldMessages.nameLength;
    },
  ],
  [
    '#/components/schemas/SearchTerm',
    withMaxLength(
      (maxLength) => `must be 1 to ${maxLength} characters, not only spaces, without control characters`,
    ),
  ],
  ['#/components/schemas/CalendarDate', always('must be a date YYYY-MM-DD from 0001-01-01 to 9999-12-31')],
  ['#/components/schemas/PassengerTypeCode', always('must be a passenger type code such as ADULT or CHILD')],
  [
    '#/components/schemas/CreateBookingRequest/properties/discount_code',
    always('must be a discount code: letters, digits and dashes, at most 32'),
  ],
  [
    '#/components/schemas/MoneyInput/properties/currency',
    always('must be a 3-letter ISO 4217 currency code such as EUR'),
  ],
  ['#/components/schemas/ConfirmPaymentRequest/properties/payment_token', always(fieldMessages.paymentToken)],
  [
    '#/components/schemas/ConfirmPaymentRequest/properties/payment_method',
    always(fieldMessages.paymentMethod),
  ],
  [
    '#/components/schemas/CancelBookingRequest/properties/reason',
    onlyFor(['pattern'], fieldMessages.controlCharacters),
  ],
  [
    '#/components/schemas/CancelPassengersRequest/properties/reason',
    onlyFor(['pattern'], fieldMessages.controlCharacters),
  ],
  [
    '#/components/schemas/RecordBoardingRequest/properties/ticket',
    always('must be the scanned ticket: 1 to 4096 characters of a compact JWS'),
  ],
  [
    '#/components/schemas/RecordBoardingRequest/properties/device_id',
    always('must be 1 to 64 letters, digits or . _ : -'),
  ],
  [
    '#/components/schemas/CancelTripRequest/properties/reason',
    (error) => {
      if (error.keyword !== 'pattern') return undefined;
      const spacesOnly = typeof error.data === 'string' && error.data.trim() === '';
      return spacesOnly ? blankTripCancellationReason : fieldMessages.controlCharacters;
    },
  ],
  ['#/components/schemas/UpdateBookingRequest', onlyFor(['minProperties'], fieldMessages.emptyUpdate)],
  [
    '#/components/schemas/PassengerUpdate',
    onlyFor(['minProperties'], fieldMessages.passengerUpdateChangesNothing),
  ],
  [
    '#/components/schemas/CreateBookingRequest/properties/passengers',
    onlyFor(['minItems', 'maxItems'], fieldMessages.passengerCount(defaultMaxPassengers)),
  ],
  ['#/components/schemas/LoginRequest/properties/password', onlyFor(['pattern'], fieldMessages.nulCharacter)],
  ['#/components/schemas/WebhookEndpointUrl', onlyFor(['pattern'], fieldMessages.nulCharacter)],
  ['#/components/schemas/WebhookDescription', onlyFor(['pattern'], fieldMessages.nulCharacter)],
  [
    '#/components/schemas/RefreshRequest/properties/refresh_token',
    always('must be a refresh token as issued: printable ASCII without spaces'),
  ],
  ['#/components/schemas/Payload/properties/metadata/propertyNames', always(fieldMessages.nulPropertyName)],
  [
    '#/components/parameters/IfMatch/schema',
    always('must be the booking\'s ETag as last read (its version in quotes, such as "3"), or *'),
  ],
  ['#/components/parameters/IdempotencyKey/schema', always(fieldMessages.idempotencyKey)],
  [
    '#/components/parameters/RequestId/schema',
    withMaxLength((maxLength) => `must be 1 to ${maxLength} printable ASCII characters without spaces`),
  ],
  [
    '#/components/parameters/TemporalNamespace/schema',
    withMaxLength((maxLength) => `must be 1 to ${maxLength} printable ASCII characters without spaces`),
  ],
  [
    '#/components/parameters/PageToken/schema',
    always('must be the next_page_token of the previous page, as it was issued'),
  ],
  [
    '#/components/parameters/StripeSignature/schema',
    withMaxLength((maxLength) => `must be Stripe's signature: 1 to ${maxLength} printable ASCII characters`),
  ],
  ['#/components/schemas/StripeEvent/properties/id', always('must be printable ASCII')],
  ['#/components/schemas/StripeEvent/properties/type', always('must be an event type')],
  [
    '#/components/parameters/Passengers/schema',
    withMaxLength(
      (maxLength) =>
        `must be 1 to ${maxLength} characters of passenger types with counts, such as ADULT:2,CHILD:1`,
    ),
  ],
  ['#/components/parameters/DiscountCodeParameter/schema', always(discountCodeMessage)],
  ['#/components/schemas/CreateDiscountCodeRequest/properties/code', always(discountCodeMessage)],
  [
    '#/components/schemas/CreateDiscountCodeRequest/properties/currency',
    always('must be an ISO 4217 code such as EUR, or null'),
  ],
  ['#/components/schemas/CreateDiscountCodeRequest/properties/valid_from', always(instantMessage)],
  ['#/components/schemas/CreateDiscountCodeRequest/properties/valid_until', always(instantMessage)],
];

const ruleMessages: ReadonlyMap<object, RuleMessage> = new Map(
  ruleMessageSources.map(([pointer, message]) => {
    const node = documentNodeAt(openApiDocument, pointer);
    if (!isObject(node)) throw new Error(`message for ${pointer}, which names no schema of the document`);
    return [node, message];
  }),
);

/** Whether a document node's failed rules are told by a sentence of their own (ruleMessageSources). */
export function hasRuleMessage(node: object): boolean {
  return ruleMessages.has(node);
}

const formatMessages: Readonly<Record<string, string>> = {
  uuid: fieldMessages.uuid,
  email: fieldMessages.email,
  date: 'must be a date YYYY-MM-DD',
  byte: 'must be base64 text',
  int64: `must be a whole number from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
};

function typeName(type: string): string {
  const names: Record<string, string> = {
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    boolean: 'true or false',
    object: 'an object',
    array: 'a list',
    null: 'null',
  };
  return names[type] ?? type;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** A generic rule in words; a pattern is never quoted, it is only said to be broken. */
function genericMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const limit = Number(params.limit);
  switch (error.keyword) {
    case 'type':
      return `must be ${String(params.type).split(',').map(typeName).join(' or ')}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(params.allowedValue)}`;
    case 'format':
      return formatMessages[String(params.format)] ?? `must be a valid ${String(params.format)}`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${plural(limit, 'character')}`;
    case 'maxLength':
      return `must be at most ${plural(limit, 'character')}`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'minItems':
      return `must list at least ${plural(limit, 'item')}`;
    case 'maxItems':
      return `must list at most ${plural(limit, 'item')}`;
    case 'minProperties':
      return `must have at least ${plural(limit, 'field')}`;
    case 'maxProperties':
      return `must have at most ${limit} ${limit === 1 ? 'entry' : 'entries'}`;
    case 'uniqueItems':
      return 'must not list the same item twice';
    default:
      return 'does not have the form the OpenAPI document gives for it';
  }
}

function describe(error: ErrorObject): { child?: string; message: string } {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return { child: String(params.missingProperty), message: 'is required' };
  if (error.keyword === 'additionalProperties')
    return { child: String(params.additionalProperty), message: 'is not a known field' };
  const node = error.parentSchema;
  const ruleMessage = isObject(node) ? ruleMessages.get(node)?.(error) : undefined;
  return { message: ruleMessage ?? genericMessage(error) };
}

/**
 * ajv errors as the contract's field violations: one per field (the first rule it breaks, in words), without
 * echoing any rejected value or quoting a pattern.
 */
export function toFieldViolations(
  errors: readonly ErrorObject[] | null | undefined,
  nameOf: (path: string) => string = (path) => path,
): FieldViolation[] {
  const seen = new Set<string>();
  const violations: FieldViolation[] = [];
  for (const error of errors ?? []) {
    const { child, message } = describe(error);
    const field = nameOf(fieldPath(error.instancePath, child));
    if (seen.has(field)) continue;
    seen.add(field);
    violations.push({ field, message: message.slice(0, maximumMessageLength) });
    if (violations.length === maximumViolations) break;
  }
  return violations;
}

function parameterObjectSchema(
  parameters: ParameterDefinition[],
  closed: boolean,
  nameOf = (name: string) => name,
) {
  return {
    type: 'object',
    properties: Object.fromEntries(
      parameters.map((parameter) => [nameOf(parameter.name), anchorSchema(parameter.schema)]),
    ),
    required: parameters
      .filter((parameter) => parameter.required === true)
      .map((parameter) => nameOf(parameter.name)),
    ...(closed ? { additionalProperties: false } : {}),
  };
}

export interface RequestInput {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

export interface OperationRequestValidator {
  readonly requestBody: RequestBodyDefinition | undefined;
  /** The operation changes a versioned resource only under If-Match; without it the answer is 428, not 400. */
  readonly requiresIfMatch: boolean;
  /** Validates (and coerces query, path and header strings to the declared types); throws nothing. */
  validate(input: RequestInput): { input: RequestInput; violations: FieldViolation[] };
}

/**
 * U+0000 anywhere in the request, by the service's one rule (the document's schemas say the same for each
 * string). A field reported here is not reported again by the schema, so the answer names the real problem.
 */
function withNulCharactersFirst(
  input: RequestInput,
  headerNames: ReadonlyMap<string, string>,
  schemaViolations: FieldViolation[],
): FieldViolation[] {
  const nulViolations = [
    ...nulCharacterViolations(input.path),
    ...nulCharacterViolations(input.query),
    ...nulCharacterViolations(input.headers, '', (name) => headerNames.get(name) ?? name),
    ...nulCharacterViolations(input.body),
  ];
  const named = new Set(nulViolations.map((violation) => violation.field));
  return [...nulViolations, ...schemaViolations.filter((violation) => !named.has(violation.field))];
}

export function compileRequestValidator(
  operation: OpenApiOperation,
  ajvs: { parameters: Ajv2020; bodies: Ajv2020 },
): OperationRequestValidator {
  const parameters = readParameters(operationDefinition(operation));
  const inLocation = (location: ParameterLocation) =>
    parameters.filter((parameter) => parameter.in === location);
  // Every declared header is checked, X-Request-Id too: a malformed one answers 400 (the response still
  // carries a server-made id), as the document's description of the header says.
  const headerParameters = inLocation('header');
  const headerNames = new Map(
    headerParameters.map((parameter) => [parameter.name.toLowerCase(), parameter.name]),
  );

  const validatePath = ajvs.parameters.compile(parameterObjectSchema(inLocation('path'), false));
  // Unknown query parameters are refused like unknown body fields: a typo must not silently widen a search.
  const validateQuery = ajvs.parameters.compile(parameterObjectSchema(inLocation('query'), true));
  const validateHeaders = ajvs.parameters.compile(
    parameterObjectSchema(headerParameters, false, (name) => name.toLowerCase()),
  );
  const requestBody = readRequestBody(operation);
  const validateBody: ValidateFunction | undefined =
    requestBody === undefined ? undefined : ajvs.bodies.compile(anchorSchema(requestBody.schema) as object);

  return {
    requestBody,
    requiresIfMatch: headerParameters.some(
      (parameter) => parameter.name.toLowerCase() === 'if-match' && parameter.required === true,
    ),
    validate(raw) {
      const input: RequestInput = {
        path: { ...raw.path },
        query: { ...raw.query },
        headers: Object.fromEntries(
          [...headerNames.keys()]
            .filter((name) => raw.headers[name] !== undefined)
            .map((name) => [name, raw.headers[name]]),
        ),
        body: raw.body,
      };
      const violations: FieldViolation[] = [];
      if (!validatePath(input.path)) violations.push(...toFieldViolations(validatePath.errors));
      if (!validateQuery(input.query)) violations.push(...toFieldViolations(validateQuery.errors));
      if (!validateHeaders(input.headers)) {
        violations.push(
          ...toFieldViolations(validateHeaders.errors, (name) => headerNames.get(name) ?? name),
        );
      }
      // An optional body may be left out; a required one never arrives here missing (the body reader refuses it).
      const bodyGiven = input.body !== undefined;
      if (validateBody !== undefined && bodyGiven && !validateBody(input.body)) {
        violations.push(...toFieldViolations(validateBody.errors));
      }
      return {
        input,
        violations: withNulCharactersFirst(input, headerNames, violations).slice(0, maximumViolations),
      };
    },
  };
}

let standaloneAjvs: { parameters: Ajv2020; bodies: Ajv2020 } | undefined;

/** Validators of operations served outside the API router (the identity provider's), compiled on first use. */
export function documentRequestValidator(operation: OpenApiOperation): {
  /** The request's declared inputs, or VALIDATION_FAILED naming every bad field. */
  validate(raw: RequestInput): RequestInput;
} {
  let validator: OperationRequestValidator | undefined;
  return {
    validate(raw) {
      standaloneAjvs ??= { parameters: createOpenApiAjv({ coerceTypes: true }), bodies: createOpenApiAjv() };
      validator ??= compileRequestValidator(operation, standaloneAjvs);
      const { input, violations } = validator.validate(raw);
      if (violations.length > 0) throw validationFailed(violations);
      return input;
    },
  };
}
