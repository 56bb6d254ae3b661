// Authorization as the contracts write it: scopes and roles per REST operation and gRPC method, and ownership.
import type { Actor } from '../domain/actor';
import {
  openApiOperations,
  openApiOperationsById,
  type OpenApiOperation,
} from '../contracts/openapi-document';
import {
  grpcPathAuthorization,
  grpcPathHttpBindings,
  type MethodAuthorization,
} from '../contracts/proto-options';
import { BookingServiceService } from '../generated/com/example/bookings/v1/booking_service';
import { WebhookServiceService } from '../generated/com/example/bookings/v1/webhook_service';
import { FareServiceService } from '../generated/com/example/bookings/v1/fare_service';
import { DomainError, notFound, permissionDenied } from '../domain/errors';
import { isStaff, type Role } from '../domain/roles';

/** What a caller needs: every scope listed, and at least one of the roles (none listed: any role). */
export interface AccessRequirement {
  readonly scopes: readonly string[];
  readonly roles: readonly string[];
}

export function missingScopes(actor: Actor, requirement: AccessRequirement): string[] {
  return requirement.scopes.filter((scope) => !actor.scopes.includes(scope));
}

export function hasRequiredRole(actor: Actor, requirement: AccessRequirement): boolean {
  return requirement.roles.length === 0 || actor.roles.some((role) => requirement.roles.includes(role));
}

/** Throws PERMISSION_DENIED (details name the missing scopes, for RFC 6750's `insufficient_scope`). */
export function assertAllowed(actor: Actor, requirement: AccessRequirement): void {
  const missing = missingScopes(actor, requirement);
  if (missing.length > 0) {
    throw new DomainError('PERMISSION_DENIED', 'The access token lacks a scope this operation requires', {
      details: { missingScopes: missing, requiredScopes: [...requirement.scopes] },
    });
  }
  if (!hasRequiredRole(actor, requirement)) {
    throw permissionDenied('The caller has no role that may perform this operation');
  }
}

/**
 * `owner-or-staff`: a customer acts only on their own resources, agents and admins on any. Another
 * customer's resource answers exactly like a missing one (NOT_FOUND, same message), so ids leak nothing.
 */
export function assertMayActOn(actor: Actor, ownerId: string, resource: { name: string; id: string }): void {
  if (isStaff(actor) || actor.userId === ownerId) return;
  throw notFound(resource.name, resource.id);
}

/** The customer whose resources a listing is limited to; undefined for staff, who see everyone's. */
export function ownerFilter(actor: Actor): string | undefined {
  return isStaff(actor) ? undefined : actor.userId;
}

/** The operation of this id, failing at start-up (not at request time) when the router names an unknown one. */
export function restOperation(operationId: string): OpenApiOperation {
  const operation = openApiOperationsById.get(operationId);
  if (!operation) throw new Error(`openapi/openapi.yaml has no operation "${operationId}"`);
  return operation;
}

export function grpcMethodAuthorization(path: string): MethodAuthorization {
  const authorization = grpcPathAuthorization.get(path);
  if (!authorization) throw new Error(`no gRPC method ${path} in the contracts`);
  return authorization;
}

/**
 * The gRPC side of the policy: a user token's actor must satisfy the method's option; a call without a user
 * token passes only where the contract allows service-only calls and the peer proved a service identity.
 */
export function authorizeGrpcMethod(path: string, caller: { actor?: Actor; serviceIdentity?: string }): void {
  const authorization = grpcMethodAuthorization(path);
  if (caller.actor) {
    assertAllowed(caller.actor, authorization);
    return;
  }
  if (authorization.allowServiceOnly && caller.serviceIdentity) return;
  throw new DomainError('UNAUTHENTICATED', 'A bearer token is required');
}

/** Every scope either contract names: what the embedded authorization server may grant, and nothing else. */
export function contractScopes(): string[] {
  const requirements: AccessRequirement[] = [...openApiOperations, ...grpcPathAuthorization.values()];
  return [...new Set(requirements.flatMap((requirement) => requirement.scopes))].sort();
}

/** Every scope some operation of either contract lets this role use; the embedded provider grants these. */
export function scopesForRoles(roles: readonly Role[]): string[] {
  const scopes = new Set<string>();
  const requirements: AccessRequirement[] = [...openApiOperations, ...grpcPathAuthorization.values()];
  for (const requirement of requirements) {
    if (requirement.roles.some((role) => (roles as readonly string[]).includes(role))) {
      for (const scope of requirement.scopes) scopes.add(scope);
    }
  }
  return [...scopes].sort();
}

interface ProtoHttpBinding {
  /** `BookingService`, `WebhookService` or `FareService`. */
  serviceName: string;
  methodName: string;
  httpMethod: string;
  path: string;
  authorization: MethodAuthorization;
}

function httpBindingsOf(
  serviceName: string,
  service: Record<string, { readonly path: string }>,
): ProtoHttpBinding[] {
  return Object.values(service).map((definition) => {
    const methodName = definition.path.slice(definition.path.lastIndexOf('/') + 1);
    const binding = grpcPathHttpBindings.get(definition.path);
    if (!binding) throw new Error(`${serviceName}.${methodName} has no google.api.http rule`);
    return { serviceName, methodName, ...binding, authorization: grpcMethodAuthorization(definition.path) };
  });
}

/** BookingService RPCs (as the gRPC front serves them) with the REST operation their `google.api.http` option names. */
export function bookingServiceHttpBindings(): ProtoHttpBinding[] {
  return httpBindingsOf('BookingService', BookingServiceService);
}

/** WebhookService RPCs with the REST operation their `google.api.http` option names. */
export function webhookServiceHttpBindings(): ProtoHttpBinding[] {
  return httpBindingsOf('WebhookService', WebhookServiceService);
}

/** FareService RPCs with the REST operation their `google.api.http` option names. */
export function fareServiceHttpBindings(): ProtoHttpBinding[] {
  return httpBindingsOf('FareService', FareServiceService);
}

function sameSet(left: readonly string[], right: readonly string[]): boolean {
  return [...new Set(left)].sort().join(' ') === [...new Set(right)].sort().join(' ');
}

/**
 * Where the two contracts ask for different things: each BookingService, WebhookService and FareService RPC against the REST
 * operation its HTTP rule names, and each `/api` twin against its canonical `/v1` operation. Empty when they agree.
 */
export function findContractDisagreements(
  operations: readonly OpenApiOperation[] = openApiOperations,
  bindings: readonly ProtoHttpBinding[] = [
    ...bookingServiceHttpBindings(),
    ...webhookServiceHttpBindings(),
    ...fareServiceHttpBindings(),
  ],
): string[] {
  const problems: string[] = [];
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  for (const binding of bindings) {
    const operation = operations.find(
      (candidate) => candidate.method === binding.httpMethod && candidate.path === binding.path,
    );
    const where = `${binding.serviceName}.${binding.methodName} ↔ ${binding.httpMethod} ${binding.path}`;
    if (!operation) {
      problems.push(`${where}: no such OpenAPI operation`);
      continue;
    }
    if (!sameSet(operation.scopes, binding.authorization.scopes)) {
      problems.push(
        `${where}: scopes [${binding.authorization.scopes.join(', ')}] vs [${operation.scopes.join(', ')}]`,
      );
    }
    if (!sameSet(operation.roles, binding.authorization.roles)) {
      problems.push(
        `${where}: roles [${binding.authorization.roles.join(', ')}] vs [${operation.roles.join(', ')}]`,
      );
    }
  }
  for (const operation of operations) {
    if (operation.canonicalOperationId === operation.operationId) continue;
    const canonical = byId.get(operation.canonicalOperationId);
    if (!canonical) {
      problems.push(
        `${operation.operationId}: canonical operation ${operation.canonicalOperationId} missing`,
      );
      continue;
    }
    const agrees =
      sameSet(operation.scopes, canonical.scopes) &&
      sameSet(operation.roles, canonical.roles) &&
      operation.ownership === canonical.ownership &&
      operation.public === canonical.public;
    if (!agrees) problems.push(`${operation.operationId}: differs from ${canonical.operationId}`);
  }
  return problems;
}
