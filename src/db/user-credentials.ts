// What signing in reads from the users table: an account's password hash by email lookup, and its roles.
import type { Knex } from 'knex';

export interface SignInAccount {
  id: string;
  password_hash: string;
  roles: string[];
}

/** The account whose email blind index is `emailLookup`, with what checking its password needs. */
export async function signInAccountOf(
  database: Knex,
  emailLookup: string,
): Promise<SignInAccount | undefined> {
  return database('users')
    .where({ email_lookup: emailLookup })
    .first<SignInAccount | undefined>('id', 'password_hash', 'roles');
}

/** The roles stored for a user; undefined when there is no such user. The id must be a UUID. */
export async function storedRolesOf(database: Knex, userId: string): Promise<string[] | undefined> {
  const row = await database('users').where({ id: userId }).first<{ roles: string[] } | undefined>('roles');
  return row?.roles;
}
