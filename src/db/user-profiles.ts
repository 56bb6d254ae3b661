// A user's profile as the users table keeps it: personal fields still encrypted, for whoever may read them to open.
import type { Knex } from 'knex';
import type { Role } from '../domain/roles';

export interface StoredUserProfile {
  id: string;
  /** `enc:` envelopes; null for an external issuer's account whose tokens carried no email or name claim. */
  email: string | null;
  displayName: string | null;
  phone: string | null;
  roles: Role[];
  createdAt: Date;
}

interface UserRow {
  id: string;
  email: string | null;
  display_name: string | null;
  phone: string | null;
  roles: Role[];
  created_at: Date;
}

/** The account's profile; undefined when no account has this id. */
export async function readUserProfile(
  database: Knex,
  userId: string,
): Promise<StoredUserProfile | undefined> {
  const row: UserRow | undefined = await database('users')
    .where('id', userId)
    .first('id', 'email', 'display_name', 'phone', 'roles', 'created_at');
  if (row === undefined) return undefined;
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    phone: row.phone,
    roles: row.roles,
    createdAt: row.created_at,
  };
}
