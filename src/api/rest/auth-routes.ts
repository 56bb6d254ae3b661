// REST routes of the embedded identity provider: password sign-in, the OAuth authorization server, discovery and keys.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type Koa from 'koa';
import { errors, type Provider } from 'oidc-provider';
import { openApiOperationsById } from '../../contracts/openapi-document';
import { DomainError } from '../../domain/errors';
import {
  authorizationServerPath,
  interactionPath,
  type AuthorizationServer,
} from '../../identity/authorization-server';
import type { IdentityProvider } from '../../identity/identity-provider';
import { errorPage, pageContentSecurityPolicy, signInPage } from '../../identity/sign-in-pages';
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

/**
 * The docs page's opener policy on every response of a sign-in, redirects included: a browser re-checks it at each
 * one, and a popup whose policy changed on the way loses its opener, the page waiting for the sign-in's result.
 */
const sameOriginOpener: Koa.Middleware = async (context, next) => {
  context.set('Cross-Origin-Opener-Policy', 'same-origin');
  await next();
};

type ProviderHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;
const providerHandlers = new WeakMap<Provider, ProviderHandler>();

/**
 * Hands the request to oidc-provider (a Koa app of its own) as if it were mounted at `authorizationServerPath`:
 * it reads the mount path from `originalUrl`, and writes its answer itself.
 */
async function delegateToProvider(
  context: Koa.Context,
  authorizationServer: AuthorizationServer,
  innerPath: string,
): Promise<void> {
  const provider = await authorizationServer.provider();
  let handler = providerHandlers.get(provider);
  if (handler === undefined) {
    handler = provider.callback();
    providerHandlers.set(provider, handler);
  }
  const query = context.querystring === '' ? '' : `?${context.querystring}`;
  const request = context.req as IncomingMessage & { originalUrl?: string };
  authorizationServer.pinOrigin(request);
  request.originalUrl = `${authorizationServerPath}${innerPath}${query}`;
  request.url = `${innerPath}${query}`;
  context.respond = false;
  await handler(request, context.res);
}

/** The sign-in pages' headers: their own CSP (see pageContentSecurityPolicy), never cached. */
function pageHeaders(context: Koa.Context, formTargets: readonly string[]): void {
  context.set('Content-Security-Policy', pageContentSecurityPolicy(formTargets));
  context.set('Cache-Control', 'no-store');
  context.type = 'html';
}

/** RFC 6749 §5.2's error object for API callers, the same as a page for a person's browser. */
function interactionError(
  context: Koa.Context,
  status: number,
  error: { error: string; error_description: string },
): void {
  context.status = status;
  if (context.accepts('json', 'html') === 'html') {
    pageHeaders(context, []);
    context.body = errorPage(error);
  } else {
    context.set('Cache-Control', 'no-store');
    context.body = error;
  }
}

const expiredInteraction = {
  error: 'invalid_request',
  error_description: 'This sign-in has expired or was already completed; start again from the application',
};

/** The sign-in interaction: a plain form for email and password, then back to the authorization endpoint. */
function interactionRouter(server: AuthorizationServer, identityProvider: IdentityProvider): Router {
  const router = new Router();
  router.use(sameOriginOpener);
  const parseForm = bodyParser({ enableTypes: ['form'], formLimit: credentialBodyLimitBytes });

  async function interaction(context: Koa.Context, uid: string | undefined) {
    const provider = await server.provider();
    try {
      const details = await provider.interactionDetails(context.req, context.res);
      if (details.uid !== uid) return undefined;
      return { provider, details };
    } catch (error) {
      if (error instanceof errors.SessionNotFound) return undefined;
      throw error;
    }
  }

  function render(
    context: Koa.Context,
    uid: string,
    clientId: string,
    form: { email?: string; error?: string } = {},
  ) {
    pageHeaders(context, server.redirectSources(clientId));
    context.body = signInPage({
      loginAction: `${interactionPath(uid)}/login`,
      abortAction: `${interactionPath(uid)}/abort`,
      clientName: clientId,
      ...form,
    });
  }

  router.get(`${authorizationServerPath}/interaction/:uid`, async (context) => {
    const found = await interaction(context, context.params.uid);
    if (found === undefined) return interactionError(context, 400, expiredInteraction);
    render(context, found.details.uid, String(found.details.params.client_id));
  });

  router.post(`${authorizationServerPath}/interaction/:uid/login`, parseForm, async (context) => {
    const found = await interaction(context, context.params.uid);
    if (found === undefined) return interactionError(context, 400, expiredInteraction);
    const { provider, details } = found;
    const clientId = String(details.params.client_id);
    const body = (context.request.body ?? {}) as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email.trim() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    if (email === '' || password === '') {
      context.status = 400;
      return render(context, details.uid, clientId, { email, error: 'Enter your email and your password.' });
    }
    let userId: string;
    try {
      userId = (await identityProvider.authenticate({ email, password }, context.ip)).id;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.code === 'RATE_LIMITED') {
        const retryAfter = Number(error.details.retryAfterSeconds ?? 60);
        context.status = 429;
        context.set('Retry-After', String(retryAfter));
        return render(context, details.uid, clientId, {
          email,
          error: `Too many failed attempts. Try again in ${retryAfter} seconds.`,
        });
      }
      if (error.code !== 'UNAUTHENTICATED') throw error;
      context.status = 401;
      return render(context, details.uid, clientId, { email, error: 'The email or password is wrong.' });
    }
    const resume = await provider.interactionResult(
      context.req,
      context.res,
      { login: { accountId: userId } },
      { mergeWithLastSubmission: false },
    );
    context.status = 303;
    context.redirect(resume);
  });

  router.post(`${authorizationServerPath}/interaction/:uid/abort`, parseForm, async (context) => {
    const found = await interaction(context, context.params.uid);
    if (found === undefined) return interactionError(context, 400, expiredInteraction);
    const resume = await found.provider.interactionResult(
      context.req,
      context.res,
      { error: 'access_denied', error_description: 'The person cancelled signing in' },
      { mergeWithLastSubmission: false },
    );
    context.status = 303;
    context.redirect(resume);
  });

  return router;
}

/** Mount only when the embedded provider is on (no external OIDC_ISSUER). */
export function identityProviderRouter(
  identityProvider: IdentityProvider,
  authorizationServer: AuthorizationServer,
): Router {
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

  router.get(
    '/.well-known/openid-configuration',
    authorizeOperation('getOpenIdConfiguration'),
    async (context) => {
      context.set('Cache-Control', 'public, max-age=300');
      await delegateToProvider(context, authorizationServer, '/.well-known/openid-configuration');
    },
  );

  router.get('/.well-known/jwks.json', authorizeOperation('getJsonWebKeySet'), async (context) => {
    // Short, so verifiers that honour caching still see a new key soon after a rotation.
    context.set('Cache-Control', 'public, max-age=60');
    context.body = await identityProvider.jsonWebKeySet();
  });

  const interactions = interactionRouter(authorizationServer, identityProvider);
  router.use(interactions.routes());
  // Everything else under the mount path is oidc-provider's: authorize, token, revoke, jwks.
  router.all(new RegExp(`^${authorizationServerPath}(/.*)?$`), sameOriginOpener, async (context) => {
    await delegateToProvider(
      context,
      authorizationServer,
      context.path.slice(authorizationServerPath.length) || '/',
    );
  });

  return router;
}
