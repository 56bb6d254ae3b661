// The OAuth 2.0 authorization server over real HTTP and PostgreSQL: discovery, each grant form-encoded, and RFC 6749 errors.
import { request as httpRequest } from 'node:http';
import { expect } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { docsClientId } from '../../../src/config';
import { contractScopes, scopesForRoles } from '../../../src/security/policy';
import {
  startIdentityFixture,
  testAudience,
  testClients,
  verifierFor,
  type IdentityFixture,
} from '../../support/identity-provider';
import { Browser, locationOf, pkcePair, postForm, type OAuthAnswer } from '../../support/oauth-client';
import type { LoginUser } from '../../support/users';

/** RFC 6749 §5.2: an `error` code, an optional human-readable description, nothing of the project's problem format. */
function expectOAuthError(answer: OAuthAnswer, status: number, error: string): void {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error });
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(typeof answer.body.error_description).toBe('string');
  expect(answer.body).not.toHaveProperty('code');
}

/** A GET with headers fetch will not send as given (`Host`), over one plain HTTP/1.1 connection. */
function getWithHeaders(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { headers, timeout: 10_000 }, (incoming) => {
      let body = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (body += chunk));
      incoming.on('end', () =>
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body }),
      );
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer from ${url} in 10 s`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the OAuth 2.0 authorization server', () => {
  let fixture: IdentityFixture;
  let discovery: Record<string, unknown>;
  const docsRedirectUri = () => `${fixture.issuer}/docs/oauth2-redirect.html`;
  const endpoint = (name: string) => String(discovery[name]);

  beforeAll(async () => {
    fixture = await startIdentityFixture();
    const response = await fetch(`${fixture.issuer}/.well-known/openid-configuration`);
    discovery = (await response.json()) as Record<string, unknown>;
  });
  afterAll(() => fixture?.close());

  it('writes every URL of its discovery document from the configured issuer: a foreign Host or forwarded header changes nothing', async () => {
    const discoveryUrl = `${fixture.issuer}/.well-known/openid-configuration`;
    const plain = await getWithHeaders(discoveryUrl, {});
    const poisoned: Record<string, string>[] = [
      { host: 'evil.example' },
      { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    ];
    for (const headers of poisoned) {
      const answer = await getWithHeaders(discoveryUrl, headers);
      expect(answer.status).toBe(200);
      // Byte for byte the answer a shared cache may keep for everyone: nothing in it came from the request.
      expect(answer.body).toBe(plain.body);
      expect(answer.body).not.toContain('evil.example');
      expect(answer.headers['cache-control']).toBe('public, max-age=300');
    }
    const document = JSON.parse(plain.body) as Record<string, unknown>;
    const urls = Object.entries(document).filter(
      ([, value]) => typeof value === 'string' && /^https?:/.test(value),
    );
    expect(urls.map(([name]) => name)).toEqual(
      expect.arrayContaining(['issuer', 'token_endpoint', 'jwks_uri']),
    );
    for (const [, url] of urls) expect(new URL(String(url)).origin).toBe(new URL(fixture.issuer).origin);

    // The sign-in redirect, the other URL the provider writes from the request, stays on the issuer too.
    const authorize = new URL(endpoint('authorization_endpoint'));
    authorize.search = new URLSearchParams({
      client_id: docsClientId,
      redirect_uri: docsRedirectUri(),
      response_type: 'code',
      scope: 'openid',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }).toString();
    const redirect = await getWithHeaders(authorize.href, { host: 'evil.example' });
    expect(redirect.status).toBe(303);
    expect(new URL(String(redirect.headers.location), fixture.issuer).origin).toBe(
      new URL(fixture.issuer).origin,
    );
  });

  /** Signs `user` in through the sign-in page, as a browser does, and returns the code the redirect carries. */
  async function authorizationCode(
    user: LoginUser,
    request: { clientId?: string; redirectUri?: string; scope?: string; challenge: string },
  ): Promise<{ code: string; state: string; redirect: URL }> {
    const browser = new Browser(fixture.issuer);
    const state = `state-${Math.random()}`;
    const authorize = new URL(endpoint('authorization_endpoint'));
    authorize.search = new URLSearchParams({
      client_id: request.clientId ?? docsClientId,
      redirect_uri: request.redirectUri ?? docsRedirectUri(),
      response_type: 'code',
      scope: request.scope ?? 'openid routes:read bookings:read',
      code_challenge: request.challenge,
      code_challenge_method: 'S256',
      state,
    }).toString();
    const toSignIn = await browser.request(authorize.href);
    expect(toSignIn.status).toBe(303);
    const signInUrl = locationOf(toSignIn, fixture.issuer);
    const page = await browser.request(signInUrl.href);
    expect(page.status).toBe(200);
    const signedIn = await browser.request(`${signInUrl.pathname}/login`, {
      form: { email: user.email, password: user.password },
    });
    expect(signedIn.status).toBe(303);
    const resumed = await browser.request(locationOf(signedIn, fixture.issuer).href);
    expect(resumed.status).toBe(303);
    const redirect = locationOf(resumed, fixture.issuer);
    return {
      code: redirect.searchParams.get('code') ?? '',
      state: redirect.searchParams.get('state') ?? '',
      redirect,
    };
  }

  const exchangeCode = (code: string, verifier: string, overrides: Record<string, string> = {}) =>
    postForm(endpoint('token_endpoint'), {
      grant_type: 'authorization_code',
      code,
      redirect_uri: docsRedirectUri(),
      client_id: docsClientId,
      code_verifier: verifier,
      ...overrides,
    });

  describe('discovery', () => {
    it('advertises the endpoints, grants and scopes it serves, and nothing else', () => {
      const base = `${fixture.issuer}/oidc`;
      expect(discovery).toMatchObject({
        issuer: fixture.issuer,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        revocation_endpoint: `${base}/revoke`,
        jwks_uri: `${fixture.issuer}/.well-known/jwks.json`,
        response_types_supported: ['code'],
        grant_types_supported: expect.arrayContaining([
          'authorization_code',
          'refresh_token',
          'client_credentials',
        ]),
        code_challenge_methods_supported: ['S256'],
        scopes_supported: ['openid', ...contractScopes()],
        id_token_signing_alg_values_supported: expect.arrayContaining(['RS256']),
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
      });
      expect(discovery).not.toHaveProperty('dpop_signing_alg_values_supported');
      expect(discovery).not.toHaveProperty('userinfo_endpoint');
      expect(discovery).not.toHaveProperty('end_session_endpoint');
      expect(discovery).not.toHaveProperty('registration_endpoint');
      expect(discovery).not.toHaveProperty('pushed_authorization_request_endpoint');
    });

    it('answers every advertised endpoint: GET for pages and keys, POST for the token and revocation endpoints', async () => {
      const endpoints = Object.entries(discovery).filter(
        ([name]) => name.endsWith('_endpoint') || name === 'jwks_uri',
      );
      expect(endpoints.map(([name]) => name).sort()).toEqual([
        'authorization_endpoint',
        'jwks_uri',
        'revocation_endpoint',
        'token_endpoint',
      ]);
      const statuses = await Promise.all(
        endpoints.map(async ([name, url]) => {
          const takesPost = name === 'token_endpoint' || name === 'revocation_endpoint';
          const answer = takesPost
            ? await postForm(String(url), {})
            : await fetch(String(url), { redirect: 'manual', signal: AbortSignal.timeout(30_000) });
          return [name, answer.status];
        }),
      );
      expect(Object.fromEntries(statuses)).toEqual({
        authorization_endpoint: 400,
        jwks_uri: 200,
        revocation_endpoint: 400,
        token_endpoint: 400,
      });
    });

    it("publishes one key set at jwks_uri and at the provider's own route, the one the verifier reads", async () => {
      const published = await (await fetch(endpoint('jwks_uri'))).json();
      const providers = await (await fetch(`${fixture.issuer}/oidc/jwks`)).json();
      expect(providers).toEqual(published);
      expect(published).toEqual(await fixture.identityProvider.jsonWebKeySet());
    });
  });

  describe('authorization code with PKCE', () => {
    it('signs a person in through the sign-in page and exchanges the code, form-encoded, for verifiable tokens', async () => {
      const user = await fixture.createUser(['customer']);
      const pkce = pkcePair();
      const { code, state, redirect } = await authorizationCode(user, { challenge: pkce.challenge });
      expect(`${redirect.origin}${redirect.pathname}`).toBe(docsRedirectUri());
      expect(state).toMatch(/^state-/);
      expect(redirect.searchParams.get('iss')).toBe(fixture.issuer);

      const tokens = await exchangeCode(code, pkce.verifier);
      expect(tokens.status).toBe(200);
      expect(tokens.headers.get('cache-control')).toBe('no-store');
      expect(tokens.body).toMatchObject({
        token_type: 'Bearer',
        expires_in: 300,
        access_token: expect.any(String),
        refresh_token: expect.any(String),
        id_token: expect.any(String),
        // The access token's scope: the API's; `openid` is what the ID token answers.
        scope: 'bookings:read routes:read',
      });
      const accessToken = String(tokens.body.access_token);
      expect(decodeProtectedHeader(accessToken)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
      expect(decodeJwt(accessToken)).toMatchObject({
        iss: fixture.issuer,
        aud: testAudience,
        sub: user.id,
        client_id: docsClientId,
        roles: ['customer'],
      });
      const verifier = verifierFor(fixture, { keySetSource: () => fixture.identityProvider.jsonWebKeySet() });
      await expect(verifier.verifyAccessToken(accessToken)).resolves.toEqual({
        userId: user.id,
        roles: ['customer'],
        scopes: ['bookings:read', 'routes:read'],
      });
    });

    it('grants a person only the scopes their roles allow, whatever the app asks for', async () => {
      const user = await fixture.createUser(['customer']);
      const pkce = pkcePair();
      const { code } = await authorizationCode(user, {
        challenge: pkce.challenge,
        scope: 'openid routes:read seats:write notifications:send',
      });
      const tokens = await exchangeCode(code, pkce.verifier);
      expect(tokens.status).toBe(200);
      expect(decodeJwt(String(tokens.body.access_token)).scope).toBe('routes:read');
      expect(scopesForRoles(['customer'])).not.toContain('seats:write');
    });

    it('signs people in for a native app with its private-use-scheme redirect URI', async () => {
      const user = await fixture.createUser(['agent']);
      const pkce = pkcePair();
      const redirectUri = testClients.native.redirectUris[0];
      const { code, redirect } = await authorizationCode(user, {
        clientId: testClients.native.clientId,
        redirectUri,
        challenge: pkce.challenge,
      });
      expect(redirect.href.startsWith(redirectUri)).toBe(true);
      const tokens = await exchangeCode(code, pkce.verifier, {
        client_id: testClients.native.clientId,
        redirect_uri: redirectUri,
      });
      expect(tokens.status).toBe(200);
      expect(decodeJwt(String(tokens.body.access_token))).toMatchObject({ sub: user.id, roles: ['agent'] });
    });
  });

  describe('refresh tokens', () => {
    async function signedInTokens() {
      const user = await fixture.createUser(['customer']);
      const pkce = pkcePair();
      const { code } = await authorizationCode(user, { challenge: pkce.challenge });
      const tokens = await exchangeCode(code, pkce.verifier);
      expect(tokens.status).toBe(200);
      return { user, refreshToken: String(tokens.body.refresh_token) };
    }

    const refresh = (refreshToken: string, clientId = docsClientId) =>
      postForm(endpoint('token_endpoint'), {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: clientId,
      });

    it('rotates: a form-encoded refresh returns new tokens, and the spent token replayed revokes the grant', async () => {
      const { user, refreshToken } = await signedInTokens();
      const first = await refresh(refreshToken);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
      expect(first.body.refresh_token).not.toBe(refreshToken);
      expect(decodeJwt(String(first.body.access_token))).toMatchObject({ sub: user.id, aud: testAudience });

      expectOAuthError(await refresh(refreshToken), 400, 'invalid_grant');
      // The replay cost the whole grant: the token the thief or the owner got from the rotation is dead too.
      expectOAuthError(await refresh(String(first.body.refresh_token)), 400, 'invalid_grant');
    });

    it('refuses a refresh token presented by another client', async () => {
      const { refreshToken } = await signedInTokens();
      expectOAuthError(await refresh(refreshToken, testClients.native.clientId), 400, 'invalid_grant');
    });

    it('revokes a refresh token at the revocation endpoint (RFC 7009), after which it no longer refreshes', async () => {
      const { refreshToken } = await signedInTokens();
      const revoked = await postForm(endpoint('revocation_endpoint'), {
        token: refreshToken,
        token_type_hint: 'refresh_token',
        client_id: docsClientId,
      });
      expect(revoked.status).toBe(200);
      expectOAuthError(await refresh(refreshToken), 400, 'invalid_grant');
    });
    it("ignores a client's attempt to revoke another client's token", async () => {
      const { refreshToken } = await signedInTokens();
      const attempt = await postForm(endpoint('revocation_endpoint'), {
        token: refreshToken,
        client_id: testClients.native.clientId,
      });
      expect(attempt.status).toBe(200);
      expect((await refresh(refreshToken)).status).toBe(200);
    });
  });

  describe('client credentials', () => {
    const service = testClients.service;
    const basic = { clientId: service.clientId, clientSecret: service.clientSecret };

    it('issues an internal service a JWT access token with its scopes and roles, which the verifier accepts', async () => {
      const answer = await postForm(
        endpoint('token_endpoint'),
        { grant_type: 'client_credentials', scope: 'seats:write' },
        { basic },
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 300, scope: 'seats:write' });
      expect(answer.body).not.toHaveProperty('refresh_token');
      const accessToken = String(answer.body.access_token);
      expect(decodeJwt(accessToken)).toMatchObject({
        iss: fixture.issuer,
        aud: testAudience,
        sub: service.clientId,
        client_id: service.clientId,
        roles: ['admin'],
      });
      await expect(verifierFor(fixture).verifyAccessToken(accessToken)).resolves.toEqual({
        userId: service.clientId,
        roles: ['admin'],
        scopes: ['seats:write'],
      });
    });

    it('refuses a scope the service is not registered for', async () => {
      const answer = await postForm(
        endpoint('token_endpoint'),
        { grant_type: 'client_credentials', scope: 'bookings:write' },
        { basic },
      );
      expectOAuthError(answer, 400, 'invalid_scope');
    });

    it('refuses a wrong secret as invalid_client with 401', async () => {
      const answer = await postForm(
        endpoint('token_endpoint'),
        { grant_type: 'client_credentials', scope: 'seats:write' },
        { basic: { clientId: service.clientId, clientSecret: 'not-the-secret-at-all-but-long-enough' } },
      );
      expectOAuthError(answer, 401, 'invalid_client');
    });
  });

  describe('bad input answers RFC 6749 §5.2 errors, never a 5xx', () => {
    it('a grant type the server does not support (the old password grant): unsupported_grant_type', async () => {
      const user = await fixture.createUser();
      const answer = await postForm(endpoint('token_endpoint'), {
        grant_type: 'password',
        username: user.email,
        password: user.password,
        client_id: docsClientId,
      });
      expectOAuthError(answer, 400, 'unsupported_grant_type');
    });

    it('a grant type the client is not registered for: invalid_request saying so', async () => {
      const answer = await postForm(endpoint('token_endpoint'), {
        grant_type: 'client_credentials',
        client_id: docsClientId,
      });
      // oidc-provider's answer (RFC 6749 also allows unauthorized_client here).
      expectOAuthError(answer, 400, 'invalid_request');
      expect(answer.body.error_description).toBe('requested grant type is not allowed for this client');
    });

    it('a wrong PKCE code verifier: invalid_grant', async () => {
      const user = await fixture.createUser();
      const pkce = pkcePair();
      const { code } = await authorizationCode(user, { challenge: pkce.challenge });
      expectOAuthError(await exchangeCode(code, pkcePair().verifier), 400, 'invalid_grant');
    });

    it('no PKCE code verifier at all: invalid_grant', async () => {
      const user = await fixture.createUser();
      const pkce = pkcePair();
      const { code } = await authorizationCode(user, { challenge: pkce.challenge });
      const answer = await postForm(endpoint('token_endpoint'), {
        grant_type: 'authorization_code',
        code,
        redirect_uri: docsRedirectUri(),
        client_id: docsClientId,
      });
      expectOAuthError(answer, 400, 'invalid_grant');
    });

    it('a replayed authorization code: invalid_grant, and the tokens the first use got are revoked', async () => {
      const user = await fixture.createUser();
      const pkce = pkcePair();
      const { code } = await authorizationCode(user, { challenge: pkce.challenge });
      const first = await exchangeCode(code, pkce.verifier);
      expect(first.status).toBe(200);
      expectOAuthError(await exchangeCode(code, pkce.verifier), 400, 'invalid_grant');
      const refreshed = await postForm(endpoint('token_endpoint'), {
        grant_type: 'refresh_token',
        refresh_token: String(first.body.refresh_token),
        client_id: docsClientId,
      });
      expectOAuthError(refreshed, 400, 'invalid_grant');
    });

    it('a code exchanged with another redirect URI than it was issued for: invalid_grant', async () => {
      const user = await fixture.createUser();
      const pkce = pkcePair();
      const { code } = await authorizationCode(user, { challenge: pkce.challenge });
      const answer = await exchangeCode(code, pkce.verifier, { redirect_uri: `${fixture.issuer}/elsewhere` });
      expectOAuthError(answer, 400, 'invalid_grant');
    });

    it('an unknown client at the token endpoint: invalid_client with 401', async () => {
      const answer = await postForm(endpoint('token_endpoint'), {
        grant_type: 'authorization_code',
        code: 'whatever',
        redirect_uri: docsRedirectUri(),
        client_id: 'nobody-registered-this',
        code_verifier: pkcePair().verifier,
      });
      expectOAuthError(answer, 401, 'invalid_client');
    });

    it('an unknown client at the authorization endpoint: invalid_client, not a redirect', async () => {
      const authorize = new URL(endpoint('authorization_endpoint'));
      authorize.search = new URLSearchParams({
        client_id: 'nobody-registered-this',
        redirect_uri: docsRedirectUri(),
        response_type: 'code',
        scope: 'openid',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }).toString();
      const answer = await new Browser(fixture.issuer).request(authorize.href, {
        accept: 'application/json',
      });
      expectOAuthError(answer, 400, 'invalid_client');
    });

    it('a redirect URI the client did not register: invalid_redirect_uri, not a redirect', async () => {
      const authorize = new URL(endpoint('authorization_endpoint'));
      authorize.search = new URLSearchParams({
        client_id: docsClientId,
        redirect_uri: 'https://attacker.example/steal',
        response_type: 'code',
        scope: 'openid',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }).toString();
      const answer = await new Browser(fixture.issuer).request(authorize.href, {
        accept: 'application/json',
      });
      expectOAuthError(answer, 400, 'invalid_redirect_uri');
      expect(answer.headers.get('location')).toBeNull();
    });

    it('shows a person in a browser the same error as a page, under a strict CSP', async () => {
      const authorize = new URL(endpoint('authorization_endpoint'));
      authorize.search = new URLSearchParams({
        client_id: 'nobody-registered-this',
        response_type: 'code',
      }).toString();
      const answer = await new Browser(fixture.issuer).request(authorize.href, { accept: 'text/html' });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
      expect(answer.text).toContain('invalid_client');
      expect(answer.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    });

    it('an authorization request without a PKCE challenge: invalid_request, sent back to the registered redirect URI', async () => {
      const authorize = new URL(endpoint('authorization_endpoint'));
      authorize.search = new URLSearchParams({
        client_id: docsClientId,
        redirect_uri: docsRedirectUri(),
        response_type: 'code',
        scope: 'openid',
        state: 'no-pkce',
      }).toString();
      const answer = await new Browser(fixture.issuer).request(authorize.href);
      expect(answer.status).toBe(303);
      const redirect = locationOf(answer, fixture.issuer);
      expect(`${redirect.origin}${redirect.pathname}`).toBe(docsRedirectUri());
      expect(Object.fromEntries(redirect.searchParams)).toMatchObject({
        error: 'invalid_request',
        state: 'no-pkce',
      });
    });

    it('a resource indicator of another API: invalid_target', async () => {
      const answer = await postForm(
        endpoint('token_endpoint'),
        { grant_type: 'client_credentials', scope: 'seats:write', resource: 'https://other-api.example' },
        { basic: { clientId: testClients.service.clientId, clientSecret: testClients.service.clientSecret } },
      );
      expectOAuthError(answer, 400, 'invalid_target');
    });

    it('a JSON body at the token endpoint: invalid_request (RFC 6749 takes form encoding)', async () => {
      const response = await fetch(endpoint('token_endpoint'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'x', client_id: docsClientId }),
        signal: AbortSignal.timeout(30_000),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('revocation by an unknown client: invalid_client with 401', async () => {
      const answer = await postForm(endpoint('revocation_endpoint'), {
        token: 'x',
        client_id: 'nobody-registered-this',
      });
      expectOAuthError(answer, 401, 'invalid_client');
    });
  });

  describe('the sign-in page', () => {
    async function openSignIn() {
      const browser = new Browser(fixture.issuer);
      const authorize = new URL(endpoint('authorization_endpoint'));
      authorize.search = new URLSearchParams({
        client_id: docsClientId,
        redirect_uri: docsRedirectUri(),
        response_type: 'code',
        scope: 'openid routes:read',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        state: 'page',
      }).toString();
      const toSignIn = await browser.request(authorize.href);
      // Browsers check the opener policy at every redirect; one without it would cut a popup from the docs page.
      expect(toSignIn.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      const signInUrl = locationOf(toSignIn, fixture.issuer);
      return { browser, signInUrl };
    }

    it('is plain, labelled HTML with no script, under a CSP that allows only its own style and form posts home or to the client', async () => {
      const { browser, signInUrl } = await openSignIn();
      const page = await browser.request(signInUrl.href);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(page.text).not.toMatch(/<script|https?:\/\//);
      expect(page.text).toMatch(/<html lang="en">/);
      expect(page.text).toMatch(
        /<label for="email">Email<\/label>\s*<input id="email" name="email" type="email" autocomplete="username"/,
      );
      expect(page.text).toMatch(
        /<label for="password">Password<\/label>\s*<input id="password" name="password" type="password"/,
      );
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
      expect(csp).toContain(`form-action 'self' ${fixture.issuer}`);
      expect(csp).toContain("frame-ancestors 'none'");
    });

    it('says the email or password is wrong, as an alert tied to the fields, and keeps the email typed', async () => {
      const user = await fixture.createUser();
      const { browser, signInUrl } = await openSignIn();
      await browser.request(signInUrl.href);
      const failed = await browser.request(`${signInUrl.pathname}/login`, {
        form: { email: user.email, password: 'not-the-password' },
      });
      expect(failed.status).toBe(401);
      expect(failed.text).toContain('role="alert"');
      expect(failed.text).toContain('The email or password is wrong.');
      expect(failed.text).toContain('aria-describedby="sign-in-error"');
      expect(failed.text).toContain(`value="${user.email}"`);
    });

    it('sends a cancelled sign-in back to the client with access_denied', async () => {
      const { browser, signInUrl } = await openSignIn();
      await browser.request(signInUrl.href);
      const cancelled = await browser.request(`${signInUrl.pathname}/abort`, { form: {} });
      expect(cancelled.status).toBe(303);
      const resumed = await browser.request(locationOf(cancelled, fixture.issuer).href);
      const redirect = locationOf(resumed, fixture.issuer);
      expect(Object.fromEntries(redirect.searchParams)).toMatchObject({
        error: 'access_denied',
        state: 'page',
      });
    });

    it('answers an unknown or finished interaction with invalid_request, not a 5xx', async () => {
      const browser = new Browser(fixture.issuer);
      const answer = await browser.request('/oidc/interaction/not-an-interaction', {
        accept: 'application/json',
      });
      expectOAuthError(answer, 400, 'invalid_request');
      const posted = await browser.request('/oidc/interaction/not-an-interaction/login', {
        form: { email: 'a@b.c', password: 'x' },
        accept: 'application/json',
      });
      expectOAuthError(posted, 400, 'invalid_request');
    });
  });
});

describe('the authorization server across a signing key rotation', () => {
  let fixture: IdentityFixture;

  beforeAll(async () => {
    fixture = await startIdentityFixture();
  });
  afterAll(() => fixture?.close());

  const serviceToken = async () => {
    const answer = await postForm(
      `${fixture.issuer}/oidc/token`,
      { grant_type: 'client_credentials', scope: 'routes:read' },
      { basic: { clientId: testClients.service.clientId, clientSecret: testClients.service.clientSecret } },
    );
    expect(answer.status).toBe(200);
    return String(answer.body.access_token);
  };

  it('signs with the new key once the store rotates, while tokens of the old key still verify', async () => {
    const before = await serviceToken();
    const previousKid = decodeProtectedHeader(before).kid;
    const verifier = verifierFor(fixture);
    await expect(verifier.verifyBearerToken(`Bearer ${before}`)).resolves.toMatchObject({
      sub: testClients.service.clientId,
    });

    const newKid = await fixture.identityProvider.rotateSigningKey();
    const after = await serviceToken();
    expect(decodeProtectedHeader(after).kid).toBe(newKid);

    await expect(verifier.verifyBearerToken(`Bearer ${before}`)).resolves.toMatchObject({
      sub: expect.any(String),
    });
    await expect(verifier.verifyBearerToken(`Bearer ${after}`)).resolves.toMatchObject({
      sub: expect.any(String),
    });
    const kidsAt = async (url: string) =>
      ((await (await fetch(url)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
    const discovered = (await (await fetch(`${fixture.issuer}/.well-known/openid-configuration`)).json()) as {
      jwks_uri: string;
    };
    expect(await kidsAt(discovered.jwks_uri)).toEqual([newKid, previousKid]);
    expect(await kidsAt(`${fixture.issuer}/oidc/jwks`)).toEqual([newKid, previousKid]);
  });
});
