// Bearer tokens for the client: fetched when first needed and replaced shortly before they expire.

/** An access token as a token endpoint issues it (RFC 6749 §5.1). */
export interface IssuedToken {
  accessToken: string;
  /** Seconds the token lives from its issue; absent when the server did not say (then kept until invalidated). */
  expiresInSeconds?: number;
}

/** Where the client gets the bearer token of each request. */
export interface TokenSource {
  /** A token with time left on it: the one held, or a new one once the held one is within its refresh margin. */
  accessToken(): Promise<string>;
  /** Drops the token held, so the next request fetches a new one (for example after the API answered 401). */
  invalidate(): void;
}

export interface TokenSourceOptions {
  /** Fetches a token: the first one (unless `initial` is given) and each replacement. */
  fetchToken: () => Promise<IssuedToken>;
  /** A token already issued (the one an authorization code was exchanged for), taken as issued now. */
  initial?: IssuedToken;
  /** How long before expiry a token is replaced, in seconds; never more than half its lifetime. Default 60. */
  refreshMarginSeconds?: number;
  /** The clock, in milliseconds since the epoch; tests pass their own. */
  now?: () => number;
}

interface HeldToken {
  token: string;
  refreshAt: number;
  expiresAt: number;
}

export const defaultRefreshMarginSeconds = 60;

/**
 * A token source over any way of getting tokens. Concurrent requests share one fetch; a replacement that fails while
 * the held token is still valid leaves that token in use, and the next request tries again.
 */
export function createTokenSource(options: TokenSourceOptions): TokenSource {
  const marginMs = (options.refreshMarginSeconds ?? defaultRefreshMarginSeconds) * 1000;
  if (!(marginMs >= 0)) throw new RangeError('refreshMarginSeconds must be zero or more');
  const now = options.now ?? Date.now;
  let held: HeldToken | undefined;
  let inFlight: Promise<string> | undefined;

  function hold(issued: IssuedToken, issuedAt: number): string {
    if (typeof issued.accessToken !== 'string' || issued.accessToken === '') {
      throw new TypeError('the token source was given no access token');
    }
    const lifetimeMs =
      issued.expiresInSeconds === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(0, issued.expiresInSeconds) * 1000;
    held = {
      token: issued.accessToken,
      expiresAt: issuedAt + lifetimeMs,
      refreshAt: issuedAt + lifetimeMs - Math.min(marginMs, lifetimeMs / 2),
    };
    return issued.accessToken;
  }

  function fetchNew(): Promise<string> {
    // The time before the request, so a slow token endpoint makes the token look older, never younger.
    const requestedAt = now();
    inFlight ??= options
      .fetchToken()
      .then((issued) => hold(issued, requestedAt))
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  }

  if (options.initial !== undefined) hold(options.initial, now());

  return {
    async accessToken() {
      const current = held;
      if (current === undefined || now() >= current.expiresAt) return fetchNew();
      if (now() < current.refreshAt) return current.token;
      try {
        return await fetchNew();
      } catch (error) {
        if (now() < current.expiresAt) return current.token;
        throw error;
      }
    },
    invalidate() {
      held = undefined;
    },
  };
}
