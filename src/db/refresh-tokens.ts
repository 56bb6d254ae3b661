// The identity_refresh_tokens table: refresh tokens by hash, in one family per login, each used at most once.
import type { Knex } from 'knex';

export interface RefreshTokenRow {
  id: string;
  family_id: string;
  user_id: string;
  used_at: Date | null;
  revoked_at: Date | null;
  expires_at: Date;
  /** Whether expires_at had passed by the database's clock when the row was read. */
  expired: boolean;
}

/** Stores the first token of a new family, expiring `ttlSeconds` from now. */
export async function insertRefreshTokenFamily(
  database: Knex,
  token: { userId: string; tokenHash: string; ttlSeconds: number },
): Promise<void> {
  await database('identity_refresh_tokens').insert({
    family_id: database.raw('gen_random_uuid()'),
    user_id: token.userId,
    token_hash: token.tokenHash,
    expires_at: database.raw('now() + make_interval(secs => ?)', [token.ttlSeconds]),
  });
}

/** Deletes the user's expired tokens: the user's own rows only, so a login never scans the whole table. */
export async function deleteExpiredRefreshTokensOf(database: Knex, userId: string): Promise<void> {
  await database('identity_refresh_tokens')
    .where({ user_id: userId })
    .andWhere('expires_at', '<', database.fn.now())
    .delete();
}

/** The token with this hash, locked until the transaction ends. */
export async function lockRefreshToken(
  transaction: Knex.Transaction,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  return transaction('identity_refresh_tokens')
    .where({ token_hash: tokenHash })
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
}

/** Revokes every token of the family not revoked yet. */
export async function revokeRefreshTokenFamily(
  transaction: Knex.Transaction,
  familyId: string,
): Promise<void> {
  await transaction('identity_refresh_tokens')
    .where({ family_id: familyId })
    .whereNull('revoked_at')
    .update({ revoked_at: transaction.fn.now() });
}

export async function markRefreshTokenUsed(transaction: Knex.Transaction, id: string): Promise<void> {
  await transaction('identity_refresh_tokens').where({ id }).update({ used_at: transaction.fn.now() });
}

/** Stores the next token of a family, keeping the family's expiry. */
export async function insertNextRefreshToken(
  transaction: Knex.Transaction,
  token: { familyId: string; userId: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await transaction('identity_refresh_tokens').insert({
    family_id: token.familyId,
    user_id: token.userId,
    token_hash: token.tokenHash,
    expires_at: token.expiresAt,
  });
}
