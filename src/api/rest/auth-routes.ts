// REST routes of the embedded identity provider: login, refresh, OpenID discovery and the signing keys.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type Koa from 'koa';
import { validationFailed, type FieldViolation } from '../../domain/errors';
import type { IdentityProvider } from '../../identity/identity-provider';
import { authorizeOperation } from '../../security/rest-authorization';

// Credentials are short (the contract caps a password at 1 KiB and a refresh token at 2 KiB).
const credentialBodyLimitBytes = 16 * 1024;

type Body = Record<string, unknown>;

/** Checks the body against the contract's shape: these string fields, of these lengths, and nothing else. */
function readStrings<Field extends string>(
  body: unknown,
  fields: Record<Field, { maxLength: number }>,
): Record<Field, string> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationFailed([{ field: '', message: 'must be a JSON object' }]);
  }
  const violations: FieldViolation[] = [];
  const values = {} as Record<Field, string>;
  for (const [field, { maxLength }] of Object.entries(fields) as [Field, { maxLength: number }][]) {
    const value = (body as Body)[field];
    if (typeof value !== 'string' || value.length === 0) {
      violations.push({ field, message: 'is required and must be a non-empty string' });
    } else if (value.length > maxLength) {
      violations.push({ field, message: `must be at most ${maxLength} characters` });
    } else {
      values[field] = value;
    }
  }
  for (const unknownField of Object.keys(body).filter((key) => !(key in fields))) {
    violations.push({ field: unknownField, message: 'is not a known property' });
  }
  if (violations.length > 0) throw validationFailed(violations);
  return values;
}

const requireJson: Koa.Middleware = async (context, next) => {
  if (!context.is('application/json')) context.throw(415);
  await next();
};

const noStore: Koa.Middleware = async (context, next) => {
  // RFC 6749 §5.1: token responses must not be cached.
  context.set('Cache-Control', 'no-store');
  context.set('Pragma', 'no-cache');
  await next();
};

/** Mount only when the embedded provider is on (no external OIDC_ISSUER). */
export function identityProviderRouter(identityProvider: IdentityProvider): Router {
  const parseJson = bodyParser({
    enableTypes: ['json'],
    jsonLimit: credentialBodyLimitBytes,
    jsonStrict: true,
  });
  const router = new Router();

  router.post(
    '/api/auth/login',
    authorizeOperation('login'),
    noStore,
    requireJson,
    parseJson,
    async (context) => {
      const { email, password } = readStrings(context.request.body, {
        email: { maxLength: 254 },
        password: { maxLength: 1024 },
      });
      context.body = await identityProvider.login({ email, password }, context.ip);
    },
  );

  router.post(
    '/api/auth/refresh',
    authorizeOperation('refresh'),
    noStore,
    requireJson,
    parseJson,
    async (context) => {
      const { refresh_token: refreshToken } = readStrings(context.request.body, {
        refresh_token: { maxLength: 2048 },
      });
      context.body = await identityProvider.refresh(refreshToken);
    },
  );

  router.get('/.well-known/openid-configuration', authorizeOperation('getOpenIdConfiguration'), (context) => {
    context.set('Cache-Control', 'public, max-age=300');
    context.body = identityProvider.openIdConfiguration();
  });

  router.get('/.well-known/jwks.json', authorizeOperation('getJsonWebKeySet'), async (context) => {
    // Short, so verifiers that honour caching still see a new key soon after a rotation.
    context.set('Cache-Control', 'public, max-age=60');
    context.body = await identityProvider.jsonWebKeySet();
  });

  return router;
}
