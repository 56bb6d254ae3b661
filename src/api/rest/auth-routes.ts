// REST routes of the embedded identity provider: login, refresh, OpenID discovery and the signing keys.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type Koa from 'koa';
import { openApiOperationsById } from '../../contracts/openapi-document';
import type { IdentityProvider } from '../../identity/identity-provider';
import { documentRequestValidator } from './openapi-validation';
import { queryParametersOf } from './query-parameters';
import { authorizeOperation } from './request-authorization';
import { requestBodyKind } from './request-body';

// Credentials are short (the contract caps a password at 1 KiB and a refresh token at 2 KiB).
const credentialBodyLimitBytes = 16 * 1024;

/** Checks headers, query and body against the operation's contract, as the API router does for its own. */
function validatedBody(operationId: string): (context: Koa.Context) => Record<string, string> {
  const operation = openApiOperationsById.get(operationId);
  if (operation === undefined) throw new Error(`no OpenAPI operation ${operationId}`);
  const validator = documentRequestValidator(operation);
  return (context) =>
    validator.validate({
      path: {},
      query: queryParametersOf(context),
      headers: context.headers,
      body: context.request.body,
    }).body as Record<string, string>;
}

const requireJson: Koa.Middleware = async (context, next) => {
  if (requestBodyKind(context) !== 'json') context.throw(415);
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
  const loginBody = validatedBody('login');
  const refreshBody = validatedBody('refresh');

  router.post(
    '/api/auth/login',
    authorizeOperation('login'),
    noStore,
    requireJson,
    parseJson,
    async (context) => {
      const { email, password } = loginBody(context);
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
      const { refresh_token: refreshToken } = refreshBody(context);
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
