// The names whose values never reach a log line, derived from the contracts' sensitive marks, and the redactor.
import pino from 'pino';
import { documentNodeAt, openApiDocument } from '../contracts/openapi-document';
import { sensitiveFieldNames, sensitivePropertyNames } from '../contracts/proto-options';

export const redactedValue = '[redacted]';

/**
 * Credentials that are not resource fields, so no contract marks them: HTTP and gRPC auth headers, cookies, API keys
 * and the identity provider's own secrets. The login schemas' password and token fields are also marked
 * `x-sensitive` in the OpenAPI document; a unit test checks that those marks stay.
 */
export const credentialNames: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'password',
  'password_hash',
  'access_token',
  'refresh_token',
  'id_token',
  'private_key',
  'client_secret',
  'api_key',
];

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A schema is sensitive when it, the schema it references, its items or any of its alternatives is marked. */
function isSensitiveSchema(schema: unknown, visited: Set<unknown> = new Set()): boolean {
  if (!isObject(schema) || visited.has(schema)) return false;
  visited.add(schema);
  if (schema['x-sensitive'] === true) return true;
  if (
    typeof schema.$ref === 'string' &&
    isSensitiveSchema(documentNodeAt(openApiDocument, schema.$ref), visited)
  )
    return true;
  if (isSensitiveSchema(schema.items, visited)) return true;
  return ['oneOf', 'anyOf', 'allOf'].some(
    (keyword) =>
      Array.isArray(schema[keyword]) &&
      (schema[keyword] as unknown[]).some((alternative) => isSensitiveSchema(alternative, visited)),
  );
}

function collectOpenApiSensitiveNames(node: unknown, found: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectOpenApiSensitiveNames(item, found);
    return;
  }
  if (!isObject(node)) return;
  if (isObject(node.properties)) {
    for (const [propertyName, propertySchema] of Object.entries(node.properties)) {
      if (isSensitiveSchema(propertySchema)) found.add(propertyName);
    }
  }
  // Parameters and headers carry their mark on themselves or on their schema.
  if (typeof node.name === 'string' && typeof node.in === 'string') {
    if (node['x-sensitive'] === true || isSensitiveSchema(node.schema)) found.add(node.name);
  }
  for (const child of Object.values(node)) collectOpenApiSensitiveNames(child, found);
}

/** Property and parameter names marked `x-sensitive` (directly or through a `$ref`) anywhere in the OpenAPI document. */
export const openApiSensitiveNames: ReadonlySet<string> = (() => {
  const found = new Set<string>();
  collectOpenApiSensitiveNames(openApiDocument.paths, found);
  collectOpenApiSensitiveNames(openApiDocument.components, found);
  return found;
})();

/** `first_name`, `firstName`, `First-Name` and `FIRSTNAME` all name the same field in a log object. */
function normalizeKey(key: string): string {
  return key.replace(/[-_]/g, '').toLowerCase();
}

/** Every name redacted from logs, as written in the contracts plus the credentials above. */
export const sensitiveLogKeys: ReadonlySet<string> = new Set([
  ...sensitiveFieldNames,
  ...sensitivePropertyNames,
  ...openApiSensitiveNames,
  ...credentialNames,
]);

const normalizedSensitiveKeys: ReadonlySet<string> = new Set([...sensitiveLogKeys].map(normalizeKey));

/** Answers for the keys met so far: log lines repeat the same few, and normalizing each anew showed in profiles. */
const sensitivityOfKey = new Map<string, boolean>();
const maximumRememberedKeys = 10_000;

export function isSensitiveKey(key: string): boolean {
  let sensitive = sensitivityOfKey.get(key);
  if (sensitive === undefined) {
    sensitive = normalizedSensitiveKeys.has(normalizeKey(key));
    if (sensitivityOfKey.size >= maximumRememberedKeys) sensitivityOfKey.clear();
    sensitivityOfKey.set(key, sensitive);
  }
  return sensitive;
}

const maximumDepth = 16;
const noKeys: ReadonlySet<string> = new Set();

function redactNode(
  value: unknown,
  depth: number,
  ancestors: Set<object>,
  keptKeys: ReadonlySet<string> = noKeys,
): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (ancestors.has(value)) return '[circular]';
  if (depth >= maximumDepth) return '[too deep]';
  // An error's own fields (a DomainError's details, say) are logged too, so it is walked in its serialized form.
  if (value instanceof Error) return redactNode({ ...pino.stdSerializers.err(value) }, depth, ancestors);
  const isArray = Array.isArray(value);
  // Only plain data is rebuilt; other class instances (Date, Buffer) keep their own serialization.
  if (
    !isArray &&
    Object.getPrototypeOf(value) !== Object.prototype &&
    Object.getPrototypeOf(value) !== null
  ) {
    return value;
  }
  ancestors.add(value);
  let copy: unknown[] | JsonObject | undefined;
  const entries = isArray ? (value as unknown[]).entries() : Object.entries(value as JsonObject);
  for (const [key, child] of entries) {
    const redact =
      !isArray &&
      isSensitiveKey(key as string) &&
      child !== null &&
      child !== undefined &&
      !(keptKeys.has(key as string) && typeof child === 'string');
    const replacement = redact ? redactedValue : redactNode(child, depth + 1, ancestors);
    if (replacement !== child && copy === undefined) {
      copy = isArray ? [...(value as unknown[])] : { ...(value as JsonObject) };
    }
    if (copy !== undefined) (copy as JsonObject)[key as string] = replacement;
  }
  ancestors.delete(value);
  return copy ?? value;
}

/**
 * A copy of `value` with every sensitive key's value replaced, at any depth and inside arrays; the caller's
 * object is never modified, and branches without sensitive keys are shared rather than copied.
 * `keepTopLevel` names top-level keys whose string values stay (a log line's own `method`, say).
 */
export function redactSensitive<T>(value: T, keepTopLevel: ReadonlySet<string> = noKeys): T {
  return redactNode(value, 0, new Set(), keepTopLevel) as T;
}
