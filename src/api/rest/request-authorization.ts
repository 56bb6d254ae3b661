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

/** A middleware that lets the request on or throws; typed so that guards can be chained without wrappers. */
type RequestGuard = (context: Koa.Context, next: Koa.Next) => Promise<void>;

/** Sets RFC 6750's WWW-Authenticate before the failure reaches the problem+json middleware. */
function rejecting(context: Koa.Context, error: unknown): never {
  const failure = authenticationFailure(error);
  const challenge = bearerChallenge(failure);
  if (challenge !== undefined) context.set('WWW-Authenticate', challenge);
  throw failure;
}

/**
 * Verifies `Authorization: Bearer <token>` with koa-jwt and the verifier's JWKS keys, then sets
 * `context.state.actor`. A token verified before answers from the verifier's cache until it expires (the cache
 * gRPC shares), so the signature is checked once per token, not once per request. Any missing, malformed,
 * expired, mis-addressed, unsigned or unknown-key token answers 401 UNAUTHENTICATED with a Bearer challenge.
 */
export function authenticateRequest(verifier: TokenVerifier): RequestGuard {
  const verifyWithKoaJwt = koaJwt({
    secret: (header: Parameters<TokenVerifier['signingKeyFor']>[0]) => verifier.signingKeyFor(header),
    ...verifier.verifyOptions,
    algorithms: [...verifier.verifyOptions.algorithms],
    key: 'tokenClaims',
    // Failures are left in state, so this module (not koa-jwt's plain 401) shapes the answer.
    passthrough: true,
    getToken: (context) => (context.state.bearerToken as string | undefined) ?? null,
  });

  const establishActor = async (context: Koa.Context, token: string, next: Koa.Next) => {
    let claims: AccessTokenClaims;
    try {
      if (context.state.jwtOriginalError !== undefined) throw context.state.jwtOriginalError;
      if (context.state.tokenClaims === undefined) throw missingTokenError();
      claims = verifier.checkClaims(context.state.tokenClaims);
    } catch (error) {
      rejecting(context, error);
    }
    // Outside the try: a database failure while finding the local account is not the token's fault (no 401).
    context.state.actor = await verifier.rememberVerifiedToken(token, claims);
    await next();
  };

  return async (context, next) => {
    let token: string;
    try {
      token = parseBearerAuthorization(context.get('Authorization') || undefined);
    } catch (error) {
      rejecting(context, error);
    }
    const remembered = verifier.rememberedActor(token);
    if (remembered !== undefined) {
      context.state.actor = remembered;
      await next();
      return;
    }
    context.state.bearerToken = token;
    await verifyWithKoaJwt(context, () => establishActor(context, token, next));
  };
}

/**
 * Enforces exactly what the OpenAPI document says for `operationId`: every scope in its `security`, one of its
 * `x-roles`. Public operations pass. An unknown operationId fails when the router is built, not per request.
 * Ownership (`x-ownership: owner-or-staff`) needs the resource, so handlers call `assertMayActOn`.
 */
export function authorizeOperation(operationId: string): RequestGuard {
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
    // Promises handed on rather than awaited in wrappers of their own: this runs on every request.
    return (context, next) => authenticate(context, () => authorize(context, next));
  };
}
