// Just-in-time local accounts for users of an external OIDC issuer: (issuer, subject) → users.id.
import type { Knex } from 'knex';

// An external provider may share no email or name, and its users never sign in here: those columns become
// optional, while an account that can sign in (it has a password) must still have all of them, as before.
const upSql = `
ALTER TABLE users
  ALTER COLUMN email DROP NOT NULL,
  ALTER COLUMN email_lookup DROP NOT NULL,
  ALTER COLUMN password_hash DROP NOT NULL,
  ALTER COLUMN display_name DROP NOT NULL,
  ADD CONSTRAINT users_sign_in_account_complete CHECK (
    password_hash IS NULL OR (email IS NOT NULL AND email_lookup IS NOT NULL AND display_name IS NOT NULL)
  );

-- The primary key makes the first sight of a subject race-safe: concurrent first requests insert one link.
CREATE TABLE external_identities (
  issuer text NOT NULL CONSTRAINT external_identities_issuer_present CHECK (issuer <> ''),
  subject text NOT NULL CONSTRAINT external_identities_subject_present CHECK (subject <> ''),
  user_id uuid NOT NULL CONSTRAINT external_identities_user_unique UNIQUE
    REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject)
);
`;

// Refuses (SET NOT NULL fails) while accounts without sign-in exist, rather than deleting anyone's bookings.
const downSql = `
DROP TABLE IF EXISTS external_identities;
ALTER TABLE users
  DROP CONSTRAINT IF EXISTS users_sign_in_account_complete,
  ALTER COLUMN email SET NOT NULL,
  ALTER COLUMN email_lookup SET NOT NULL,
  ALTER COLUMN password_hash SET NOT NULL,
  ALTER COLUMN display_name SET NOT NULL;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
