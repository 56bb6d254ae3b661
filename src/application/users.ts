// User profiles, decrypted for the user themself or for staff; others see NOT_FOUND.
import type { Knex } from 'knex';
import { readUserProfile } from '../db/user-profiles';
import { notFound } from '../domain/errors';
import { isUuid, validateId } from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';
import type { UserApplication, UserView } from './interface';
import type { Actor } from '../domain/actor';
import { isStaff } from '../domain/roles';

/** The path segment that names the caller instead of a user id. */
export const currentUserAlias = 'me';

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
    const row = await readUserProfile(database, userId);
    if (row === undefined) throw notFound('User', userId);
    const email = cipher.decryptOptional(row.email);
    // The contract's User requires an email: an external account whose provider shared none has no profile.
    if (email === null) throw notFound('User', asksForSelf ? currentUserAlias : userId);
    const phone = cipher.decryptOptional(row.phone);
    return {
      id: row.id,
      email,
      // The provider shared an email but no name: the address is the name shown.
      displayName: cipher.decryptOptional(row.displayName) ?? email,
      ...(phone === null ? {} : { phone }),
      roles: row.roles,
      createdAt: row.createdAt.toISOString(),
    };
  }

  return { getUser };
}
