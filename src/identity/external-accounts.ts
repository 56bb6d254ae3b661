// Just-in-time local accounts for an external OIDC issuer's users: (issuer, subject) → users.id, cached.
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { createLinkedAccount, linkedUserId } from '../db/external-identities';
import type { Role } from '../domain/roles';
import type { FieldCipher } from '../security/field-encryption';
import type { AccessTokenClaims, LocalAccountDirectory } from '../security/token-verifier';

export interface ExternalAccountDirectoryOptions {
  database: Knex;
  cipher: FieldCipher;
  /** The external issuer; its subjects are only unique together with it. */
  issuer: string;
  /** Subjects whose local id is kept in memory (default 10,000); the least recently used leave first. */
  cacheSize?: number;
  /** How long a remembered link is trusted before it is read again (default 10 minutes). */
  cacheTtlMs?: number;
}

function claimText(claims: AccessTokenClaims, name: string): string | undefined {
  const value: unknown = claims[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The name to show, from the standard OIDC profile claims, when the provider shares one. */
function displayNameOf(claims: AccessTokenClaims): string | undefined {
  const fullName = [claimText(claims, 'given_name'), claimText(claims, 'family_name')]
    .filter((part) => part !== undefined)
    .join(' ');
  return (
    claimText(claims, 'name') ??
    (fullName === '' ? undefined : fullName) ??
    claimText(claims, 'preferred_username')
  );
}

/**
 * The first verified token of a subject creates its account (email and name encrypted when the token carries
 * them; no password and no email lookup, as such an account never signs in here) and the link, race-safe:
 * the account and `INSERT ... ON CONFLICT DO NOTHING` of the link share a transaction, so the request that
 * loses the race rolls its account back and reads the winner's link.
 */
export function createExternalAccountDirectory(
  options: ExternalAccountDirectoryOptions,
): LocalAccountDirectory {
  const { database, cipher, issuer } = options;
  const cacheSize = options.cacheSize ?? 10_000;
  const cacheTtlMs = options.cacheTtlMs ?? 10 * 60_000;
  // A link is only ever added, never changed, so lru-cache's own time-to-live is enough here.
  const cache = new LRUCache<string, string>({ max: cacheSize, ttl: cacheTtlMs, updateAgeOnGet: false });
  const lookups = new Map<string, Promise<string>>();

  function remembered(subject: string): string | undefined {
    return cache.get(subject);
  }

  function remember(subject: string, userId: string): void {
    cache.set(subject, userId);
  }

  async function createAccount(claims: AccessTokenClaims, roles: readonly Role[]): Promise<string> {
    const created = await createLinkedAccount(database, {
      issuer,
      subject: claims.sub,
      email: cipher.encryptOptional(claimText(claims, 'email') ?? null),
      displayName: cipher.encryptOptional(displayNameOf(claims) ?? null),
      // Informational only: the roles of every request come from its token.
      roles: roles.length === 0 ? ['customer'] : roles,
    });
    if (created !== undefined) return created;
    const winner = await linkedUserId(database, { issuer, subject: claims.sub });
    if (winner === undefined) throw new Error('the concurrent link of an external subject vanished');
    return winner;
  }

  async function lookUp(claims: AccessTokenClaims, roles: readonly Role[]): Promise<string> {
    const userId =
      (await linkedUserId(database, { issuer, subject: claims.sub })) ?? (await createAccount(claims, roles));
    remember(claims.sub, userId);
    return userId;
  }

  return {
    localUserIdFor(claims, roles) {
      const cached = remembered(claims.sub);
      if (cached !== undefined) return Promise.resolve(cached);
      // Concurrent first requests of one subject in this process share one lookup.
      let pending = lookups.get(claims.sub);
      if (pending === undefined) {
        pending = lookUp(claims, roles).finally(() => lookups.delete(claims.sub));
        lookups.set(claims.sub, pending);
      }
      return pending;
    },
  };
}
