// Accounts of the tests' own: customers as Actors, users with profiles, and users who can sign in with a password.
import { randomBytes, randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import type { Knex } from 'knex';
import { emailLookup } from '../../src/db/user-email';
import type { Actor } from '../../src/domain/actor';
import type { Role } from '../../src/domain/roles';
import type { FieldCipher } from '../../src/security/field-encryption';
import { scopesForRoles } from '../../src/security/policy';

export interface TestUser {
  id: string;
  email: string;
  displayName: string;
  phone: string | null;
  roles: Role[];
}

export interface LoginUser extends TestUser {
  password: string;
}

/** A user account and the Actor a verified token for it would give. */
export async function createCustomer(
  database: Knex,
  cipher: FieldCipher,
  roles: Role[] = ['customer'],
): Promise<Actor> {
  const user = await insertUser(database, cipher, { roles, phone: null, name: 'Saga Tester' });
  return { userId: user.id, roles, scopes: ['bookings:read', 'bookings:write', 'payments:write'] };
}

/** A user with a profile (an email no other test uses, a name, a phone) and no password. */
export async function insertUser(
  database: Knex,
  cipher: FieldCipher,
  options: { roles: Role[]; phone?: string | null; name?: string },
): Promise<TestUser> {
  const id = randomUUID();
  const email = `user-${id}@example.com`;
  const displayName = options.name ?? `Tester ${id.slice(0, 8)}`;
  const phone = options.phone === undefined ? '+351912345678' : options.phone;
  await database('users').insert({
    id,
    email: cipher.encrypt(email),
    email_lookup: emailLookup(cipher, email),
    password_hash: 'not-a-login-account',
    display_name: cipher.encrypt(displayName),
    phone: cipher.encryptOptional(phone),
    roles: options.roles,
  });
  return { id, email, displayName, phone, roles: options.roles };
}

/** An account that can sign in at the embedded identity provider; email and password are made up unless given. */
export async function insertLoginUser(
  database: Knex,
  cipher: FieldCipher,
  options: { roles: Role[]; email?: string; password?: string; name?: string },
): Promise<LoginUser> {
  const id = randomUUID();
  const email = options.email ?? `login-${id}@example.com`;
  const password = options.password ?? `password-${randomBytes(12).toString('hex')}`;
  const displayName = options.name ?? 'Login Tester';
  await database('users').insert({
    id,
    email: cipher.encrypt(email),
    email_lookup: emailLookup(cipher, email),
    password_hash: await hash(password),
    display_name: cipher.encrypt(displayName),
    phone: null,
    roles: options.roles,
  });
  return { id, email, password, displayName, phone: null, roles: options.roles };
}

/** The Actor a token of the embedded provider gives a user of these roles: every scope the roles may use. */
export function actorOf(user: Pick<TestUser, 'id' | 'roles'>): Actor {
  return { userId: user.id, roles: user.roles, scopes: scopesForRoles(user.roles) };
}
