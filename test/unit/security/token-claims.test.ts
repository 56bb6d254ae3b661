// Claims → Actor for the common providers, bearer header parsing, challenges and verifier configuration.
import { DomainError } from '../../../src/domain/errors';
import { loadConfig } from '../../../src/config';
import {
  authenticationFailure,
  bearerChallenge,
  createTokenVerifier,
  parseBearerAuthorization,
  tokenVerifierOptionsFromConfig,
  type AccessTokenClaims,
  type TokenVerifierOptions,
} from '../../../src/security/token-verifier';

const baseOptions: TokenVerifierOptions = {
  issuer: 'https://id.example.com/realms/buses',
  jwksUrl: 'https://id.example.com/realms/buses/protocol/openid-connect/certs',
  audience: 'bus-booking-api',
  algorithms: ['RS256'],
  clockToleranceSeconds: 30,
};

const now = Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown>): AccessTokenClaims => ({
  sub: 'user-1',
  exp: now + 60,
  ...extra,
});

function codeOf(action: () => unknown): string {
  try {
    action();
    return 'OK';
  } catch (error) {
    return error instanceof DomainError ? error.code : 'THREW';
  }
}

describe('actorFromClaims', () => {
  it('reads the embedded provider’s scope string and roles array', async () => {
    const verifier = createTokenVerifier(baseOptions);
    expect(
      await verifier.actorFromClaims(claims({ scope: 'bookings:read routes:read', roles: ['customer'] })),
    ).toEqual({
      userId: 'user-1',
      scopes: ['bookings:read', 'routes:read'],
      roles: ['customer'],
    });
  });

  it('reads Keycloak’s realm_access.roles and ignores roles that are not ours', async () => {
    const verifier = createTokenVerifier({ ...baseOptions, defaultRole: null });
    const actor = await verifier.actorFromClaims(
      claims({ scope: 'openid bookings:read', realm_access: { roles: ['offline_access', 'agent'] } }),
    );
    expect(actor.roles).toEqual(['agent']);
  });

  it('reads an Auth0 namespaced claim whose name is full of dots, and an scp array', async () => {
    const verifier = createTokenVerifier({ ...baseOptions, rolesClaim: 'https://bus-booking.example/roles' });
    const actor = await verifier.actorFromClaims(
      claims({ scp: ['bookings:write'], 'https://bus-booking.example/roles': ['admin'] }),
    );
    expect(actor).toMatchObject({ scopes: ['bookings:write'], roles: ['admin'] });
  });

  it('reads scopes from the claims it is told to, such as Auth0’s permissions list, and from no other', async () => {
    const verifier = createTokenVerifier({ ...baseOptions, scopesClaims: ['scope', 'permissions'] });
    const actor = await verifier.actorFromClaims(
      claims({
        scope: 'openid bookings:read',
        permissions: ['bookings:write', 'payments:write'],
        scp: ['seats:write'],
      }),
    );
    expect(actor.scopes).toEqual(['openid', 'bookings:read', 'bookings:write', 'payments:write']);
    const nested = createTokenVerifier({ ...baseOptions, scopesClaims: ['authorization.scopes'] });
    expect(
      (await nested.actorFromClaims(claims({ scope: 'admin:all', authorization: { scopes: 'routes:read' } })))
        .scopes,
    ).toEqual(['routes:read']);
  });

  it('reads a nested dot path such as Cognito groups under a custom claim', async () => {
    const verifier = createTokenVerifier({ ...baseOptions, rolesClaim: 'cognito:groups' });
    expect((await verifier.actorFromClaims(claims({ 'cognito:groups': ['agent'] }))).roles).toEqual([
      'agent',
    ]);
  });

  it('gives the default role only when the token names none of ours', async () => {
    const withDefault = createTokenVerifier({ ...baseOptions, defaultRole: 'customer' });
    expect((await withDefault.actorFromClaims(claims({}))).roles).toEqual(['customer']);
    expect((await withDefault.actorFromClaims(claims({ roles: ['admin'] }))).roles).toEqual(['admin']);
    const withoutDefault = createTokenVerifier({ ...baseOptions, defaultRole: null });
    expect((await withoutDefault.actorFromClaims(claims({}))).roles).toEqual([]);
  });

  it('takes the user id from the local account directory when an external issuer needs one', async () => {
    const asked: { subject: string; roles: readonly string[] }[] = [];
    const verifier = createTokenVerifier({
      ...baseOptions,
      defaultRole: 'customer',
      localAccounts: {
        localUserIdFor: (tokenClaims, roles) => {
          asked.push({ subject: tokenClaims.sub, roles });
          return Promise.resolve('0b6f6c1e-7a55-4c1e-9a36-2f0f5b1c8d21');
        },
      },
    });
    expect(await verifier.actorFromClaims(claims({ scope: 'bookings:read' }))).toEqual({
      userId: '0b6f6c1e-7a55-4c1e-9a36-2f0f5b1c8d21',
      scopes: ['bookings:read'],
      roles: ['customer'],
    });
    expect(asked).toEqual([{ subject: 'user-1', roles: ['customer'] }]);
  });
});

describe('checkClaims', () => {
  it('requires a subject and an expiry', () => {
    const verifier = createTokenVerifier(baseOptions);
    expect(codeOf(() => verifier.checkClaims({ exp: now + 60 }))).toBe('UNAUTHENTICATED');
    expect(codeOf(() => verifier.checkClaims({ sub: 'user-1' }))).toBe('UNAUTHENTICATED');
    expect(codeOf(() => verifier.checkClaims({ sub: 'user-1', exp: now + 60 }))).toBe('OK');
  });

  it('compares client_id instead of aud when told to (Cognito access tokens) and refuses ID tokens', () => {
    const verifier = createTokenVerifier({ ...baseOptions, audienceClaim: 'client_id' });
    expect(verifier.verifyOptions.audience).toBeUndefined();
    expect(
      codeOf(() => verifier.checkClaims(claims({ client_id: 'bus-booking-api', token_use: 'access' }))),
    ).toBe('OK');
    expect(codeOf(() => verifier.checkClaims(claims({ client_id: 'other-app' })))).toBe('UNAUTHENTICATED');
    expect(
      codeOf(() => verifier.checkClaims(claims({ client_id: 'bus-booking-api', token_use: 'id' }))),
    ).toBe('UNAUTHENTICATED');
  });
});

describe('signingKeyFor', () => {
  it('refuses alg none, symmetric algorithms and tokens without a kid before fetching any key', async () => {
    const verifier = createTokenVerifier({
      ...baseOptions,
      keySetSource: () => Promise.reject(new Error('must not be called')),
    });
    for (const header of [
      { alg: 'none', kid: 'k' },
      { alg: 'HS256', kid: 'k' },
      { alg: 'RS256' },
      undefined,
    ]) {
      await expect(verifier.signingKeyFor(header)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    }
  });

  it('cannot be configured with a symmetric algorithm', () => {
    expect(() => createTokenVerifier({ ...baseOptions, algorithms: ['HS256' as 'RS256'] })).toThrow(
      /asymmetric/,
    );
  });
});

describe('parseBearerAuthorization and bearerChallenge', () => {
  it('takes the token of a Bearer header, any case of the scheme', () => {
    expect(parseBearerAuthorization('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(parseBearerAuthorization('bearer abc.def.ghi')).toBe('abc.def.ghi');
  });

  it('tells a missing header from a malformed one', () => {
    const missing = authenticationFailure(captured(() => parseBearerAuthorization(undefined)));
    const malformed = authenticationFailure(captured(() => parseBearerAuthorization('Basic dXNlcjpwYXNz')));
    expect(bearerChallenge(missing)).toBe('Bearer realm="bus-booking"');
    expect(bearerChallenge(malformed)).toMatch(/^Bearer realm="bus-booking", error="invalid_request"/);
  });

  it('answers a token defect with invalid_token, a scope gap with insufficient_scope', () => {
    expect(bearerChallenge(authenticationFailure(new Error('jwt malformed')))).toMatch(
      /error="invalid_token"/,
    );
    const denied = new DomainError('PERMISSION_DENIED', 'no', {
      details: { missingScopes: ['bookings:write'] },
    });
    expect(bearerChallenge(denied)).toBe(
      'Bearer realm="bus-booking", error="insufficient_scope", scope="bookings:write"',
    );
  });

  it('reports an unreachable issuer as UNAVAILABLE, not as a bad token', () => {
    const failure = authenticationFailure(
      Object.assign(new Error('ECONNREFUSED'), { isEndpointUnavailable: true }),
    );
    expect(failure.code).toBe('UNAVAILABLE');
  });
});

function captured(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('authentication configuration', () => {
  const required = {
    DATABASE_URL: 'postgres://localhost/db',
    ENCRYPTION_KEYS: 'k',
    ENCRYPTION_ACTIVE_KEY_ID: 'k',
    BLIND_INDEX_KEY: 'b',
  };

  it('runs the embedded provider by default, issuing for the local HTTP port', () => {
    const { auth } = loadConfig({ ...required, HTTP_PORT: '9090' });
    expect(auth).toMatchObject({
      issuer: 'http://localhost:9090',
      audience: 'bus-booking-api',
      algorithms: ['RS256'],
      clockToleranceSeconds: 30,
      rolesClaim: 'roles',
      scopesClaims: ['scope', 'scp'],
      defaultRole: 'customer',
      embedded: {
        accessTokenTtlSeconds: 900,
        refreshTokenTtlSeconds: 14 * 86400,
        signingKeyRotationSeconds: 30 * 86400,
        loginMaxFailuresPerAccount: 5,
        loginMaxFailuresPerAddress: 20,
        loginThrottleWindowSeconds: 900,
      },
    });
  });

  it('switches the embedded provider off for an external issuer, keeping its exact spelling', () => {
    const { auth } = loadConfig({
      ...required,
      OIDC_ISSUER: 'https://tenant.eu.auth0.com/',
      OIDC_AUDIENCE: 'https://api.bus-booking.example',
      OIDC_ROLES_CLAIM: 'https://bus-booking.example/roles',
      OIDC_SCOPES_CLAIM: 'scope, permissions',
      OIDC_DEFAULT_ROLE: 'none',
    });
    expect(auth.embedded).toBeNull();
    expect(tokenVerifierOptionsFromConfig(auth)).toMatchObject({
      issuer: 'https://tenant.eu.auth0.com/',
      audience: 'https://api.bus-booking.example',
      rolesClaim: 'https://bus-booking.example/roles',
      scopesClaims: ['scope', 'permissions'],
      defaultRole: null,
    });
  });

  it.each([
    [{ OIDC_ISSUER: 'not a url' }, 'OIDC_ISSUER'],
    [{ OIDC_JWKS_URL: 'https://id.example.com/jwks' }, 'OIDC_JWKS_URL'],
    [{ OIDC_ALGORITHMS: 'HS256' }, 'OIDC_ALGORITHMS'],
    [{ OIDC_ALGORITHMS: 'ES256' }, 'OIDC_ALGORITHMS'],
    [{ OIDC_DEFAULT_ROLE: 'admin' }, 'OIDC_DEFAULT_ROLE'],
    [{ OIDC_SCOPES_CLAIM: 'permissions' }, 'OIDC_SCOPES_CLAIM'],
    [{ OIDC_ISSUER: 'https://id.example.com/realms/buses', OIDC_SCOPES_CLAIM: ' , ' }, 'OIDC_SCOPES_CLAIM'],
    [{ IDP_LOGIN_THROTTLE_WINDOW_SECONDS: '0' }, 'IDP_LOGIN_THROTTLE_WINDOW_SECONDS'],
  ])('fails fast naming the variable for %j', (environment, variable) => {
    expect(() => loadConfig({ ...required, ...environment })).toThrow(`configuration: ${variable}`);
  });
});
