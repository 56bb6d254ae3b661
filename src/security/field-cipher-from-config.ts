// Builds the at-rest field cipher from configuration, naming the variable when a key is malformed.
import type { Config } from '../config';
import { ConfigError } from '../config';
import { createFieldCipher, parseBase64Secret, parseKeyring, type FieldCipher } from './field-encryption';

function naming<T>(variable: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    throw new ConfigError(variable, error instanceof Error ? error.message : String(error));
  }
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
