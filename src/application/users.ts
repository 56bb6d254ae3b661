// User profiles from PostgreSQL, decrypted for the user themself or for staff; others see NOT_FOUND.
import type { Knex } from 'knex';
import { notFound } from '../domain/errors';
import { isUuid, validateId } from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';
import type { UserApplication, UserView } from './interface';
import type { Actor } from '../domain/actor';
import { isStaff, type Role } from '../domain/roles';

/** The path segment that names the caller instead of a user id. */
export const currentUserAlias = 'me';

interface UserRow {
  id: string;
  /** Null for an external issuer's account whose tokens carried no email or name claim. */
  email: string | null;
  display_name: string | null;
  phone: string | null;
  roles: Role[];
  created_at: Date;
}

export function createUserApplication(dependencies: {
  database: Knex;
  cipher: FieldCipher;
}): UserApplication {
  const { database, cipher } = dependencies;

  async function getUser(actor: Actor, userIdInput: string): Promise<UserView> {
    const asksForSelf = userIdInput === currentUserAlias;
    // Verified tokens always name a local account; an actor made up elsewhere (a test double) may not.
    if (asksForSelf && !isUuid(actor.userId)) throw notFound('User', currentUserAlias);
    const userId = validateId(asksForSelf ? actor.userId : userIdInput, 'user_id');
    // Another customer's profile answers exactly like a missing one, so ids leak nothing.
    if (userId !== actor.userId.toLowerCase() && !isStaff(actor)) throw notFound('User', userId);
    const row: UserRow | undefined = await database('users')
      .where('id', userId)
      .first('id', 'email', 'display_name', 'phone', 'roles', 'created_at');
    if (row === undefined) throw notFound('User', userId);
    const email = cipher.decryptOptional(row.email);
    // The contract's User requires an email: an external account whose provider shared none has no profile.
    if (email === null) throw notFound('User', asksForSelf ? currentUserAlias : userId);
    const phone = cipher.decryptOptional(row.phone);
    return {
      id: row.id,
      email,
      // The provider shared an email but no name: the address is the name shown.
      displayName: cipher.decryptOptional(row.display_name) ?? email,
      ...(phone === null ? {} : { phone }),
      roles: row.roles,
      createdAt: row.created_at.toISOString(),
    };
  }

  return { getUser };
}
