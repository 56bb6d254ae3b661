// Single-use refresh tokens, stored as hashes, in one family per login; replaying a used one revokes the family.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
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

interface RefreshTokenRow {
  id: string;
  family_id: string;
  user_id: string;
  used_at: Date | null;
  revoked_at: Date | null;
  expires_at: Date;
  expired: boolean;
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
    await database('identity_refresh_tokens').insert({
      family_id: database.raw('gen_random_uuid()'),
      user_id: userId,
      token_hash: tokenHash(token),
      expires_at: database.raw('now() + make_interval(secs => ?)', [options.ttlSeconds]),
    });
    // Housekeeping on the user's own rows only, so a login never scans the whole table.
    await database('identity_refresh_tokens')
      .where({ user_id: userId })
      .andWhere('expires_at', '<', database.fn.now())
      .delete();
    return token;
  }

  async function rotate(token: string): Promise<{ userId: string; refreshToken: string }> {
    const rotation = await database.transaction(async (transaction): Promise<Rotation> => {
      const row = await transaction('identity_refresh_tokens')
        .where({ token_hash: tokenHash(token) })
        .forUpdate()
        .first<RefreshTokenRow | undefined>(
          'id',
          'family_id',
          'user_id',
          'used_at',
          'revoked_at',
          'expires_at',
          transaction.raw('expires_at <= now() AS expired'),
        );
      if (row === undefined || row.revoked_at !== null) return { outcome: 'invalid' };
      if (row.used_at !== null) {
        // Committed even though the caller is refused: the thief and the owner both lose the family.
        await transaction('identity_refresh_tokens')
          .where({ family_id: row.family_id })
          .whereNull('revoked_at')
          .update({ revoked_at: transaction.fn.now() });
        return { outcome: 'reused', userId: row.user_id, familyId: row.family_id };
      }
      if (row.expired) return { outcome: 'invalid' };
      await transaction('identity_refresh_tokens')
        .where({ id: row.id })
        .update({ used_at: transaction.fn.now() });
      const refreshToken = newToken();
      await transaction('identity_refresh_tokens').insert({
        family_id: row.family_id,
        user_id: row.user_id,
        token_hash: tokenHash(refreshToken),
        expires_at: row.expires_at,
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
