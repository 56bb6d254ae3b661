// RS256 signing keys of the embedded identity provider: the shared key store, under the provider's issuer.
import {
  createSigningKeyStore as createKeyStore,
  type SigningKeyStore,
  type SigningKeyStoreOptions,
} from '../db/signing-key-store';

export type { ActiveSigningKey, SigningKeyStore } from '../db/signing-key-store';

export const signingAlgorithm = 'RS256';

export interface TokenSigningKeyStoreOptions extends Omit<
  SigningKeyStoreOptions,
  'algorithm' | 'signatureLifetimeSeconds'
> {
  /** A retired key stays published until the last access token it signed has expired. */
  accessTokenTtlSeconds: number;
}

export function createSigningKeyStore(options: TokenSigningKeyStoreOptions): SigningKeyStore {
  const { accessTokenTtlSeconds, ...rest } = options;
  return createKeyStore({
    ...rest,
    algorithm: signingAlgorithm,
    signatureLifetimeSeconds: accessTokenTtlSeconds,
  });
}
