// The embedded identity provider over real HTTP and PostgreSQL: login, refresh rotation, throttling, key rotation.
import { expect, jest } from '@jest/globals';
// The module object itself (not an import's copy of it), so a spy on it is what the provider calls.
import argon2 = require('@node-rs/argon2');
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeProtectedHeader, decodeJwt } from 'jose';
import request from 'supertest';
import { scopesForRoles } from '../../../src/security/policy';
import {
  startIdentityFixture,
  testAudience,
  verifierFor,
  type IdentityFixture,
} from '../../support/identity-provider';
import {
  answerOf,
  type KeySetAnswer,
  type ProblemAnswer,
  type TokenAnswer,
  type TokenOrProblemAnswer,
} from '../../support/responses';

const withoutRequestId = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });

describe('login and tokens', () => {
  let fixture: IdentityFixture;

  beforeAll(async () => {
    fixture = await startIdentityFixture();
  });
  afterAll(() => fixture?.close());

  it('exchanges email and password for a bearer access token and a refresh token', async () => {
    const user = await fixture.createUser(['customer']);
    const response = await answerOf<TokenAnswer>(
      request(fixture.server)
        .post('/api/auth/login')
        .send({ email: user.email.toUpperCase(), password: user.password }),
    );
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 300,
      refresh_token: expect.stringMatching(/^rt_/),
    });
    const claims = decodeJwt(response.body.access_token);
    expect(claims).toMatchObject({
      iss: fixture.issuer,
      aud: testAudience,
      sub: user.id,
      scope: 'bookings:read bookings:write payments:write routes:read users:read',
      roles: ['customer'],
    });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(claims.jti).toEqual(expect.any(String));
    expect(decodeProtectedHeader(response.body.access_token)).toMatchObject({
      alg: 'RS256',
      kid: expect.any(String),
    });
  });

  it('issues tokens the verifier accepts after discovering the JWKS over HTTP', async () => {
    const agent = await fixture.createUser(['agent']);
    const { body } = await answerOf<TokenAnswer>(
      request(fixture.server).post('/api/auth/login').send({ email: agent.email, password: agent.password }),
    );
    const verifier = verifierFor(fixture);
    const claims = await verifier.verifyBearerToken(`Bearer ${body.access_token}`);
    expect(await verifier.actorFromClaims(claims)).toEqual({
      userId: agent.id,
      roles: ['agent'],
      scopes: scopesForRoles(['agent']),
    });
  });

  it('issues tokens a verifier reading the key set in-process accepts (the embedded deployment)', async () => {
    const user = await fixture.createUser(['admin']);
    const { body } = await answerOf<TokenAnswer>(
      request(fixture.server).post('/api/auth/login').send({ email: user.email, password: user.password }),
    );
    const verifier = verifierFor(fixture, {
      keySetSource: () => fixture.identityProvider.jsonWebKeySet(),
    });
    await expect(verifier.verifyAccessToken(body.access_token)).resolves.toMatchObject({
      userId: user.id,
      roles: ['admin'],
    });
  });

  it('answers UNAVAILABLE, not UNAUTHENTICATED, while the issuer cannot be reached', async () => {
    const user = await fixture.createUser();
    const { body } = await answerOf<TokenAnswer>(
      request(fixture.server).post('/api/auth/login').send({ email: user.email, password: user.password }),
    );
    const verifier = verifierFor(fixture, { issuer: 'http://127.0.0.1:1', httpTimeoutMs: 1000 });
    await expect(verifier.verifyAccessToken(body.access_token)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
  });

  it('answers an unknown email and a wrong password the same way', async () => {
    const user = await fixture.createUser();
    const unknown = await answerOf<ProblemAnswer>(
      request(fixture.server)
        .post('/api/auth/login')
        .send({ email: 'nobody-here@identity.test', password: user.password }),
    );
    const wrong = await answerOf<ProblemAnswer>(
      request(fixture.server)
        .post('/api/auth/login')
        .send({ email: user.email, password: 'not-the-password' }),
    );
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(withoutRequestId(unknown.body)).toEqual(withoutRequestId(wrong.body));
    expect(unknown.body).toMatchObject({ code: 'UNAUTHENTICATED', instance: '/api/auth/login' });
    expect(unknown.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  it('verifies one argon2id hash of the same cost for an unknown email as for a wrong password', async () => {
    // The same work on both paths is what keeps their times alike; it is asserted here, and never by a stopwatch.
    const user = await fixture.createUser();
    const verify = jest.spyOn(argon2, 'verify');
    const hashesVerifiedBy = async (email: string) => {
      verify.mockClear();
      await request(fixture.server).post('/api/auth/login').send({ email, password: 'not-the-password' });
      return verify.mock.calls.map(([hashed]) => String(hashed));
    };
    let wrong: string[], unknown: string[];
    try {
      wrong = await hashesVerifiedBy(user.email);
      unknown = await hashesVerifiedBy('nobody-here@identity.test');
    } finally {
      verify.mockRestore();
    }
    expect(wrong).toHaveLength(1);
    expect(unknown).toHaveLength(1);
    // `$argon2id$v=19$m=…,t=…,p=…$salt$hash`: algorithm, version and cost must match, the hash itself may not.
    const costOf = (hashed: string) => hashed.split('$').slice(1, 4).join('$');
    expect(costOf(unknown[0])).toMatch(/^argon2id\$v=19\$m=\d+,t=\d+,p=\d+$/);
    expect(costOf(unknown[0])).toBe(costOf(wrong[0]));
    expect(unknown[0]).not.toBe(wrong[0]);
  });

  it('rejects malformed bodies with VALIDATION_FAILED naming the fields, and non-JSON with 415', async () => {
    const missing = await answerOf<ProblemAnswer>(
      request(fixture.server).post('/api/auth/login').send({ email: 'a@b.c', extra: 1 }),
    );
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'password' }),
        expect.objectContaining({ field: 'extra' }),
      ]),
    );
    const form = await answerOf<ProblemAnswer>(
      request(fixture.server).post('/api/auth/login').type('form').send('email=a&password=b'),
    );
    expect(form.status).toBe(415);
    expect(form.body.code).toBe('VALIDATION_FAILED');
  });

  it('publishes OpenID discovery metadata and the JWKS', async () => {
    const discovery = await answerOf<Record<string, unknown>>(
      request(fixture.server).get('/.well-known/openid-configuration'),
    );
    expect(discovery.status).toBe(200);
    expect(discovery.body).toMatchObject({
      issuer: fixture.issuer,
      jwks_uri: `${fixture.issuer}/.well-known/jwks.json`,
      // The authorization server's token endpoint; /api/auth/login is the first-party password sign-in.
      token_endpoint: `${fixture.issuer}/oidc/token`,
      id_token_signing_alg_values_supported: ['RS256'],
    });
    const jwks = await answerOf<KeySetAnswer>(request(fixture.server).get('/.well-known/jwks.json'));
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys[0]).toEqual(
      expect.objectContaining({
        kty: 'RSA',
        alg: 'RS256',
        use: 'sig',
        kid: expect.any(String),
        n: expect.any(String),
      }),
    );
    expect(jwks.body.keys[0]).not.toHaveProperty('d');
  });

  it('keeps private keys encrypted at rest', async () => {
    const rows = await fixture
      .database('identity_signing_keys')
      .where({ issuer: fixture.issuer })
      .select<{ private_key: string }[]>('private_key');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.private_key).toMatch(/^enc:v1:idtest:/);
  });
});

describe('refresh tokens', () => {
  let fixture: IdentityFixture;

  beforeAll(async () => {
    fixture = await startIdentityFixture();
  });
  afterAll(() => fixture?.close());

  async function login() {
    const user = await fixture.createUser();
    const { body } = await answerOf<TokenAnswer>(
      request(fixture.server).post('/api/auth/login').send({ email: user.email, password: user.password }),
    );
    return { user, tokens: body };
  }

  const refresh = (refreshToken: string) =>
    answerOf<TokenOrProblemAnswer>(
      request(fixture.server).post('/api/auth/refresh').send({ refresh_token: refreshToken }),
    );

  it('rotates: each refresh returns new tokens for the same user and retires the one it consumed', async () => {
    const { user, tokens } = await login();
    const first = await refresh(tokens.refresh_token);
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(first.body.access_token).sub).toBe(user.id);
    const second = await refresh(first.body.refresh_token);
    expect(second.status).toBe(200);
  });

  it('stores refresh tokens only as hashes', async () => {
    const { user, tokens } = await login();
    const rows = await fixture
      .database('identity_refresh_tokens')
      .where({ user_id: user.id })
      .select<{ token_hash: string }[]>('token_hash');
    expect(rows.map((row) => row.token_hash)).not.toContain(tokens.refresh_token);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('revokes the whole family when a rotated token is used again, leaving other logins alone', async () => {
    const { user, tokens } = await login();
    const otherLogin = await answerOf<TokenAnswer>(
      request(fixture.server).post('/api/auth/login').send({ email: user.email, password: user.password }),
    );
    const rotated = await refresh(tokens.refresh_token);
    expect(rotated.status).toBe(200);

    const replay = await refresh(tokens.refresh_token);
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('UNAUTHENTICATED');
    const afterTheft = await refresh(rotated.body.refresh_token);
    expect(afterTheft.status).toBe(401);
    expect(withoutRequestId(afterTheft.body)).toEqual(withoutRequestId(replay.body));

    const unaffected = await refresh(otherLogin.body.refresh_token);
    expect(unaffected.status).toBe(200);
  });

  it('refuses an unknown refresh token', async () => {
    const response = await refresh('rt_not-a-token-we-issued');
    expect(response.status).toBe(401);
  });
});

describe('login throttling', () => {
  // Each test starts a provider of its own: the address counter is keyed by the provider's blind index, so no test
  // inherits another's failed logins, whatever the order.
  let fixture: IdentityFixture | undefined;
  const throttledProvider = async (windowSeconds: number) => {
    fixture = await startIdentityFixture({
      loginMaxFailuresPerAccount: 3,
      loginMaxFailuresPerAddress: 6,
      loginThrottleWindowSeconds: windowSeconds,
    });
    return fixture;
  };
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  const attempt = (provider: IdentityFixture, email: string, password: string) =>
    answerOf<TokenOrProblemAnswer>(
      request(provider.server).post('/api/auth/login').send({ email, password }),
    );

  it('answers RATE_LIMITED with Retry-After past the account limit, even to the right password, then lets a good login in after the window', async () => {
    const windowSeconds = 2;
    const provider = await throttledProvider(windowSeconds);
    const user = await provider.createUser();
    for (let failure = 0; failure < 3; failure += 1) {
      expect((await attempt(provider, user.email, 'wrong-password')).status).toBe(401);
    }
    const limited = await attempt(provider, user.email, user.password);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(windowSeconds);

    // Not a wait for state: the test holds the client to the Retry-After it was given, and the window is kept by
    // PostgreSQL's clock, which no test can move.
    await sleep(retryAfter * 1000 + 200);
    const afterWindow = await attempt(provider, user.email, user.password);
    expect(afterWindow.status).toBe(200);
    expect(afterWindow.body.token_type).toBe('Bearer');
  });

  it('limits one client address guessing across many accounts', async () => {
    // A window no run of seven logins outlasts, however slow the machine.
    const provider = await throttledProvider(60);
    const statuses: number[] = [];
    for (let guess = 0; guess < 7; guess += 1) {
      statuses.push((await attempt(provider, `guess-${guess}@identity.test`, 'password')).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
  });
});

describe('signing key rotation', () => {
  let fixture: IdentityFixture;
  const accessTokenTtlSeconds = 60;

  beforeAll(async () => {
    fixture = await startIdentityFixture({ accessTokenTtlSeconds, clockToleranceSeconds: 0 });
  });
  afterAll(() => fixture?.close());

  it('keeps tokens of the previous key valid until they expire, while new tokens carry the new kid', async () => {
    const user = await fixture.createUser();
    const login = () =>
      answerOf<TokenAnswer>(
        request(fixture.server).post('/api/auth/login').send({ email: user.email, password: user.password }),
      );
    // The verifier reads this clock: moving it on expires tokens without waiting out their lifetime.
    let clockAheadMs = 0;
    const verifier = verifierFor(fixture, {
      clockToleranceSeconds: 0,
      now: () => Date.now() + clockAheadMs,
    });

    const before = (await login()).body.access_token;
    const previousKid = decodeProtectedHeader(before).kid;
    await verifier.verifyBearerToken(`Bearer ${before}`);

    const newKid = await fixture.identityProvider.rotateSigningKey();
    expect(newKid).not.toBe(previousKid);
    const after = (await login()).body.access_token;
    expect(decodeProtectedHeader(after).kid).toBe(newKid);

    // The verifier has the previous kid cached; the new one is unknown to it and makes it refetch the JWKS.
    await expect(verifier.verifyBearerToken(`Bearer ${before}`)).resolves.toMatchObject({ sub: user.id });
    await expect(verifier.verifyBearerToken(`Bearer ${after}`)).resolves.toMatchObject({ sub: user.id });
    const published = (
      await answerOf<KeySetAnswer>(request(fixture.server).get('/.well-known/jwks.json'))
    ).body.keys.map((key) => key.kid);
    expect(published).toEqual([newKid, previousKid]);

    clockAheadMs = (accessTokenTtlSeconds + 1) * 1000;
    await expect(verifier.verifyBearerToken(`Bearer ${before}`)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'The access token expired',
    });
    // The retired key is published for exactly one token lifetime (no tolerance, no key cache here); PostgreSQL's
    // clock decides when that has passed, so the retirement moves back by that lifetime instead of waiting.
    const retired = await fixture
      .database('identity_signing_keys')
      .where({ kid: previousKid })
      .first<{ seconds: string }>(
        fixture.database.raw('extract(epoch FROM published_until - retired_at)::text AS seconds'),
      );
    expect(Number(retired.seconds)).toBe(accessTokenTtlSeconds);
    await fixture
      .database('identity_signing_keys')
      .where({ kid: previousKid })
      .update({
        retired_at: fixture.database.raw('retired_at - make_interval(secs => ?)', [accessTokenTtlSeconds]),
        published_until: fixture.database.raw('published_until - make_interval(secs => ?)', [
          accessTokenTtlSeconds,
        ]),
      });
    const later = (
      await answerOf<KeySetAnswer>(request(fixture.server).get('/.well-known/jwks.json'))
    ).body.keys.map((key) => key.kid);
    expect(later).toEqual([newKid]);
  });

  it('rotates by itself once the active key is older than the rotation interval', async () => {
    const { kid: current } = await fixture.identityProvider.signingKeys.activeKey();
    await fixture
      .database('identity_signing_keys')
      .where({ kid: current })
      .update({ created_at: fixture.database.raw("now() - interval '2 days'") });
    const { kid: replacement } = await fixture.identityProvider.signingKeys.activeKey();
    expect(replacement).not.toBe(current);
  });
});
