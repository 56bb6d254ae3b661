// Signing in to the API's identity provider with openid-client: discovery, client credentials, code with PKCE, refresh.
import * as oidc from 'openid-client';
import { createTokenSource, type TokenSource } from './token-source.js';

export interface SignInOptions {
  /**
   * The issuer whose tokens the API accepts: the embedded provider's `IDP_ISSUER` (by default the API's own origin)
   * or the external `OIDC_ISSUER`. Its `/.well-known/openid-configuration` names every endpoint used here.
   */
  issuer: string | URL;
  clientId: string;
  /**
   * A service's secret (an `IDP_CLIENTS` entry of kind `service`), sent as HTTP Basic (`client_secret_basic`).
   * Absent for web and native apps: they are public clients and prove themselves with PKCE instead.
   */
  clientSecret?: string;
  /**
   * Development only: lets the issuer and its endpoints be plain `http` (the embedded stack of `npm start` on
   * loopback). Tokens and secrets would cross the network in clear, so never set it for a deployed issuer.
   */
  allowInsecureRequests?: boolean;
  /** Parameters added to every token request, for providers that want one (an `audience` or `resource`). */
  tokenParameters?: Record<string, string>;
}

/** A token endpoint's answer, with openid-client's helpers (`expiresIn()`, `claims()`). */
export type Tokens = oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;

/** An authorization request under way: the browser goes to `url`; `state` and `codeVerifier` wait for the callback. */
export interface PendingAuthorization {
  url: URL;
  /** Compared with the callback's `state`, so a callback this app did not ask for is refused. */
  state: string;
  /** The PKCE secret (RFC 7636) whose S256 challenge went in `url`; kept by the app, never put in a URL. */
  codeVerifier: string;
  redirectUri: string;
}

export interface TokenSourceTuning {
  /** How long before expiry a token is replaced, in seconds (default 60, at most half the token's lifetime). */
  refreshMarginSeconds?: number;
}

/** The scopes a person's app asks for to search, book, pay and cancel. */
export const bookingScopes = 'openid routes:read bookings:read bookings:write payments:write';

function issuedToken(tokens: oidc.TokenEndpointResponse) {
  return { accessToken: tokens.access_token, expiresInSeconds: tokens.expires_in };
}

/** One client of one issuer, discovered once; each flow below uses its endpoints. */
export class SignIn {
  private constructor(
    /** openid-client's configuration, for what this class does not cover (revocation, user info). */
    readonly configuration: oidc.Configuration,
    private readonly tokenParameters: Record<string, string>,
  ) {}

  /** Reads the issuer's discovery document and checks that it names the same issuer. */
  static async discover(options: SignInOptions): Promise<SignIn> {
    const clientAuthentication =
      options.clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(options.clientSecret);
    const configuration = await oidc.discovery(
      new URL(options.issuer),
      options.clientId,
      undefined,
      clientAuthentication,
      options.allowInsecureRequests === true ? { execute: [oidc.allowInsecureRequests] } : undefined,
    );
    return new SignIn(configuration, options.tokenParameters ?? {});
  }

  /** A service's tokens (client credentials grant): a new one is asked for before the held one expires. */
  clientCredentials(options: { scope?: string } & TokenSourceTuning = {}): TokenSource {
    const parameters = {
      ...this.tokenParameters,
      ...(options.scope === undefined ? {} : { scope: options.scope }),
    };
    return createTokenSource({
      refreshMarginSeconds: options.refreshMarginSeconds,
      fetchToken: async () => issuedToken(await oidc.clientCredentialsGrant(this.configuration, parameters)),
    });
  }

  /** Starts a person's sign-in (authorization code with PKCE, S256): where to send the browser, and what to keep. */
  async startAuthorization(options: {
    redirectUri: string;
    scope?: string;
    /** More authorization request parameters (`login_hint`, `prompt`, ...). */
    parameters?: Record<string, string>;
  }): Promise<PendingAuthorization> {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(this.configuration, {
      ...options.parameters,
      redirect_uri: options.redirectUri,
      scope: options.scope ?? bookingScopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
    });
    return { url, state, codeVerifier, redirectUri: options.redirectUri };
  }

  /**
   * Ends it: checks the callback URL (the redirect URI with `code` and `state`, or the provider's `error`) against
   * the pending authorization and exchanges the code for tokens.
   */
  async finishAuthorization(callbackUrl: string | URL, pending: PendingAuthorization): Promise<Tokens> {
    const callback = new URL(callbackUrl);
    // openid-client sends the callback without its query as redirect_uri; a stray URL fails here, not at the server.
    const redirectUri = new URL(callback);
    redirectUri.search = '';
    redirectUri.hash = '';
    if (redirectUri.href !== new URL(pending.redirectUri).href) {
      throw new Error(`the callback ${redirectUri.href} is not the redirect URI ${pending.redirectUri}`);
    }
    return oidc.authorizationCodeGrant(
      this.configuration,
      callback,
      { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state },
      this.tokenParameters,
    );
  }

  /** New tokens for a refresh token; the embedded provider rotates it, so keep the `refresh_token` this answers. */
  refresh(refreshToken: string): Promise<Tokens> {
    return oidc.refreshTokenGrant(this.configuration, refreshToken, this.tokenParameters);
  }

  /**
   * A person's tokens as a token source: the access token of `tokens` first, then ones refreshed with the latest
   * refresh token before each expires. `onRefresh` sees every new answer, to store the rotated refresh token.
   */
  tokenSource(
    tokens: Tokens,
    options: TokenSourceTuning & { onRefresh?: (tokens: Tokens) => void } = {},
  ): TokenSource {
    let refreshToken = tokens.refresh_token;
    return createTokenSource({
      initial: issuedToken(tokens),
      refreshMarginSeconds: options.refreshMarginSeconds,
      fetchToken: async () => {
        if (refreshToken === undefined) {
          throw new Error('the access token expired and no refresh token was issued: sign in again');
        }
        const refreshed = await this.refresh(refreshToken);
        refreshToken = refreshed.refresh_token ?? refreshToken;
        options.onRefresh?.(refreshed);
        return issuedToken(refreshed);
      },
    });
  }
}
