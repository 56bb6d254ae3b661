// Signing keys kept in PostgreSQL per issuer, rotated without downtime: the token keys (RS256) and the ticket keys (ES256).
import { createPrivateKey } from 'node:crypto';
import {
  calculateJwkThumbprint,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  importPKCS8,
  type CryptoKey,
  type JWK,
} from 'jose';
import type { Knex } from 'knex';
import type { FieldCipher } from '../security/field-encryption';

export type SigningAlgorithm = 'RS256' | 'ES256';

export interface SigningKeyStoreOptions {
  database: Knex;
  /** The keys of this issuer only; several issuers may share one database. */
  issuer: string;
  algorithm: SigningAlgorithm;
  /** Encrypts private keys at rest with the same keyring as personal data. */
  cipher: FieldCipher;
  /** The longest a signature made with a key stays valid: a retired key stays published that much longer. */
  signatureLifetimeSeconds: number;
  /** Age at which the active key is replaced on its next use. */
  rotationIntervalSeconds: number;
  /** Verifiers' clock tolerance: a retired key stays published this much longer. */
  clockToleranceSeconds: number;
  /** How long a replica keeps signing with the key it last read before reading again (default 60 s). */
  activeKeyCacheSeconds?: number;
}

export interface ActiveSigningKey {
  kid: string;
  algorithm: SigningAlgorithm;
  privateKey: CryptoKey;
  /** The same key as a private JWK, the form the OAuth authorization server's keystore takes. */
  privateJwk: JWK;
}

export interface SigningKeyStore {
  /** The key new tokens are signed with; creates the first key, and rotates one older than the interval. */
  activeKey(): Promise<ActiveSigningKey>;
  /** Public keys of the active key and of retired keys whose tokens may still be valid, newest first. */
  publicKeySet(): Promise<{ keys: JWK[] }>;
  /** Retires the active key (it stays published until its tokens expire) and makes a new one active. */
  rotate(): Promise<string>;
}

interface ActiveKeyRow {
  kid: string;
  private_key: string;
  due: boolean;
}

export function createSigningKeyStore(options: SigningKeyStoreOptions): SigningKeyStore {
  const { database, cipher, algorithm } = options;
  const cacheMilliseconds = (options.activeKeyCacheSeconds ?? 60) * 1000;
  // Another replica may sign with the old key for up to one cache period after a rotation; its signatures then
  // live one signature lifetime, and verifiers accept them for the clock tolerance beyond that.
  const publishedAfterRetirementSeconds =
    options.signatureLifetimeSeconds + options.clockToleranceSeconds + cacheMilliseconds / 1000;
  let cached: { key: ActiveSigningKey; readAt: number } | undefined;

  async function readActiveKey(
    connection: Knex | Knex.Transaction,
    lock = false,
  ): Promise<ActiveKeyRow | undefined> {
    const query = connection('identity_signing_keys')
      .where({ issuer: options.issuer })
      .whereNull('retired_at')
      .first<ActiveKeyRow | undefined>(
        'kid',
        'private_key',
        connection.raw('created_at <= now() - make_interval(secs => ?) AS due', [
          options.rotationIntervalSeconds,
        ]),
      );
    return lock ? query.forUpdate() : query;
  }

  async function newKeyPair(): Promise<{ kid: string; publicJwk: JWK; privateKeyPem: string }> {
    const { publicKey, privateKey } = await generateKeyPair(algorithm, {
      ...(algorithm === 'RS256' ? { modulusLength: 2048 } : {}),
      extractable: true,
    });
    const jwk = await exportJWK(publicKey);
    // RFC 7638 thumbprint: a kid derived from the key itself, unique without coordination.
    const kid = await calculateJwkThumbprint(jwk);
    return {
      kid,
      publicJwk: { ...jwk, kid, alg: algorithm, use: 'sig' },
      privateKeyPem: await exportPKCS8(privateKey),
    };
  }

  async function rotateIf(shouldRotate: (active: ActiveKeyRow) => boolean): Promise<string> {
    const candidate = await newKeyPair();
    const kid = await database.transaction(async (transaction) => {
      // Serializes this issuer's rotations across replicas.
      await transaction.raw(
        `SELECT pg_advisory_xact_lock(hashtextextended('identity_signing_keys:' || ?, 0))`,
        [options.issuer],
      );
      const active = await readActiveKey(transaction, true);
      // Another replica may have rotated while this one waited for the lock.
      if (active !== undefined && !shouldRotate(active)) return active.kid;
      if (active !== undefined) {
        await transaction('identity_signing_keys')
          .where({ kid: active.kid })
          .update({
            retired_at: transaction.fn.now(),
            published_until: transaction.raw('now() + make_interval(secs => ?)', [
              publishedAfterRetirementSeconds,
            ]),
          });
      }
      await transaction('identity_signing_keys').insert({
        kid: candidate.kid,
        issuer: options.issuer,
        algorithm,
        public_jwk: JSON.stringify(candidate.publicJwk),
        private_key: cipher.encrypt(candidate.privateKeyPem),
      });
      // Keys no token can need any more; a day's margin keeps them for investigations.
      await transaction('identity_signing_keys')
        .where({ issuer: options.issuer })
        .andWhere('published_until', '<', transaction.raw("now() - interval '1 day'"))
        .delete();
      return candidate.kid;
    });
    cached = undefined;
    return kid;
  }

  async function activeKey(): Promise<ActiveSigningKey> {
    if (cached !== undefined && Date.now() - cached.readAt < cacheMilliseconds) return cached.key;
    let row = await readActiveKey(database);
    if (row === undefined || row.due) {
      await rotateIf((active) => active.due);
      row = await readActiveKey(database);
      if (row === undefined) throw new Error('no active signing key after rotation');
    }
    const privateKeyPem = cipher.decrypt(row.private_key);
    const privateKey = await importPKCS8(privateKeyPem, algorithm);
    const privateJwk: JWK = {
      ...(createPrivateKey(privateKeyPem).export({ format: 'jwk' }) as JWK),
      kid: row.kid,
      alg: algorithm,
      use: 'sig',
    };
    const key: ActiveSigningKey = { kid: row.kid, algorithm, privateKey, privateJwk };
    cached = { key, readAt: Date.now() };
    return key;
  }

  async function publicKeySet(): Promise<{ keys: JWK[] }> {
    const readPublished = () =>
      database('identity_signing_keys')
        .where({ issuer: options.issuer })
        // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a knex builder is a lazy thenable; returning it runs no query
        .andWhere((published) =>
          published.whereNull('retired_at').orWhere('published_until', '>', database.fn.now()),
        )
        .orderBy('created_at', 'desc')
        .select<{ public_jwk: JWK }[]>('public_jwk');
    let rows = await readPublished();
    if (rows.length === 0) {
      // Never publish an empty set: the first key is made on first demand, whichever endpoint asks first.
      await activeKey();
      rows = await readPublished();
    }
    return { keys: rows.map((row) => row.public_jwk) };
  }

  return { activeKey, publicKeySet, rotate: () => rotateIf(() => true) };
}
