// Verifies OIDC access tokens against the issuer's JWKS with one set of rules for REST and gRPC; claims → Actor.
import { createPublicKey } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import jwksClient, { type JwksClient } from 'jwks-rsa';
import type { AuthConfig, TokenAlgorithm } from '../config';
import type { Actor } from '../domain/actor';
import { DomainError } from '../domain/errors';
import { knownRoles, type Role } from '../domain/roles';
import { VerifiedTokenCache } from './verified-token-cache';

export interface TokenVerifierOptions {
  /** Exact `iss` every token must carry. */
  issuer: string;
  /** JWKS URL; when absent it is read from `<issuer>/.well-known/openid-configuration` on first use. */
  jwksUrl?: string;
  audience: string;
  /** `aud` normally; another claim (Cognito access tokens carry `client_id`) is compared instead when named. */
  audienceClaim?: string;
  algorithms: readonly TokenAlgorithm[];
  clockToleranceSeconds: number;
  /** Claim name or dot path of the roles; Keycloak's `realm_access.roles` is tried when it is absent. */
  rolesClaim?: string;
  /** Claims (names or dot paths) whose scopes are granted together; `scope` and `scp` when absent. */
  scopesClaims?: readonly string[];
  /** Role given to a caller whose token names none of ours; null gives none. */
  defaultRole?: Role | null;
  /** Reads the key set in-process instead of over HTTP (the embedded identity provider's own keys). */
  keySetSource?: () => Promise<{ keys: unknown[] }>;
  /** How long a fetched key is trusted before the JWKS is read again (default 10 minutes). */
  keyCacheMaxAgeMs?: number;
  /** Caps JWKS refetches caused by unknown `kid`s, so forged tokens cannot hammer the issuer (default 10). */
  keySetRequestsPerMinute?: number;
  /** Timeout of discovery and JWKS requests (default 5 s). */
  httpTimeoutMs?: number;
  /**
   * Gives an external issuer's subjects their local user id (bookings reference users). Absent, `sub` is the
   * local id, as in the embedded identity provider's tokens.
   */
  localAccounts?: LocalAccountDirectory;
  /**
   * Verified tokens whose caller is remembered until the token expires (default 10,000; 0 remembers none), so a
   * client's repeated calls skip the signature check and the account lookup. Failures are never remembered.
   */
  verifiedTokenCacheSize?: number;
  /** Epoch milliseconds, for expiry checks and the cache; tests move it. */
  now?: () => number;
}

/** Finds or creates the local account of a verified token's subject. */
export interface LocalAccountDirectory {
  localUserIdFor(claims: AccessTokenClaims, roles: readonly Role[]): Promise<string>;
}

/** The claims of a verified access token; `sub` and `exp` are always present. */
export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  exp: number;
}

/** The header fields a signing key is chosen by (koa-jwt hands over the whole decoded header). */
export interface TokenHeader {
  alg?: string;
  kid?: string;
}

/**
 * Options for jose's jwtVerify here and for koa-jwt on REST, which read them alike, so both fronts apply the same
 * rules.
 */
export interface SharedVerifyOptions {
  readonly algorithms: TokenAlgorithm[];
  readonly issuer: string;
  readonly audience?: string;
  readonly clockTolerance: number;
}

export interface TokenVerifier {
  readonly issuer: string;
  readonly verifyOptions: SharedVerifyOptions;
  /** The PEM public key that verifies a token with this header; rejects disallowed algorithms and unknown kids. */
  signingKeyFor(header: TokenHeader | undefined): Promise<string>;
  /** Checks that the JWT libraries leave to the caller: subject, expiry present, audience claim, token use. */
  checkClaims(payload: unknown): AccessTokenClaims;
  /** Verifies `Bearer <token>` (an HTTP header or the gRPC `authorization` metadata value). */
  verifyBearerToken(authorization: string | undefined): Promise<AccessTokenClaims>;
  /**
   * Verifies a bare token (already taken out of `Bearer <token>`) and returns its caller; a token verified before
   * answers from the cache until it expires. Token defects throw DomainErrors (UNAUTHENTICATED, or UNAVAILABLE
   * when the issuer cannot be reached); a failure to find the caller's local account is thrown as it is.
   */
  verifyAccessToken(token: string): Promise<Actor>;
  /** The caller of a token verified before and not yet expired, or undefined (then verify it). */
  rememberedActor(token: string): Actor | undefined;
  /**
   * The caller of claims just verified (by this verifier or a front's own verifying middleware), remembered for
   * the token until it expires.
   */
  rememberVerifiedToken(token: string, claims: AccessTokenClaims): Promise<Actor>;
  /** The caller of verified claims, for REST and gRPC alike: scopes, roles and the local user id. */
  actorFromClaims(claims: AccessTokenClaims): Promise<Actor>;
}

export const bearerRealm = 'bus-booking';

/** RFC 6750 challenge kinds; carried in DomainError details so the fronts can answer with WWW-Authenticate. */
export type BearerChallenge = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

function tokenRejected(message: string, challenge: BearerChallenge = 'invalid_token', cause?: unknown) {
  return new DomainError('UNAUTHENTICATED', message, { details: { challenge }, cause });
}

export const missingTokenError = () => new DomainError('UNAUTHENTICATED', 'A bearer token is required');

class IssuerUnreachableError extends Error {
  override readonly name = 'IssuerUnreachableError';
  readonly isEndpointUnavailable = true;
}

/** An expired token, as jose (this verifier) or koa-jwt (REST, by its error's name) reports it. */
function tokenExpired(error: unknown): boolean {
  return (
    error instanceof joseErrors.JWTExpired || (error instanceof Error && error.name === 'TokenExpiredError')
  );
}

/**
 * Turns whatever verification threw into the answer a client gets: an expired or bad token is
 * UNAUTHENTICATED (one message for every defect, so probing learns nothing), an unreachable issuer UNAVAILABLE.
 */
export function authenticationFailure(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (tokenExpired(error)) return tokenRejected('The access token expired', 'invalid_token', error);
  if (typeof error === 'object' && error !== null && 'isEndpointUnavailable' in error) {
    return new DomainError('UNAVAILABLE', 'The token issuer cannot be reached', {
      details: { retryAfterSeconds: 5 },
      cause: error,
    });
  }
  return tokenRejected('The access token is invalid', 'invalid_token', error);
}

const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of an `Authorization: Bearer <token>` value (RFC 6750 §2.1). */
export function parseBearerAuthorization(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') throw missingTokenError();
  const match = bearerPattern.exec(authorization);
  if (!match) {
    throw tokenRejected('The Authorization header must use the Bearer scheme', 'invalid_request');
  }
  return match[1];
}

/** The WWW-Authenticate value for an authentication or scope failure (RFC 6750 §3). */
export function bearerChallenge(error: DomainError): string | undefined {
  if (error.code === 'UNAUTHENTICATED') {
    const challenge = error.details.challenge;
    if (typeof challenge !== 'string') return `Bearer realm="${bearerRealm}"`;
    return `Bearer realm="${bearerRealm}", error="${challenge}", error_description="${error.message}"`;
  }
  const missing = error.details.missingScopes;
  if (error.code === 'PERMISSION_DENIED' && Array.isArray(missing)) {
    return `Bearer realm="${bearerRealm}", error="insufficient_scope", scope="${missing.join(' ')}"`;
  }
  return undefined;
}

function readClaim(payload: Record<string, unknown>, name: string): unknown {
  // Auth0's namespaced claims are URLs full of dots: an exact key wins over a path.
  if (name in payload) return payload[name];
  let node: unknown = payload;
  for (const segment of name.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

function listClaim(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const audienceClaim = options.audienceClaim ?? 'aud';
  const rolesClaim = options.rolesClaim ?? 'roles';
  const scopesClaims = options.scopesClaims ?? ['scope', 'scp'];
  const defaultRole = options.defaultRole ?? null;
  const httpTimeoutMs = options.httpTimeoutMs ?? 5000;
  const now = options.now ?? Date.now;
  const keyCacheMaxAgeMs = options.keyCacheMaxAgeMs ?? 10 * 60_000;
  const verifiedTokens = new VerifiedTokenCache<Actor>({
    maximumEntries: options.verifiedTokenCacheSize ?? 10_000,
    // Never trusted longer than the key set itself is cached: a key the issuer withdrew stops its tokens here
    // no later than it would stop a fresh verification.
    maximumAgeMs: keyCacheMaxAgeMs,
    now,
  });
  const allowedAlgorithms: readonly string[] = options.algorithms;
  if (
    allowedAlgorithms.length === 0 ||
    allowedAlgorithms.some((algorithm) => !/^(RS|PS|ES)\d{3}$/.test(algorithm))
  ) {
    throw new Error('token algorithms must be asymmetric (RS*, PS*, ES*)');
  }
  const verifyOptions: SharedVerifyOptions = Object.freeze({
    algorithms: [...options.algorithms],
    issuer: options.issuer,
    ...(audienceClaim === 'aud' ? { audience: options.audience } : {}),
    clockTolerance: options.clockToleranceSeconds,
  });

  async function discoverJwksUrl(): Promise<string> {
    let response: Response;
    try {
      response = await fetch(discoveryUrl(options.issuer), {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(httpTimeoutMs),
      });
    } catch (error) {
      throw new IssuerUnreachableError(`OIDC discovery at ${discoveryUrl(options.issuer)} failed`, {
        cause: error,
      });
    }
    if (!response.ok) {
      throw new IssuerUnreachableError(`OIDC discovery answered ${response.status}`);
    }
    const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OIDC Discovery §4.3: the document must name the issuer it was fetched for.
    if (document.issuer !== options.issuer || typeof document.jwks_uri !== 'string') {
      throw new IssuerUnreachableError(
        `OIDC discovery document does not describe issuer ${options.issuer} or has no jwks_uri`,
      );
    }
    return document.jwks_uri;
  }

  function buildClient(jwksUri: string): JwksClient {
    const keySetSource = options.keySetSource;
    return jwksClient({
      jwksUri,
      cache: true,
      cacheMaxAge: keyCacheMaxAgeMs,
      rateLimit: true,
      jwksRequestsPerMinute: options.keySetRequestsPerMinute ?? 10,
      timeout: httpTimeoutMs,
      ...(keySetSource ? { fetcher: () => keySetSource() } : {}),
    });
  }

  let clientPromise: Promise<JwksClient> | undefined;
  function keyClient(): Promise<JwksClient> {
    if (clientPromise === undefined) {
      const jwksUri = options.keySetSource
        ? Promise.resolve('in-process:')
        : options.jwksUrl !== undefined
          ? Promise.resolve(options.jwksUrl)
          : discoverJwksUrl();
      clientPromise = jwksUri.then(buildClient);
      // A failed discovery is retried by the next request instead of being remembered.
      clientPromise.catch(() => {
        clientPromise = undefined;
      });
    }
    return clientPromise;
  }

  async function signingKeyFor(header: TokenHeader | undefined): Promise<string> {
    if (!header || header.alg === undefined || !allowedAlgorithms.includes(header.alg)) {
      throw tokenRejected('The access token is invalid');
    }
    if (typeof header.kid !== 'string' || header.kid === '') {
      throw tokenRejected('The access token is invalid');
    }
    const client = await keyClient();
    // jwks-rsa answers from its cache and refetches the key set once for a kid it has not seen (rate-limited).
    const key = await client.getSigningKey(header.kid);
    return key.getPublicKey();
  }

  function checkClaims(payload: unknown): AccessTokenClaims {
    if (typeof payload !== 'object' || payload === null) throw tokenRejected('The access token is invalid');
    const claims = payload as Record<string, unknown>;
    if (typeof claims.sub !== 'string' || claims.sub === '' || typeof claims.exp !== 'number') {
      throw tokenRejected('The access token is invalid');
    }
    if (audienceClaim !== 'aud' && !listClaim(claims[audienceClaim]).includes(options.audience)) {
      throw tokenRejected('The access token is invalid');
    }
    // Cognito marks ID tokens `token_use: id`; only access tokens authorize API calls.
    if (claims.token_use !== undefined && claims.token_use !== 'access') {
      throw tokenRejected('The access token is invalid');
    }
    return claims as AccessTokenClaims;
  }

  async function verifyToken(token: string): Promise<AccessTokenClaims> {
    // Decode the header, fetch its key, verify with the shared options.
    let header: TokenHeader;
    try {
      // Header and claims both decoded first, as a malformed token is not worth a key lookup.
      decodeJwt(token);
      header = decodeProtectedHeader(token);
    } catch (error) {
      // jose's own error for it, so the failure keeps saying why (the answer is the same for every defect).
      throw new joseErrors.JWTInvalid('The token is not a compact JWT', { cause: error });
    }
    const key = createPublicKey(await signingKeyFor(header));
    const { payload } = await jwtVerify(token, key, {
      ...verifyOptions,
      algorithms: [...verifyOptions.algorithms],
      currentDate: new Date(now()),
    });
    return checkClaims(payload);
  }

  async function actorFromClaims(claims: AccessTokenClaims): Promise<Actor> {
    const scopes = new Set(scopesClaims.flatMap((name) => listClaim(readClaim(claims, name))));
    const roleValues = readClaim(claims, rolesClaim) ?? readClaim(claims, 'realm_access.roles');
    const namedRoles = knownRoles(listClaim(roleValues));
    const roles = namedRoles.length === 0 && defaultRole !== null ? [defaultRole] : namedRoles;
    const localAccounts = options.localAccounts;
    return {
      userId: localAccounts === undefined ? claims.sub : await localAccounts.localUserIdFor(claims, roles),
      scopes: [...scopes],
      roles,
    };
  }

  async function rememberVerifiedToken(token: string, claims: AccessTokenClaims): Promise<Actor> {
    // Frozen: the same object answers every later request with this token.
    const actor = Object.freeze(await actorFromClaims(claims));
    verifiedTokens.remember(token, actor, claims.exp * 1000);
    return actor;
  }

  return {
    issuer: options.issuer,
    verifyOptions,
    signingKeyFor,
    checkClaims,
    async verifyBearerToken(authorization) {
      const token = parseBearerAuthorization(authorization);
      try {
        return await verifyToken(token);
      } catch (error) {
        throw authenticationFailure(error);
      }
    },
    async verifyAccessToken(token) {
      const remembered = verifiedTokens.get(token);
      if (remembered !== undefined) return remembered;
      let claims: AccessTokenClaims;
      try {
        claims = await verifyToken(token);
      } catch (error) {
        throw authenticationFailure(error);
      }
      // Outside the try: a database failure while finding the account is not the token's fault (no 401).
      return rememberVerifiedToken(token, claims);
    },
    rememberedActor: (token) => verifiedTokens.get(token),
    rememberVerifiedToken,
    actorFromClaims,
  };
}

/** The verifier's options as configured; `keySetSource` is added by the caller for the embedded provider. */
export function tokenVerifierOptionsFromConfig(auth: AuthConfig): TokenVerifierOptions {
  return {
    issuer: auth.issuer,
    ...(auth.jwksUrl !== undefined ? { jwksUrl: auth.jwksUrl } : {}),
    audience: auth.audience,
    audienceClaim: auth.audienceClaim,
    algorithms: auth.algorithms,
    clockToleranceSeconds: auth.clockToleranceSeconds,
    rolesClaim: auth.rolesClaim,
    scopesClaims: auth.scopesClaims,
    defaultRole: auth.defaultRole,
  };
}
