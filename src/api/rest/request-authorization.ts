// Koa middleware for the REST front: bearer authentication (koa-jwt + JWKS) and each operation's contract policy.
import type Koa from 'koa';
import koaJwt from 'koa-jwt';
import type { Actor } from '../../domain/actor';
import { DomainError } from '../../domain/errors';
import { assertAllowed, restOperation } from '../../security/policy';
import {
  authenticationFailure,
  bearerChallenge,
  missingTokenError,
  parseBearerAuthorization,
  type AccessTokenClaims,
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
 * Verifies `Authorization: Bearer <token>` with koa-jwt (jsonwebtoken) and the verifier's JWKS keys, then sets
 * `context.state.actor`. Any missing, malformed, expired, mis-addressed, unsigned or unknown-key token answers
 * 401 UNAUTHENTICATED with a Bearer challenge.
 */
export function authenticateRequest(verifier: TokenVerifier): Koa.Middleware {
  const readBearerToken: Koa.Middleware = async (context, next) => {
    try {
      context.state.bearerToken = parseBearerAuthorization(context.get('Authorization') || undefined);
    } catch (error) {
      rejecting(context, error);
    }
    await next();
  };

  const verifyWithKoaJwt = koaJwt({
    secret: (header: Parameters<TokenVerifier['signingKeyFor']>[0]) => verifier.signingKeyFor(header),
    ...verifier.verifyOptions,
    algorithms: [...verifier.verifyOptions.algorithms],
    key: 'tokenClaims',
    // Failures are left in state, so this module (not koa-jwt's plain 401) shapes the answer.
    passthrough: true,
    getToken: (context) => (context.state.bearerToken as string | undefined) ?? null,
  });

  const establishActor: Koa.Middleware = async (context, next) => {
    let claims: AccessTokenClaims;
    try {
      if (context.state.jwtOriginalError !== undefined) throw context.state.jwtOriginalError;
      if (context.state.tokenClaims === undefined) throw missingTokenError();
      claims = verifier.checkClaims(context.state.tokenClaims);
    } catch (error) {
      rejecting(context, error);
    }
    // Outside the try: a database failure while finding the local account is not the token's fault (no 401).
    context.state.actor = await verifier.actorFromClaims(claims);
    await next();
  };

  return (context, next) =>
    readBearerToken(context, () => verifyWithKoaJwt(context, () => establishActor(context, next)));
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
    return (context, next) => authenticate(context, () => authorize(context, next));
  };
}
