// The API process's one token verifier, from configuration, with local accounts for external issuers.
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { FieldCipher } from '../security/field-encryption';
import {
  createTokenVerifier,
  tokenVerifierOptionsFromConfig,
  type TokenVerifier,
} from '../security/token-verifier';
import { createExternalAccountDirectory } from './external-accounts';

export interface TokenVerifierDependencies {
  database: Knex;
  cipher: FieldCipher;
  /** The embedded identity provider's key set, read in-process instead of over HTTP. */
  keySetSource?: () => Promise<{ keys: unknown[] }>;
}

/**
 * The embedded identity provider's subjects are local user ids already; an external issuer's are not, so
 * each gets a local account on first sight and every Actor carries that account's id.
 */
export function createTokenVerifierFromConfig(
  config: Pick<Config, 'auth'>,
  dependencies: TokenVerifierDependencies,
): TokenVerifier {
  const { database, cipher, keySetSource } = dependencies;
  return createTokenVerifier({
    ...tokenVerifierOptionsFromConfig(config.auth),
    ...(keySetSource === undefined ? {} : { keySetSource }),
    ...(config.auth.embedded !== null
      ? {}
      : { localAccounts: createExternalAccountDirectory({ database, cipher, issuer: config.auth.issuer }) }),
  });
}
