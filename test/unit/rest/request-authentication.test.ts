// REST bearer authentication: koa-jwt checks a token's signature once, the verifier's cache answers its repeats.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Koa from 'koa';
import request from 'supertest';
import { authenticateRequest } from '../../../src/api/rest/request-authorization';
import type { Actor } from '../../../src/domain/actor';
import { DomainError } from '../../../src/domain/errors';
import { createTokenVerifier, type TokenVerifier } from '../../../src/security/token-verifier';

const issuer = 'https://issuer.authentication-tests.example';
const audience = 'bus-booking-api';

async function signedTokens() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const keyId = `authentication-test-${randomUUID()}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid: keyId, alg: 'RS256', use: 'sig' };
  const verifier = createTokenVerifier({
    issuer,
    audience,
    algorithms: ['RS256'],
    clockToleranceSeconds: 0,
    keySetSource: () => Promise.resolve({ keys: [publicJwk] }),
  });
  const issue = (subject: string, expiresInSeconds = 600) =>
    new SignJWT({ scope: 'bookings:read', roles: ['customer'] })
      .setProtectedHeader({ alg: 'RS256', kid: keyId, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
      .sign(privateKey);
  return { verifier, issue };
}

/** Counts how often a signing key is asked for: once per signature koa-jwt checks. */
function countingKeyLookups(verifier: TokenVerifier) {
  const counted = { lookups: 0 };
  const wrapped: TokenVerifier = {
    ...verifier,
    signingKeyFor(header) {
      counted.lookups += 1;
      return verifier.signingKeyFor(header);
    },
  };
  return { counted, verifier: wrapped };
}

function appWith(verifier: TokenVerifier) {
  const app = new Koa();
  app.use(async (context, next) => {
    try {
      await next();
    } catch (error) {
      context.status = error instanceof DomainError ? error.mapping.httpStatus : 500;
      context.body = { code: error instanceof DomainError ? error.code : 'INTERNAL' };
    }
  });
  app.use(authenticateRequest(verifier));
  app.use((context) => {
    const actor = context.state.actor as Actor;
    context.body = { userId: actor.userId, roles: actor.roles };
  });
  return app.callback();
}

describe('authenticateRequest', () => {
  it('checks a token with koa-jwt once and answers its repeats from the verified-token cache', async () => {
    const { verifier, issue } = await signedTokens();
    const { counted, verifier: counting } = countingKeyLookups(verifier);
    const app = appWith(counting);
    const token = await issue('customer-1');

    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await request(app).get('/').set('Authorization', `Bearer ${token}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ userId: 'customer-1', roles: ['customer'] });
    }
    expect(counted.lookups).toBe(1);
  });

  it('never remembers a refused token: each repeat is checked again and refused again', async () => {
    const { verifier, issue } = await signedTokens();
    const { counted, verifier: counting } = countingKeyLookups(verifier);
    const app = appWith(counting);
    const expired = await issue('customer-2', -60);

    for (let attempt = 0; attempt < 2; attempt += 1) {
      const response = await request(app).get('/').set('Authorization', `Bearer ${expired}`);
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ code: 'UNAUTHENTICATED' });
      expect(response.headers['www-authenticate']).toContain('invalid_token');
    }
    expect(counted.lookups).toBe(2);
  });

  it('refuses a request without a bearer token before any verification', async () => {
    const { verifier } = await signedTokens();
    const { counted, verifier: counting } = countingKeyLookups(verifier);
    const response = await request(appWith(counting)).get('/');
    expect(response.status).toBe(401);
    expect(counted.lookups).toBe(0);
  });
});
