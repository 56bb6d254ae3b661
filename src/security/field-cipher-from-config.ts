// Builds the at-rest field cipher and the AES keyring from configuration, naming the variable when a key is malformed.
import type { Config } from '../config';
import { ConfigError } from '../config';
import {
  createAesKeyring,
  createFieldCipher,
  parseBase64Secret,
  parseKeyring,
  type AesKeyring,
  type FieldCipher,
} from './field-encryption';

function naming<T>(variable: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    throw new ConfigError(variable, error instanceof Error ? error.message : String(error));
  }
}

/** ENCRYPTION_KEYS with ENCRYPTION_ACTIVE_KEY_ID: the one keyring of field encryption and Temporal payloads. */
export function keyringFromConfig(config: Pick<Config, 'encryption'>): AesKeyring {
  const keyring = naming('ENCRYPTION_KEYS', () => parseKeyring(config.encryption.keyring));
  return naming('ENCRYPTION_ACTIVE_KEY_ID', () =>
    createAesKeyring(keyring.keys, config.encryption.activeKeyId),
  );
}

export function createFieldCipherFromConfig(config: Pick<Config, 'encryption'>): FieldCipher {
  const keyring = naming('ENCRYPTION_KEYS', () => parseKeyring(config.encryption.keyring));
  const blindIndexKey = naming('BLIND_INDEX_KEY', () =>
    parseBase64Secret(config.encryption.blindIndexKey, 'blind index key'),
  );
  return naming('ENCRYPTION_ACTIVE_KEY_ID', () =>
    createFieldCipher({ keys: keyring.keys, activeKeyId: config.encryption.activeKeyId, blindIndexKey }),
  );
}
