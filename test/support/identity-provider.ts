// A real embedded identity provider on a loopback HTTP server, with its own issuer, users and tokens.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import Koa from 'koa';
import type { Knex } from 'knex';
import { identityProviderRouter } from '../../src/api/rest/auth-routes';
import { problemDetails, requestIdentity } from '../../src/api/rest/problem-details';
import type { OAuthClientRegistration } from '../../src/config';
import type { Role } from '../../src/domain/roles';
import { createAuthorizationServer, type AuthorizationServer } from '../../src/identity/authorization-server';
import {
  createIdentityProvider,
  type IdentityProvider,
  type IdentityProviderOptions,
} from '../../src/identity/identity-provider';
import { createLogger } from '../../src/logger';
import type { FieldCipher } from '../../src/security/field-encryption';
import { createTokenVerifier, type TokenVerifierOptions } from '../../src/security/token-verifier';
import { isolatedTestCipher, openTestDatabase } from './database';
import { insertLoginUser, type LoginUser } from './users';

export const testAudience = 'bus-booking-api';

/** The OAuth clients every fixture registers besides the docs page: one of each kind. */
export const testClients = {
  web: { kind: 'web', clientId: 'test-web-app', redirectUris: ['https://app.identity.test/callback'] },
  native: {
    kind: 'native',
    clientId: 'test-mobile-app',
    redirectUris: ['com.example.busbooking:/oauth2redirect'],
  },
  service: {
    kind: 'service',
    clientId: 'test-seat-sync',
    clientSecret: 'test-seat-sync-secret-of-at-least-32-characters',
    scopes: ['routes:read', 'seats:write'],
    roles: ['admin'],
  },
} as const satisfies Record<string, OAuthClientRegistration>;

export interface IdentityFixture {
  issuer: string;
  database: Knex;
  cipher: FieldCipher;
  identityProvider: IdentityProvider;
  authorizationServer: AuthorizationServer;
  /** The provider's HTTP server, for supertest and for verifiers discovering its JWKS. */
  server: http.Server;
  createUser(roles?: Role[]): Promise<LoginUser>;
  verifierOptions(overrides?: Partial<TokenVerifierOptions>): TokenVerifierOptions;
  close(): Promise<void>;
}

/** Starts the provider on 127.0.0.1 with an issuer naming its own port, and keys no other suite shares. */
export async function startIdentityFixture(
  overrides: Partial<Omit<IdentityProviderOptions, 'database' | 'cipher' | 'issuer'>> = {},
): Promise<IdentityFixture> {
  const database = openTestDatabase({ poolSize: 4, applicationName: 'identity-tests' });
  // Keys of its own: login throttling counts failures per blind index of the address (127.0.0.1 for every test),
  // so with the run's keyring other suites' failed logins would count against this provider's limits.
  const cipher = isolatedTestCipher('idtest');
  let handler: http.RequestListener = (_request, response) => response.end();
  const server = http.createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const identityProvider = await createIdentityProvider({
    database,
    cipher,
    issuer,
    audience: testAudience,
    accessTokenTtlSeconds: 300,
    refreshTokenTtlSeconds: 3600,
    signingKeyRotationSeconds: 86400,
    clockToleranceSeconds: 5,
    loginMaxFailuresPerAccount: 5,
    loginMaxFailuresPerAddress: 1000,
    loginThrottleWindowSeconds: 60,
    activeKeyCacheSeconds: 0,
    ...overrides,
  });
  const logger = createLogger({ level: 'silent', name: 'identity-test' });
  const authorizationServer = createAuthorizationServer({
    database,
    cipher,
    identityProvider,
    issuer,
    audience: testAudience,
    accessTokenTtlSeconds: overrides.accessTokenTtlSeconds ?? 300,
    refreshTokenTtlSeconds: overrides.refreshTokenTtlSeconds ?? 3600,
    docsClient: true,
    clients: [
      testClients.web,
      testClients.native,
      {
        ...testClients.service,
        scopes: [...testClients.service.scopes],
        roles: [...testClients.service.roles],
      },
    ],
    trustProxy: false,
    logger,
  });
  const app = new Koa();
  app.use(requestIdentity());
  app.use(problemDetails(logger));
  const router = identityProviderRouter(identityProvider, authorizationServer);
  app.use(router.routes());
  app.use(router.allowedMethods());
  const koaCallback = app.callback();
  handler = (request, response) => {
    void koaCallback(request, response);
  };

  const userIds: string[] = [];

  return {
    issuer,
    database,
    cipher,
    identityProvider,
    authorizationServer,
    server,
    async createUser(roles = ['customer']) {
      const user = await insertLoginUser(database, cipher, { roles, name: 'Identity Test' });
      userIds.push(user.id);
      return user;
    },
    verifierOptions: (verifierOverrides = {}) => ({
      issuer,
      audience: testAudience,
      algorithms: ['RS256'],
      clockToleranceSeconds: 5,
      defaultRole: null,
      ...verifierOverrides,
    }),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database('users').whereIn('id', userIds).delete();
      await database('identity_signing_keys').where({ issuer }).delete();
      await database.destroy();
    },
  };
}

/** A token with chosen claims and header, signed by the provider's active key unless another key is given. */
export async function mintToken(
  fixture: Pick<IdentityFixture, 'issuer' | 'identityProvider'>,
  claims: JWTPayload,
  options: { kid?: string; signWithStrangerKey?: boolean } = {},
): Promise<string> {
  const active = await fixture.identityProvider.signingKeys.activeKey();
  const privateKey = options.signWithStrangerKey
    ? (await generateKeyPair('RS256', { modulusLength: 2048 })).privateKey
    : active.privateKey;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: fixture.issuer,
    aud: testAudience,
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? active.kid, typ: 'at+jwt' })
    .sign(privateKey);
}

export function verifierFor(fixture: IdentityFixture, overrides: Partial<TokenVerifierOptions> = {}) {
  return createTokenVerifier(fixture.verifierOptions(overrides));
}
