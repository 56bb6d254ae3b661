// Single-use refresh tokens, stored as hashes, in one family per login; replaying a used one revokes the family.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import {
  deleteExpiredRefreshTokensOf,
  insertNextRefreshToken,
  insertRefreshTokenFamily,
  lockRefreshToken,
  markRefreshTokenUsed,
  revokeRefreshTokenFamily,
} from '../db/refresh-tokens';
import { DomainError } from '../domain/errors';

export interface RefreshTokenStoreOptions {
  database: Knex;
  /** Lifetime of a login's refresh tokens; rotation keeps the family's original expiry. */
  ttlSeconds: number;
  /** Told when a rotated token comes back: a sign that it was stolen. */
  onReuse?: (event: { userId: string; familyId: string }) => void;
}

export interface RefreshTokenStore {
  /** Starts a new family (one per login) and returns its first token. */
  issue(userId: string): Promise<string>;
  /** Consumes `token` and returns the next one of its family, or throws UNAUTHENTICATED. */
  rotate(token: string): Promise<{ userId: string; refreshToken: string }>;
}

type Rotation =
  | { outcome: 'rotated'; userId: string; refreshToken: string }
  | { outcome: 'reused'; userId: string; familyId: string }
  | { outcome: 'invalid' };

// 256 random bits: a plain SHA-256 is enough to store it, unlike a password.
function newToken(): string {
  return `rt_${randomBytes(32).toString('base64url')}`;
}

function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export const invalidRefreshToken = () =>
  new DomainError('UNAUTHENTICATED', 'The refresh token is invalid or expired');

export function createRefreshTokenStore(options: RefreshTokenStoreOptions): RefreshTokenStore {
  const { database } = options;

  async function issue(userId: string): Promise<string> {
    const token = newToken();
    await insertRefreshTokenFamily(database, {
      userId,
      tokenHash: tokenHash(token),
      ttlSeconds: options.ttlSeconds,
    });
    await deleteExpiredRefreshTokensOf(database, userId);
    return token;
  }

  async function rotate(token: string): Promise<{ userId: string; refreshToken: string }> {
    const rotation = await database.transaction(async (transaction): Promise<Rotation> => {
      const row = await lockRefreshToken(transaction, tokenHash(token));
      if (row === undefined || row.revoked_at !== null) return { outcome: 'invalid' };
      if (row.used_at !== null) {
        // Committed even though the caller is refused: the thief and the owner both lose the family.
        await revokeRefreshTokenFamily(transaction, row.family_id);
        return { outcome: 'reused', userId: row.user_id, familyId: row.family_id };
      }
      if (row.expired) return { outcome: 'invalid' };
      await markRefreshTokenUsed(transaction, row.id);
      const refreshToken = newToken();
      await insertNextRefreshToken(transaction, {
        familyId: row.family_id,
        userId: row.user_id,
        tokenHash: tokenHash(refreshToken),
        expiresAt: row.expires_at,
      });
      return { outcome: 'rotated', userId: row.user_id, refreshToken };
    });
    if (rotation.outcome === 'reused') {
      options.onReuse?.({ userId: rotation.userId, familyId: rotation.familyId });
    }
    if (rotation.outcome !== 'rotated') throw invalidRefreshToken();
    return { userId: rotation.userId, refreshToken: rotation.refreshToken };
  }

  return { issue, rotate };
}
