// Request validators compiled once from the OpenAPI document's own parameters, bodies and schemas (ajv, JSON Schema 2020-12).
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  documentNodeAt,
  openApiDocument,
  type OpenApiDocument,
  type OpenApiOperation,
} from '../../contracts/openapi-document';
import { validationFailed, type FieldViolation } from '../../domain/errors';
import { isUuid, nulCharacterViolations } from '../../domain/validation';

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

/** A copy of a schema whose local references point into the registered document. */
export function anchorSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(anchorSchema);
  if (!isObject(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/')
        ? `${documentSchemaId}${value}`
        : anchorSchema(value),
    ]),
  );
}

/**
 * An ajv instance that knows the document. Strict mode stays on so a typo in the document fails at start;
 * the OpenAPI annotations (`example`, `x-sensitive`) are declared as known keywords instead.
 */
export function createOpenApiAjv(options: { coerceTypes?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    coerceTypes: options.coerceTypes ?? false,
  });
  addFormats(ajv);
  // ajv-formats also accepts `urn:uuid:` prefixes; ids here are bare UUIDs like everywhere else in the service.
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) });
  ajv.addFormat('password', true);
  ajv.addVocabulary(['example', 'x-sensitive', 'components']);
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
  const pathItem = openApiDocument.paths[operation.path];
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

function describe(error: ErrorObject): { child?: string; message: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { child: String(params.missingProperty), message: 'is required' };
    case 'additionalProperties':
      return { child: String(params.additionalProperty), message: 'is not a known field' };
    case 'enum':
      return {
        message: `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`,
      };
    case 'format':
      return { message: `must be a valid ${String(params.format)}` };
    default:
      return { message: error.message ?? 'is invalid' };
  }
}

/** ajv errors as the contract's field violations, without echoing any rejected value. */
export function toFieldViolations(
  errors: readonly ErrorObject[] | null | undefined,
  nameOf: (path: string) => string = (path) => path,
): FieldViolation[] {
  const seen = new Set<string>();
  const violations: FieldViolation[] = [];
  for (const error of errors ?? []) {
    const { child, message } = describe(error);
    const violation = {
      field: nameOf(fieldPath(error.instancePath, child)),
      message: message.slice(0, maximumMessageLength),
    };
    const key = `${violation.field}\n${violation.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    violations.push(violation);
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
