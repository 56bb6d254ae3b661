// oidc-provider's persistence on PostgreSQL, so every API replica sees the same grants, sessions, codes and tokens.
import type { Knex } from 'knex';
import {
  consumeOAuthArtifact,
  deleteOAuthArtifact,
  deleteOAuthArtifactsOfGrant,
  findLiveOAuthArtifact,
  purgeExpiredOAuthArtifacts,
  upsertOAuthArtifact,
  type OAuthArtifactKey,
  type OAuthArtifactLookup,
  type OAuthArtifactRow,
} from '../db/oauth-artifacts';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { FieldCipher } from '../security/field-encryption';

export interface OAuthArtifactStoreOptions {
  database: Knex;
  /** Encrypts payloads and keys the hash of ids with the same keyring as personal data. */
  cipher: FieldCipher;
  /** How long an expired artifact is kept before a purge may delete it (default one hour). */
  purgeGraceSeconds?: number;
  /** Least time between two purges of one process (default 60 s). */
  purgeIntervalSeconds?: number;
}

/** Models whose artifacts belong to a grant and are revoked with it. */
const grantMembers = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/** The adapter factory oidc-provider calls once per model. */
export function createOAuthArtifactStore(options: OAuthArtifactStoreOptions): (model: string) => Adapter {
  const { database, cipher } = options;
  const purgeGraceSeconds = options.purgeGraceSeconds ?? 3600;
  const purgeIntervalMs = (options.purgeIntervalSeconds ?? 60) * 1000;
  let lastPurgeAt = 0;

  // Bounded, and at most once a minute per process, so no request pays for a large delete.
  async function purgeExpired(): Promise<void> {
    if (Date.now() - lastPurgeAt < purgeIntervalMs) return;
    lastPurgeAt = Date.now();
    await purgeExpiredOAuthArtifacts(database, purgeGraceSeconds);
  }

  return (model) => {
    const keyOf = (id: string): OAuthArtifactKey => ({
      model,
      id_hash: cipher.blindIndex(`oauth-artifact:${model}:${id}`),
    });

    function payloadOf(row: OAuthArtifactRow | undefined): AdapterPayload | undefined {
      if (row === undefined) return undefined;
      const payload = JSON.parse(cipher.decrypt(row.payload)) as AdapterPayload;
      return row.consumed_at === null
        ? payload
        : { ...payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) };
    }

    const findWhere = (where: OAuthArtifactLookup) => findLiveOAuthArtifact(database, where).then(payloadOf);

    return {
      async upsert(id, payload, expiresIn) {
        await upsertOAuthArtifact(
          database,
          {
            ...keyOf(id),
            payload: cipher.encrypt(JSON.stringify(payload)),
            grant_id: grantMembers.has(model) ? (payload.grantId ?? null) : null,
            uid: payload.uid ?? null,
            user_code: payload.userCode ?? null,
          },
          typeof expiresIn === 'number' ? expiresIn : undefined,
        );
        await purgeExpired();
      },
      find: (id) => findWhere(keyOf(id)),
      findByUid: (uid) => findWhere({ model, uid }),
      findByUserCode: (userCode) => findWhere({ model, user_code: userCode }),
      async consume(id) {
        const consumed = await consumeOAuthArtifact(database, keyOf(id));
        // Two replicas redeeming one code or refresh token at once: only the first may use it.
        if (!consumed) throw new errors.InvalidGrant(`${model} already consumed`);
      },
      async destroy(id) {
        await deleteOAuthArtifact(database, keyOf(id));
      },
      async revokeByGrantId(grantId) {
        await deleteOAuthArtifactsOfGrant(database, { model, grantId });
      },
    };
  };
}
