// The identity_oauth_artifacts table: the authorization server's grants, sessions, codes and tokens, sealed.
import type { Knex } from 'knex';

/** An artifact's key: its model and the keyed hash of its id. */
export interface OAuthArtifactKey {
  model: string;
  id_hash: string;
}

/** How an artifact is found: by its key, or by the uid or user code of its model. */
export type OAuthArtifactLookup =
  OAuthArtifactKey | { model: string; uid: string } | { model: string; user_code: string };

export interface OAuthArtifactRow {
  /** Encrypted by the caller. */
  payload: string;
  consumed_at: Date | null;
}

export interface OAuthArtifactWrite extends OAuthArtifactKey {
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
}

/** Deletes up to 500 artifacts that expired more than `graceSeconds` ago. */
export async function purgeExpiredOAuthArtifacts(database: Knex, graceSeconds: number): Promise<void> {
  await database.raw(
    `DELETE FROM identity_oauth_artifacts WHERE ctid IN (
       SELECT ctid FROM identity_oauth_artifacts
       WHERE expires_at < now() - make_interval(secs => ?) LIMIT 500)`,
    [graceSeconds],
  );
}

/** The unexpired artifact `where` finds. */
export async function findLiveOAuthArtifact(
  database: Knex,
  where: OAuthArtifactLookup,
): Promise<OAuthArtifactRow | undefined> {
  return database('identity_oauth_artifacts')
    .where(where)
    .andWhere((live) => {
      void live.whereNull('expires_at').orWhere('expires_at', '>', database.fn.now());
    })
    .first<OAuthArtifactRow | undefined>('payload', 'consumed_at');
}

/** Writes the artifact under its key, expiring `expiresInSeconds` from now, or never when undefined. */
export async function upsertOAuthArtifact(
  database: Knex,
  artifact: OAuthArtifactWrite,
  expiresInSeconds: number | undefined,
): Promise<void> {
  await database('identity_oauth_artifacts')
    .insert({
      ...artifact,
      expires_at:
        expiresInSeconds === undefined
          ? null
          : database.raw('now() + make_interval(secs => ?)', [expiresInSeconds]),
    })
    .onConflict(['model', 'id_hash'])
    .merge(['payload', 'grant_id', 'uid', 'user_code', 'expires_at']);
}

/** Marks the artifact consumed unless it was already; false when it was (or is gone). */
export async function consumeOAuthArtifact(database: Knex, key: OAuthArtifactKey): Promise<boolean> {
  const consumed = await database('identity_oauth_artifacts')
    .where(key)
    .whereNull('consumed_at')
    .update({ consumed_at: database.fn.now() });
  return consumed > 0;
}

export async function deleteOAuthArtifact(database: Knex, key: OAuthArtifactKey): Promise<void> {
  await database('identity_oauth_artifacts').where(key).delete();
}

export async function deleteOAuthArtifactsOfGrant(
  database: Knex,
  grant: { model: string; grantId: string },
): Promise<void> {
  await database('identity_oauth_artifacts').where({ model: grant.model, grant_id: grant.grantId }).delete();
}
