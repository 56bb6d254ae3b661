// The embedded identity provider: first-party password sign-in, refresh rotation, access tokens and the JWKS.
import { randomUUID } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { signInAccountOf, storedRolesOf, type SignInAccount } from '../db/user-credentials';
import { emailLookup } from '../db/user-email';
import { DomainError, rateLimited } from '../domain/errors';
import { knownRoles, type Role } from '../domain/roles';
import type { Logger } from '../logger';
import type { FieldCipher } from '../security/field-encryption';
import { scopesForRoles } from '../security/policy';
import { createLoginThrottle } from './login-throttle';
import { createPasswordVerifier } from './passwords';
import { createRefreshTokenStore, invalidRefreshToken } from './refresh-tokens';
import { createSigningKeyStore, type SigningKeyStore } from './signing-keys';

export interface IdentityProviderOptions {
  database: Knex;
  cipher: FieldCipher;
  /** `iss` of every token and the base of the discovery document's URLs. */
  issuer: string;
  audience: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  signingKeyRotationSeconds: number;
  clockToleranceSeconds: number;
  loginMaxFailuresPerAccount: number;
  loginMaxFailuresPerAddress: number;
  loginThrottleWindowSeconds: number;
  /** How long a replica signs with the key it last read (default 60 s); tests shorten it. */
  activeKeyCacheSeconds?: number;
  logger?: Logger;
}

/** The OAuth 2.0 token response (RFC 6749 §5.1), as the OpenAPI `TokenResponse` schema names it. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

export interface IdentityProvider {
  readonly issuer: string;
  /** Same answer and similar time for an unknown email and a wrong password; RATE_LIMITED past the limits. */
  login(credentials: { email: string; password: string }, clientAddress: string): Promise<TokenResponse>;
  /** The user these credentials sign in, under the same throttling and answers as `login`; issues no token. */
  authenticate(
    credentials: { email: string; password: string },
    clientAddress: string,
  ): Promise<{ id: string; roles: Role[] }>;
  /** The roles of a user, or undefined when the account no longer exists. */
  rolesOf(userId: string): Promise<Role[] | undefined>;
  refresh(refreshToken: string): Promise<TokenResponse>;
  jsonWebKeySet(): Promise<{ keys: JWK[] }>;
  rotateSigningKey(): Promise<string>;
  readonly signingKeys: SigningKeyStore;
}

export const invalidCredentials = () => new DomainError('UNAUTHENTICATED', 'The email or password is wrong');

export async function createIdentityProvider(options: IdentityProviderOptions): Promise<IdentityProvider> {
  const { database, cipher } = options;
  const passwords = await createPasswordVerifier();
  const signingKeys = createSigningKeyStore({
    database,
    issuer: options.issuer,
    cipher,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds,
    rotationIntervalSeconds: options.signingKeyRotationSeconds,
    clockToleranceSeconds: options.clockToleranceSeconds,
    ...(options.activeKeyCacheSeconds !== undefined
      ? { activeKeyCacheSeconds: options.activeKeyCacheSeconds }
      : {}),
  });
  const refreshTokens = createRefreshTokenStore({
    database,
    ttlSeconds: options.refreshTokenTtlSeconds,
    onReuse: ({ userId, familyId }) =>
      options.logger?.warn({ userId, familyId }, 'refresh token reused; its login was revoked'),
  });
  const throttle = createLoginThrottle({
    database,
    maxFailuresPerAccount: options.loginMaxFailuresPerAccount,
    maxFailuresPerAddress: options.loginMaxFailuresPerAddress,
    windowSeconds: options.loginThrottleWindowSeconds,
  });

  async function accessToken(userId: string, roles: readonly Role[]): Promise<string> {
    const key = await signingKeys.activeKey();
    const issuedAt = Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: scopesForRoles(roles).join(' '), roles: [...roles] })
      .setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'at+jwt' })
      .setIssuer(options.issuer)
      .setAudience(options.audience)
      .setSubject(userId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + options.accessTokenTtlSeconds)
      .setJti(randomUUID())
      .sign(key.privateKey);
  }

  async function tokensFor(
    user: { id: string; roles: string[] },
    refreshToken: string,
  ): Promise<TokenResponse> {
    return {
      access_token: await accessToken(user.id, knownRoles(user.roles)),
      token_type: 'Bearer',
      expires_in: options.accessTokenTtlSeconds,
      refresh_token: refreshToken,
    };
  }

  async function authenticate(
    credentials: { email: string; password: string },
    clientAddress: string,
  ): Promise<SignInAccount> {
    const subjects = {
      accountKey: emailLookup(cipher, credentials.email),
      addressKey: cipher.blindIndex(`client-address:${clientAddress}`),
    };
    const verdict = await throttle.recordAttempt(subjects);
    if (!verdict.allowed) throw rateLimited(verdict.retryAfterSeconds);
    const user = await signInAccountOf(database, subjects.accountKey);
    const matched = await passwords.matches(user?.password_hash, credentials.password);
    if (user === undefined || !matched) throw invalidCredentials();
    await throttle.recordSuccess(subjects);
    return user;
  }

  async function login(
    credentials: { email: string; password: string },
    clientAddress: string,
  ): Promise<TokenResponse> {
    const user = await authenticate(credentials, clientAddress);
    return tokensFor(user, await refreshTokens.issue(user.id));
  }

  const userIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

  async function rolesOf(userId: string): Promise<Role[] | undefined> {
    // A subject from a session or token is ours, but a malformed one must not reach PostgreSQL's uuid cast.
    if (!userIdPattern.test(userId)) return undefined;
    const roles = await storedRolesOf(database, userId);
    return roles === undefined ? undefined : knownRoles(roles);
  }

  async function refresh(refreshToken: string): Promise<TokenResponse> {
    const rotated = await refreshTokens.rotate(refreshToken);
    const roles = await storedRolesOf(database, rotated.userId);
    if (roles === undefined) throw invalidRefreshToken();
    return tokensFor({ id: rotated.userId, roles }, rotated.refreshToken);
  }

  return {
    issuer: options.issuer,
    login,
    async authenticate(credentials, clientAddress) {
      const user = await authenticate(credentials, clientAddress);
      return { id: user.id, roles: knownRoles(user.roles) };
    },
    rolesOf,
    refresh,
    jsonWebKeySet: () => signingKeys.publicKeySet(),
    rotateSigningKey: () => signingKeys.rotate(),
    signingKeys,
  };
}

/** The provider's options from configuration, or undefined when an external issuer is configured. */
export function identityProviderOptionsFromConfig(
  config: Pick<Config, 'auth'>,
  dependencies: { database: Knex; cipher: FieldCipher; logger?: Logger },
): IdentityProviderOptions | undefined {
  const embedded = config.auth.embedded;
  if (embedded === null) return undefined;
  return {
    ...dependencies,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
    accessTokenTtlSeconds: embedded.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: embedded.refreshTokenTtlSeconds,
    signingKeyRotationSeconds: embedded.signingKeyRotationSeconds,
    clockToleranceSeconds: config.auth.clockToleranceSeconds,
    loginMaxFailuresPerAccount: embedded.loginMaxFailuresPerAccount,
    loginMaxFailuresPerAddress: embedded.loginMaxFailuresPerAddress,
    loginThrottleWindowSeconds: embedded.loginThrottleWindowSeconds,
  };
}
