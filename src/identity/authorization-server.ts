// The embedded OAuth 2.0 authorization server and OpenID Provider: oidc-provider with the project's users, keys and clients.
import type { IncomingMessage } from 'node:http';
import type { JWK } from 'jose';
import type { Knex } from 'knex';
import {
  errors,
  interactionPolicy,
  Provider,
  type ClientMetadata,
  type Configuration,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import { ConfigError, docsClientId, type Config, type OAuthClientRegistration } from '../config';
import type { Role } from '../domain/roles';
import type { Logger } from '../logger';
import type { FieldCipher } from '../security/field-encryption';
import { contractScopes, scopesForRoles } from '../security/policy';
import type { IdentityProvider } from './identity-provider';
import { createOAuthArtifactStore } from './oauth-artifact-store';
import { errorPage, pageContentSecurityPolicy } from './sign-in-pages';
import { signingAlgorithm } from './signing-keys';

/** Where the authorization server's endpoints are mounted in the REST app. */
export const authorizationServerPath = '/oidc';

/** Where Swagger UI's OAuth 2.0 redirect page is served, relative to the issuer. */
export const docsRedirectPath = '/docs/oauth2-redirect.html';

/** Where the REST app publishes the signing keys (the JWKS the token verifier reads too). */
export const publishedKeySetPath = '/.well-known/jwks.json';

/** The resource indicator (RFC 8707) of this API; its access tokens carry the configured audience instead. */
export const apiResourceIndicator = 'urn:bus-booking:api';

export const interactionPath = (uid: string) => `${authorizationServerPath}/interaction/${uid}`;

export interface AuthorizationServerOptions {
  database: Knex;
  cipher: FieldCipher;
  identityProvider: Pick<IdentityProvider, 'rolesOf' | 'signingKeys' | 'jsonWebKeySet'>;
  issuer: string;
  audience: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  docsClient: boolean;
  clients: readonly OAuthClientRegistration[];
  /** Trust X-Forwarded-Proto and -Host for the URLs the server writes (behind a proxy only). */
  trustProxy: boolean;
  logger?: Logger;
}

export interface AuthorizationServer {
  /** The oidc-provider instance signing with the active key; a new one is made once the key rotates. */
  provider(): Promise<Provider>;
  /** Origins and schemes a sign-in form of this client may be redirected to (CSP `form-action`). */
  redirectSources(clientId: string): string[];
  /**
   * Makes the request say where the provider is, before the provider reads it: oidc-provider writes its endpoint
   * URLs from the request's host and scheme, so without a trusted proxy they are the issuer's, never the caller's
   * `Host`, which a shared cache would otherwise hand to every client.
   */
  pinOrigin(request: IncomingMessage): void;
}

function clientMetadata(registration: OAuthClientRegistration): ClientMetadata {
  if (registration.kind === 'service') {
    return {
      client_id: registration.clientId,
      client_secret: registration.clientSecret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: registration.scopes.join(' '),
    };
  }
  return {
    client_id: registration.clientId,
    application_type: registration.kind,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: registration.redirectUris,
    token_endpoint_auth_method: 'none',
  };
}

function registeredClients(options: AuthorizationServerOptions): OAuthClientRegistration[] {
  const docs: OAuthClientRegistration[] = options.docsClient
    ? [
        {
          kind: 'web',
          clientId: docsClientId,
          redirectUris: [`${options.issuer.replace(/\/+$/, '')}${docsRedirectPath}`],
        },
      ]
    : [];
  return [...docs, ...options.clients];
}

function redirectSource(uri: string): string {
  const url = new URL(uri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

/** Answers JSON (RFC 6749 §5.2) unless the caller is a browser asking for a page. */
function renderError(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }): void {
  if (ctx.accepts('json', 'html') === 'html') {
    ctx.set('Content-Security-Policy', pageContentSecurityPolicy());
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.type = 'html';
    ctx.body = errorPage(out);
    return;
  }
  ctx.type = 'json';
  ctx.body = {
    error: out.error,
    ...(out.error_description ? { error_description: out.error_description } : {}),
  };
}

export function createAuthorizationServer(options: AuthorizationServerOptions): AuthorizationServer {
  const { identityProvider } = options;
  const registrations = registeredClients(options);
  const supportedScopes = contractScopes();
  for (const registration of registrations) {
    if (registration.kind !== 'service') continue;
    const unknown = registration.scopes.filter((scope) => !supportedScopes.includes(scope));
    if (unknown.length > 0) {
      throw new ConfigError(
        'IDP_CLIENTS',
        `client "${registration.clientId}" lists scopes no contract names: ${unknown.join(', ')}`,
      );
    }
  }
  const issuerUrl = new URL(options.issuer);
  const byClientId = new Map(registrations.map((registration) => [registration.clientId, registration]));
  const redirectSources = (clientId: string): string[] => {
    const registration = byClientId.get(clientId);
    if (registration === undefined || registration.kind === 'service') return [];
    return [...new Set(registration.redirectUris.map(redirectSource))];
  };
  const serviceRoles = (clientId: string): Role[] => {
    const registration = byClientId.get(clientId);
    return registration?.kind === 'service' ? registration.roles : [];
  };
  // Signed cookies must verify on every replica and survive a rebuild; derived from the blind-index key, no new secret.
  const cookieKeys = [options.cipher.blindIndex('oauth-authorization-server:cookies')];
  const adapter = createOAuthArtifactStore({ database: options.database, cipher: options.cipher });

  // Consent is implied: every client is first-party, and what a person may grant is decided by their roles.
  const policy = interactionPolicy.base();
  policy.remove('consent');

  function configuration(privateJwk: JWK): Configuration {
    return {
      adapter,
      clients: registrations.map(clientMetadata),
      jwks: { keys: [privateJwk] },
      cookies: { keys: cookieKeys },
      scopes: ['openid', ...supportedScopes],
      claims: { openid: ['sub'] },
      responseTypes: ['code'],
      routes: { authorization: '/authorize', revocation: '/revoke' },
      pkce: { required: () => true },
      // What the registered clients use; discovery advertises exactly these.
      clientAuthMethods: ['client_secret_basic', 'none'],
      features: {
        devInteractions: { enabled: false },
        // A DPoP-bound token is no bearer token, and the API accepts only those.
        dPoP: { enabled: false },
        clientCredentials: { enabled: true },
        revocation: {
          enabled: true,
          // A client revokes only its own tokens; another's is ignored, as RFC 7009 lets a server answer 200.
          allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
        },
        // Each would advertise an endpoint with no client here to use it; discovery lists only what works.
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        pushedAuthorizationRequests: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => apiResourceIndicator,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resourceIndicator, client) => {
            if (resourceIndicator !== apiResourceIndicator) throw new errors.InvalidTarget();
            const registration = byClientId.get(client.clientId);
            return {
              audience: options.audience,
              scope: (registration?.kind === 'service' ? registration.scopes : supportedScopes).join(' '),
              accessTokenFormat: 'jwt',
              accessTokenTTL: options.accessTokenTtlSeconds,
              jwt: { sign: { alg: signingAlgorithm } },
            };
          },
        },
      },
      interactions: {
        policy,
        url: (_ctx, interaction) => interactionPath(interaction.uid),
      },
      async findAccount(_ctx, sub) {
        const roles = await identityProvider.rolesOf(sub);
        if (roles === undefined) return undefined;
        return { accountId: sub, claims: () => ({ sub }) };
      },
      async loadExistingGrant(ctx) {
        const accountId = ctx.oidc.session?.accountId;
        const client = ctx.oidc.client;
        if (accountId === undefined || client === undefined) return undefined;
        const roles = (await identityProvider.rolesOf(accountId)) ?? [];
        // A fresh grant per sign-in, so a change of roles takes effect at the next one.
        const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId });
        grant.addOIDCScope('openid');
        grant.addResourceScope(apiResourceIndicator, scopesForRoles(roles).join(' '));
        await grant.save();
        return grant;
      },
      async extraTokenClaims(_ctx, token) {
        if (token.kind === 'ClientCredentials') return { roles: serviceRoles(token.clientId ?? '') };
        if (token.kind !== 'AccessToken' || token.accountId === undefined) return undefined;
        return { roles: (await identityProvider.rolesOf(token.accountId)) ?? [] };
      },
      // Refresh tokens for every app allowed the grant, without OpenID's offline_access ceremony (first-party apps).
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      expiresWithSession: () => false,
      rotateRefreshToken: true,
      ttl: {
        AccessToken: options.accessTokenTtlSeconds,
        ClientCredentials: options.accessTokenTtlSeconds,
        AuthorizationCode: 60,
        IdToken: options.accessTokenTtlSeconds,
        Interaction: 3600,
        Grant: options.refreshTokenTtlSeconds,
        Session: options.refreshTokenTtlSeconds,
        // A rotated token keeps its family's expiry, as the password sign-in's refresh tokens do.
        RefreshToken: (ctx) =>
          ctx.oidc.entities.RotatedRefreshToken?.remainingTTL ?? options.refreshTokenTtlSeconds,
      },
      clientBasedCORS: (_ctx, origin, client) => redirectSources(client.clientId).includes(origin),
      renderError,
    };
  }

  let current: { kid: string; provider: Provider } | undefined;

  function build(privateJwk: JWK): Provider {
    const provider = new Provider(options.issuer, configuration(privateJwk));
    // Always: pinOrigin writes the forwarded headers itself unless a trusted proxy does.
    provider.proxy = true;
    // One key set for every reader: the project's, which still holds retired keys whose tokens have not expired.
    provider.use(async (ctx: KoaContextWithOIDC, next) => {
      await next();
      if (ctx.status !== 200) return;
      const route = (ctx.oidc as KoaContextWithOIDC['oidc'] | undefined)?.route;
      if (route === 'discovery') {
        (ctx.body as Record<string, unknown>).jwks_uri = new URL(publishedKeySetPath, ctx.href).href;
      } else if (route === 'jwks') {
        ctx.body = await identityProvider.jsonWebKeySet();
      }
    });
    provider.on('server_error', (_ctx, error) =>
      options.logger?.error({ err: error }, 'OAuth authorization server error'),
    );
    return provider;
  }

  return {
    async provider() {
      // Cached by the key store for a minute, so a rotation reaches every replica within that.
      const key = await identityProvider.signingKeys.activeKey();
      // State lives in PostgreSQL, so the instance built for the previous key can simply be dropped.
      if (current?.kid !== key.kid) current = { kid: key.kid, provider: build(key.privateJwk) };
      return current.provider;
    },
    redirectSources,
    pinOrigin(request) {
      if (options.trustProxy) return;
      request.headers['x-forwarded-host'] = issuerUrl.host;
      request.headers['x-forwarded-proto'] = issuerUrl.protocol.slice(0, -1);
      delete request.headers['x-forwarded-for'];
    },
  };
}

/** The authorization server's options from configuration, or undefined when an external issuer is configured. */
export function authorizationServerOptionsFromConfig(
  config: Pick<Config, 'auth' | 'http'>,
  dependencies: Pick<AuthorizationServerOptions, 'database' | 'cipher' | 'identityProvider' | 'logger'>,
): AuthorizationServerOptions | undefined {
  const embedded = config.auth.embedded;
  if (embedded === null) return undefined;
  return {
    ...dependencies,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
    accessTokenTtlSeconds: embedded.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: embedded.refreshTokenTtlSeconds,
    docsClient: embedded.docsClient,
    clients: embedded.clients,
    trustProxy: config.http.trustProxy,
  };
}
