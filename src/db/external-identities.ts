// The external_identities table: an external issuer's subject linked to the local account made for it.
import type { Knex } from 'knex';

/** The local user id linked to the issuer's subject, if any. */
export async function linkedUserId(
  database: Knex,
  identity: { issuer: string; subject: string },
): Promise<string | undefined> {
  const row: { user_id: string } | undefined = await database('external_identities')
    .where({ issuer: identity.issuer, subject: identity.subject })
    .first('user_id');
  return row?.user_id;
}

export interface LinkedAccount {
  issuer: string;
  subject: string;
  /** Encrypted by the caller, as is the display name. */
  email: string | null;
  displayName: string | null;
  roles: readonly string[];
}

/** Thrown inside the linking transaction when a concurrent first request linked the subject first. */
class LinkedConcurrently extends Error {
  override readonly name = 'LinkedConcurrently';
}

/**
 * Creates an account and links the subject to it in one transaction, race-safe: the link is
 * `INSERT ... ON CONFLICT DO NOTHING`, so the request that loses the race rolls its account back. Returns the new
 * account's id, or undefined when another request linked the subject first.
 */
export async function createLinkedAccount(
  database: Knex,
  account: LinkedAccount,
): Promise<string | undefined> {
  try {
    return await database.transaction(async (transaction) => {
      const [{ id }] = await transaction('users')
        .insert({ email: account.email, display_name: account.displayName, roles: [...account.roles] })
        .returning<{ id: string }[]>('id');
      const linked = await transaction('external_identities')
        .insert({ issuer: account.issuer, subject: account.subject, user_id: id })
        .onConflict(['issuer', 'subject'])
        .ignore()
        .returning<{ user_id: string }[]>('user_id');
      if (linked.length === 0) throw new LinkedConcurrently();
      return id;
    });
  } catch (error) {
    if (error instanceof LinkedConcurrently) return undefined;
    throw error;
  }
}
