// Koa middleware for the REST front: bearer authentication (the shared token verifier) and each operation's contract policy.
import type Koa from 'koa';
import type { Actor } from '../../domain/actor';
import { DomainError } from '../../domain/errors';
import { assertAllowed, restOperation } from '../../security/policy';
import {
  authenticationFailure,
  bearerChallenge,
  missingTokenError,
  parseBearerAuthorization,
  type TokenVerifier,
} from '../../security/token-verifier';

/** Sets RFC 6750's WWW-Authenticate before the failure reaches the problem+json middleware. */
function rejecting(context: Koa.Context, error: unknown): never {
  const failure = authenticationFailure(error);
  const challenge = bearerChallenge(failure);
  if (challenge !== undefined) context.set('WWW-Authenticate', challenge);
  throw failure;
}

/**
 * Verifies `Authorization: Bearer <token>` with the verifier gRPC uses too (jsonwebtoken and the issuer's JWKS
 * keys, a token verified before answered from its cache until it expires), then sets `context.state.actor`. Any
 * missing, malformed, expired, mis-addressed, unsigned or unknown-key token answers 401 UNAUTHENTICATED with a
 * Bearer challenge.
 */
export function authenticateRequest(verifier: TokenVerifier): Koa.Middleware {
  return async (context, next) => {
    let actor: Actor;
    try {
      const token = parseBearerAuthorization(context.get('Authorization') || undefined);
      actor = await verifier.verifyAccessToken(token);
    } catch (error) {
      // Token defects arrive as DomainErrors; a database failure while finding the local account is not the
      // token's fault (no 401) and goes on as it is.
      if (error instanceof DomainError) rejecting(context, error);
      throw error;
    }
    context.state.actor = actor;
    await next();
  };
}

/**
 * Enforces exactly what the OpenAPI document says for `operationId`: every scope in its `security`, one of its
 * `x-roles`. Public operations pass. An unknown operationId fails when the router is built, not per request.
 * Ownership (`x-ownership: owner-or-staff`) needs the resource, so handlers call `assertMayActOn`.
 */
export function authorizeOperation(operationId: string): Koa.Middleware {
  const operation = restOperation(operationId);
  return async (context, next) => {
    if (!operation.public) {
      const actor = context.state.actor as Actor | undefined;
      try {
        if (actor === undefined) throw missingTokenError();
        assertAllowed(actor, operation);
      } catch (error) {
        const challenge = error instanceof DomainError ? bearerChallenge(error) : undefined;
        if (challenge !== undefined) context.set('WWW-Authenticate', challenge);
        throw error;
      }
    }
    await next();
  };
}

/**
 * The one middleware a route mounts: `guard('createBooking')` authenticates (unless the operation is public)
 * and then authorizes per the contract.
 */
export function createOperationGuard(verifier: TokenVerifier): (operationId: string) => Koa.Middleware {
  const authenticate = authenticateRequest(verifier);
  return (operationId) => {
    const authorize = authorizeOperation(operationId);
    if (restOperation(operationId).public) return authorize;
    return async (context, next) => {
      await authenticate(context, async () => {
        await authorize(context, next);
      });
    };
  };
}
