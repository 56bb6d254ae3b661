// Loads openapi/openapi.yaml once and lists its operations, and their /api aliases, with scopes and roles.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { roles, type Role } from '../domain/roles';
import { projectRoot } from '../project-root';

export const httpMethods = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;
export type HttpMethod = (typeof httpMethods)[number];

/**
 * `owner-or-staff`: a customer acts only on their own resources, agents and admins on any. `owner-or-admin`: only
 * the caller that made a resource acts on it, and admins (operators) on any; agents are callers like any other.
 */
export const ownerships = ['owner-or-staff', 'owner-or-admin'] as const;
export type Ownership = (typeof ownerships)[number];

function isOwnership(value: unknown): value is Ownership {
  return (ownerships as readonly unknown[]).includes(value);
}

export interface OpenApiOperation {
  method: HttpMethod;
  /** The OpenAPI path template, e.g. `/v1/bookings/{booking_id}`. */
  path: string;
  /** Where the document describes it: `path`, or the `/v1` path of an `/api` alias. */
  documentedPath: string;
  /** The same path in router syntax, e.g. `/v1/bookings/:booking_id`. */
  routerPath: string;
  operationId: string;
  /** The `/v1` operation an `/api` alias stands for; otherwise its own id. */
  canonicalOperationId: string;
  scopes: readonly string[];
  roles: readonly Role[];
  ownership: Ownership | null;
  public: boolean;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

class OpenApiContractError extends Error {
  constructor(where: string, problem: string) {
    super(`openapi/openapi.yaml ${where}: ${problem}`);
    this.name = 'OpenApiContractError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/**
 * The node a local reference (`#/components/schemas/Booking`) points at, one hop only; undefined when it is
 * not local or names nothing.
 */
export function documentNodeAt(document: OpenApiDocument, reference: string): unknown {
  if (!reference.startsWith('#/')) return undefined;
  return reference
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((parent, part) => (isRecord(parent) ? parent[part] : undefined), document);
}

function readDocument(documentPath: string): OpenApiDocument {
  const parsed: unknown = parse(fs.readFileSync(documentPath, 'utf8'));
  if (!isRecord(parsed) || typeof parsed.openapi !== 'string' || !isRecord(parsed.info)) {
    throw new OpenApiContractError('root', 'is not an OpenAPI document');
  }
  if (!isRecord(parsed.paths) || !isRecord(parsed.components)) {
    throw new OpenApiContractError('root', 'needs paths and components');
  }
  return parsed as OpenApiDocument;
}

/** Scopes of an operation; every alternative security scheme must ask for the same ones. */
function readScopes(where: string, security: unknown): string[] | null {
  if (!Array.isArray(security)) throw new OpenApiContractError(where, 'needs a security list');
  if (security.length === 0) return null;
  const scopeLists = security.map((requirement) => {
    if (!isRecord(requirement)) throw new OpenApiContractError(where, 'has a malformed security requirement');
    return Object.values(requirement).map((scopes) => {
      if (!isStringArray(scopes)) throw new OpenApiContractError(where, 'has malformed security scopes');
      return [...scopes].sort();
    });
  });
  const [first, ...rest] = scopeLists.flat();
  if (rest.some((scopes) => scopes.join(' ') !== first.join(' '))) {
    throw new OpenApiContractError(where, 'lists different scopes for its security schemes');
  }
  return first;
}

/** `x-roles: []` is written out, never implied: any role, or none (a partner's service client), holding the scopes. */
function readRoles(where: string, value: unknown): Role[] {
  if (!isStringArray(value)) {
    throw new OpenApiContractError(where, 'needs an x-roles list ([] for any role)');
  }
  const unknownRole = value.find((role) => !(roles as readonly string[]).includes(role));
  if (unknownRole) throw new OpenApiContractError(where, `names unknown role "${unknownRole}"`);
  return value as Role[];
}

function routerPathOf(pathTemplate: string): string {
  return pathTemplate.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function readOperation(pathTemplate: string, method: HttpMethod, operation: unknown): OpenApiOperation {
  const where = `${method} ${pathTemplate}`;
  if (!isRecord(operation) || typeof operation.operationId !== 'string') {
    throw new OpenApiContractError(where, 'needs an operationId');
  }
  const scopes = readScopes(where, operation.security);
  const ownership = operation['x-ownership'];
  if (ownership !== undefined && !isOwnership(ownership)) {
    throw new OpenApiContractError(where, `has unknown x-ownership ${JSON.stringify(ownership)}`);
  }
  if (scopes === null && ownership !== undefined) {
    throw new OpenApiContractError(where, 'is public, so it cannot carry x-ownership');
  }
  return {
    method,
    path: pathTemplate,
    documentedPath: pathTemplate,
    routerPath: routerPathOf(pathTemplate),
    operationId: operation.operationId,
    canonicalOperationId: operation.operationId,
    scopes: scopes ?? [],
    roles: scopes === null ? [] : readRoles(where, operation['x-roles']),
    ownership: isOwnership(ownership) ? ownership : null,
    public: scopes === null,
  };
}

function listDocumentedOperations(document: OpenApiDocument): OpenApiOperation[] {
  const operations: OpenApiOperation[] = [];
  for (const [pathTemplate, pathItem] of Object.entries(document.paths)) {
    for (const method of httpMethods) {
      const operation = pathItem[method.toLowerCase()];
      if (operation !== undefined) operations.push(readOperation(pathTemplate, method, operation));
    }
  }
  return operations;
}

const versionedPrefix = '/v1/';
const aliasPrefix = '/api/';

/**
 * Every `/v1` operation is also served under `/api` by the same handler, with the operationId suffix `Api`. The
 * document names each operation once, so generated clients get one method per operation; the aliases are built
 * here, for the router, the policy and the tests.
 */
function apiAliasOf(operation: OpenApiOperation): OpenApiOperation {
  const aliasPath = `${aliasPrefix}${operation.path.slice(versionedPrefix.length)}`;
  return {
    ...operation,
    path: aliasPath,
    routerPath: routerPathOf(aliasPath),
    operationId: `${operation.operationId}Api`,
  };
}

function withApiAliases(documented: readonly OpenApiOperation[]): OpenApiOperation[] {
  const operations = [
    ...documented,
    ...documented.filter((operation) => operation.path.startsWith(versionedPrefix)).map(apiAliasOf),
  ];
  const seen = new Set<string>();
  const routes = new Set<string>();
  for (const { operationId, method, path: pathTemplate } of operations) {
    if (seen.has(operationId)) throw new OpenApiContractError(operationId, 'is not a unique operationId');
    seen.add(operationId);
    const route = `${method} ${pathTemplate}`;
    if (routes.has(route)) throw new OpenApiContractError(route, 'is documented and also an /api alias');
    routes.add(route);
  }
  return operations;
}

export const openApiDocumentPath: string = path.join(projectRoot, 'openapi', 'openapi.yaml');
export const openApiDocument: OpenApiDocument = readDocument(openApiDocumentPath);
/** The operations the document describes, each once. */
export const documentedOperations: readonly OpenApiOperation[] = listDocumentedOperations(openApiDocument);
/** Every operation the REST front serves: the documented ones and the `/api` alias of each `/v1` one. */
export const openApiOperations: readonly OpenApiOperation[] = withApiAliases(documentedOperations);
export const openApiOperationsById: ReadonlyMap<string, OpenApiOperation> = new Map(
  openApiOperations.map((operation) => [operation.operationId, operation]),
);
