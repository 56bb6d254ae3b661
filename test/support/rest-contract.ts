// Checks an observed response against the OpenAPI document: documented status, required headers, body schema.
import type { ValidateFunction } from 'ajv';
import { openApiDocument, openApiOperationsById } from '../../src/contracts/openapi-document';
import {
  anchorSchema,
  createOpenApiAjv,
  operationDefinition,
  resolveDocumentReference,
  toFieldViolations,
} from '../../src/api/rest/openapi-validation';

export interface ObservedResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: unknown;
}

interface ResponseDefinition {
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: unknown }>;
}

const bodyAjv = createOpenApiAjv();
// Header values are text on the wire; integer headers are compared after coercion.
const headerAjv = createOpenApiAjv({ coerceTypes: true });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(key: string, ajv: typeof bodyAjv, schema: unknown): ValidateFunction {
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = ajv.compile(anchorSchema(schema) as object);
    compiled.set(key, validate);
  }
  return validate;
}

export function documentedResponse(operationId: string, status: number): ResponseDefinition | undefined {
  const served = openApiOperationsById.get(operationId);
  if (served === undefined) throw new Error(`no operation ${operationId}`);
  // An /api alias answers as the /v1 operation it stands for, which is where the document describes it.
  const operation = openApiOperationsById.get(served.canonicalOperationId) ?? served;
  const responses = operationDefinition(operation).responses as Record<string, unknown>;
  const response = responses[String(status)] ?? responses.default;
  return response === undefined
    ? undefined
    : (resolveDocumentReference(openApiDocument, response) as ResponseDefinition);
}

/** Every way the response departs from the document; empty when it conforms. */
export function contractViolations(operationId: string, response: ObservedResponse): string[] {
  const definition = documentedResponse(operationId, response.status);
  if (definition === undefined) return [`status ${response.status} is not documented for ${operationId}`];
  const problems: string[] = [];

  for (const [name, headerNode] of Object.entries(definition.headers ?? {})) {
    const header = resolveDocumentReference(openApiDocument, headerNode) as {
      required?: boolean;
      schema: unknown;
    };
    const value = response.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) problems.push(`header ${name} is required`);
      continue;
    }
    const validate = validatorFor(`header:${operationId}:${response.status}:${name}`, headerAjv, {
      type: 'object',
      properties: { value: header.schema },
    });
    const wrapped = { value };
    if (!validate(wrapped))
      problems.push(`header ${name}: ${JSON.stringify(toFieldViolations(validate.errors))}`);
  }

  const content = definition.content;
  if (content === undefined) return problems;
  const contentType = (response.headers['content-type'] ?? '').split(';')[0].trim();
  const media = content[contentType];
  if (media === undefined) {
    problems.push(`content type "${contentType}" is not one of ${Object.keys(content).join(', ')}`);
    return problems;
  }
  const validate = validatorFor(
    `body:${operationId}:${response.status}:${contentType}`,
    bodyAjv,
    media.schema,
  );
  if (!validate(response.body)) problems.push(`body: ${JSON.stringify(toFieldViolations(validate.errors))}`);
  return problems;
}

export function expectContract(operationId: string, response: ObservedResponse): void {
  expect({
    operationId,
    status: response.status,
    problems: contractViolations(operationId, response),
  }).toEqual({
    operationId,
    status: response.status,
    problems: [],
  });
}

/** Reads a fetch response into the plain shape the checks use. */
export async function observe(response: Response): Promise<ObservedResponse> {
  const text = await response.text();
  let body: unknown = text;
  if (/json/.test(response.headers.get('content-type') ?? '') && text !== '') body = JSON.parse(text);
  return { status: response.status, headers: Object.fromEntries(response.headers.entries()), body };
}

export interface RestRequest {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Sends requests to one server with one bearer token (JSON bodies), each answer read by `observe`. */
export function bearerRequests(
  baseUrl: () => string,
  token: () => string,
): (path: string, request?: RestRequest) => Promise<ObservedResponse> {
  return async (path, request = {}) => {
    const response = await fetch(`${baseUrl()}${path}`, {
      method: request.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token()}`,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...request.headers,
      },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    });
    return observe(response);
  };
}
