// Remembers what verifying an access token gave (its claims and caller) until the token expires, in a bounded LRU.
import { LRUCache } from 'lru-cache';

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
  /**
   * Epoch milliseconds from which the entry is never answered: checked here rather than by the LRU's own TTL,
   * which still answers at the very millisecond a token's `exp` makes it invalid.
   */
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
 * Entries are found by the token's last characters (the end of its signature) and then compared whole: a map
 * hashes its key on every lookup, and a token of a thousand characters arrives as a new string with each request.
 * A token that shares those characters with a remembered one but differs anywhere else finds no entry.
 */
export class VerifiedTokenCache<Value> {
  /** Absent with `maximumEntries` 0: nothing is remembered. */
  private readonly entries: LRUCache<string, Entry<Value>> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: VerifiedTokenCacheOptions) {
    if (!Number.isInteger(options.maximumEntries) || options.maximumEntries < 0) {
      throw new RangeError('maximumEntries must be a whole number from 0');
    }
    this.entries = options.maximumEntries > 0 ? new LRUCache({ max: options.maximumEntries }) : undefined;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  /** The remembered value, or undefined when the token is unknown or its entry has expired. */
  get(token: string): Value | undefined {
    const key = lookupKeyOf(token);
    const entry = this.entries?.get(key);
    if (entry === undefined || entry.token !== token) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries?.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Remembers a verified token until `tokenExpiresAt` (epoch milliseconds), or `maximumAgeMs` if sooner. */
  remember(token: string, value: Value, tokenExpiresAt: number): void {
    if (this.entries === undefined) return;
    const now = this.now();
    const expiresAt = Math.min(tokenExpiresAt, now + this.options.maximumAgeMs);
    if (!(expiresAt > now)) return;
    this.entries.set(lookupKeyOf(token), { token, value, expiresAt });
  }
}
