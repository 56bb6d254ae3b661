// Remembers what verifying an access token gave (its claims and caller) until the token expires, in a bounded LRU.

export interface VerifiedTokenCacheOptions {
  /** Tokens remembered at most; the least recently used leave first. */
  maximumEntries: number;
  /**
   * How long a verification is trusted at most, whatever the token's own expiry: no longer than the key set is
   * cached, so a signing key taken out of the issuer's key set stops its tokens as soon as a fresh verification
   * would.
   */
  maximumAgeMs: number;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
}

interface Entry<Value> {
  /** The whole token: an entry answers only the very token it was made for. */
  token: string;
  value: Value;
  /** Epoch milliseconds after which the entry is never answered. */
  expiresAt: number;
}

/** How many of a token's last characters find its entry; a signature's last 24 base64url characters are random. */
const lookupKeyLength = 24;

function lookupKeyOf(token: string): string {
  return token.slice(-lookupKeyLength);
}

/**
 * An entry answers one token only: two tokens with the same claims are never answered by each other. Only
 * successful verifications are ever remembered (the verifier never calls `remember` for a failure), so a bad token
 * is checked in full every time.
 *
 * Entries are found by the token's last characters (the end of its signature) and then compared whole: a Map
 * hashes its key on every lookup, and a token of a thousand characters arrives as a new string with each request.
 * A token that shares those characters with a remembered one but differs anywhere else finds no entry.
 */
export class VerifiedTokenCache<Value> {
  // A Map iterates in insertion order: re-inserting on a hit makes its first key the least recently used.
  private readonly entries = new Map<string, Entry<Value>>();
  private readonly now: () => number;

  constructor(private readonly options: VerifiedTokenCacheOptions) {
    if (!Number.isInteger(options.maximumEntries) || options.maximumEntries < 0) {
      throw new RangeError('maximumEntries must be a whole number from 0');
    }
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The remembered value, or undefined when the token is unknown or its entry has expired. */
  get(token: string): Value | undefined {
    const key = lookupKeyOf(token);
    const entry = this.entries.get(key);
    if (entry === undefined || entry.token !== token) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Remembers a verified token until `tokenExpiresAt` (epoch milliseconds), or `maximumAgeMs` if sooner. */
  remember(token: string, value: Value, tokenExpiresAt: number): void {
    if (this.options.maximumEntries === 0) return;
    const now = this.now();
    const expiresAt = Math.min(tokenExpiresAt, now + this.options.maximumAgeMs);
    if (!(expiresAt > now)) return;
    const key = lookupKeyOf(token);
    this.entries.delete(key);
    this.entries.set(key, { token, value, expiresAt });
    while (this.entries.size > this.options.maximumEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }
}
