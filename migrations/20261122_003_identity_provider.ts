// Embedded identity provider: token signing keys, rotating refresh tokens and login throttling counters.
import type { Knex } from 'knex';

const upSql = `
-- Keys belong to an issuer (one per deployment; tests run several side by side). Private keys are stored only
-- as field-cipher envelopes; the issuer's key with retired_at NULL signs.
CREATE TABLE identity_signing_keys (
  kid text PRIMARY KEY CONSTRAINT identity_signing_keys_kid_format CHECK (kid ~ '^[A-Za-z0-9_-]{16,128}$'),
  issuer text NOT NULL,
  algorithm text NOT NULL CONSTRAINT identity_signing_keys_algorithm_valid CHECK (algorithm IN ('RS256')),
  public_jwk jsonb NOT NULL,
  private_key text NOT NULL CONSTRAINT identity_signing_keys_private_key_encrypted CHECK (private_key LIKE 'enc:%'),
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz,
  -- A retired key stays in the JWKS until every token it signed has expired.
  published_until timestamptz,
  CONSTRAINT identity_signing_keys_retirement_complete CHECK ((retired_at IS NULL) = (published_until IS NULL))
);
CREATE UNIQUE INDEX identity_signing_keys_one_active ON identity_signing_keys (issuer) WHERE retired_at IS NULL;
CREATE INDEX identity_signing_keys_issuer_index ON identity_signing_keys (issuer, created_at DESC);

-- Only a SHA-256 of each refresh token is kept; one family per login, so reuse of a rotated token revokes it all.
CREATE TABLE identity_refresh_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  family_id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL CONSTRAINT identity_refresh_tokens_hash_unique UNIQUE
    CONSTRAINT identity_refresh_tokens_hash_format CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX identity_refresh_tokens_family_index ON identity_refresh_tokens (family_id);
CREATE INDEX identity_refresh_tokens_user_index ON identity_refresh_tokens (user_id);
CREATE INDEX identity_refresh_tokens_expires_index ON identity_refresh_tokens (expires_at);

-- Fixed-window login attempt counters shared by every API replica; subjects are blind indexes, never plaintext.
CREATE TABLE identity_login_throttle (
  subject text PRIMARY KEY,
  window_started_at timestamptz NOT NULL,
  attempts integer NOT NULL CONSTRAINT identity_login_throttle_attempts_non_negative CHECK (attempts >= 0)
);
CREATE INDEX identity_login_throttle_window_index ON identity_login_throttle (window_started_at);
`;

const downSql = `
DROP TABLE IF EXISTS identity_login_throttle;
DROP TABLE IF EXISTS identity_refresh_tokens;
DROP TABLE IF EXISTS identity_signing_keys;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
