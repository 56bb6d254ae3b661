// The OAuth 2.0 authorization server's shared state: grants, sessions, interactions, codes and tokens of every replica.
import type { Knex } from 'knex';

const upSql = `
-- One row per oidc-provider artifact. The key is a keyed hash of the artifact's id (codes and tokens are their own
-- ids, so a plain id would be a usable credential) and the payload a field-cipher envelope.
CREATE TABLE identity_oauth_artifacts (
  model text NOT NULL,
  id_hash text NOT NULL,
  payload text NOT NULL CONSTRAINT identity_oauth_artifacts_payload_encrypted CHECK (payload LIKE 'enc:%'),
  grant_id text,
  uid text,
  user_code text,
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id_hash)
);
CREATE INDEX identity_oauth_artifacts_grant_index ON identity_oauth_artifacts (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX identity_oauth_artifacts_uid_index ON identity_oauth_artifacts (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX identity_oauth_artifacts_user_code_index ON identity_oauth_artifacts (model, user_code)
  WHERE user_code IS NOT NULL;
CREATE INDEX identity_oauth_artifacts_expires_index ON identity_oauth_artifacts (expires_at);
`;

const downSql = `
DROP TABLE IF EXISTS identity_oauth_artifacts;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
