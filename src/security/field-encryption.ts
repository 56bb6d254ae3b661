// Encryption at rest for sensitive columns (AES-256-GCM envelopes with key rotation) and blind indexes for lookups.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const ENVELOPE_PREFIX = 'enc:v1:';
const ALGORITHM = 'aes-256-gcm';
const KEY_LENGTH_BYTES = 32;
const IV_LENGTH_BYTES = 12;
const AUTH_TAG_LENGTH_BYTES = 16;
const MINIMUM_BLIND_INDEX_KEY_BYTES = 32;
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;

export interface FieldCipherOptions {
  /** Every key that may still decrypt stored values, by key id; each exactly 32 bytes. */
  keys: Record<string, Buffer>;
  /** The key new values are encrypted with. */
  activeKeyId: string;
  /** HMAC key for blind indexes; kept apart from the encryption keys so rotating those leaves lookups intact. */
  blindIndexKey: Buffer;
}

export interface FieldCipher {
  /** Encrypts into `enc:v1:<keyId>:<base64(iv | tag | ciphertext)>`; the same plaintext never encrypts the same way twice. */
  encrypt(plaintext: string): string;
  /** Decrypts an envelope with the key it names; throws FieldDecryptionError on unknown keys or tampered data. */
  decrypt(envelope: string): string;
  encryptOptional(plaintext: string | null | undefined): string | null;
  decryptOptional(envelope: string | null | undefined): string | null;
  /** Deterministic HMAC-SHA256 (hex) of the value: equality lookups without storing the plaintext. */
  blindIndex(value: string): string;
  readonly activeKeyId: string;
}

export class FieldDecryptionError extends Error {
  override readonly name = 'FieldDecryptionError';
}

export class KeyringConfigurationError extends Error {
  override readonly name = 'KeyringConfigurationError';
}

export function isEncryptedEnvelope(value: string): boolean {
  return value.startsWith(ENVELOPE_PREFIX);
}

/** Validated AES-256 keys by id, and the one new values are encrypted with. */
export interface AesKeyring {
  readonly keys: ReadonlyMap<string, Buffer>;
  readonly activeKeyId: string;
}

/** Checks key ids and key lengths, and that the active key is in the keyring; copies the key material. */
export function createAesKeyring(keys: Record<string, Buffer>, activeKeyId: string): AesKeyring {
  const validated = new Map<string, Buffer>();
  for (const [keyId, key] of Object.entries(keys)) {
    if (!KEY_ID_PATTERN.test(keyId)) {
      throw new KeyringConfigurationError(`key id "${keyId}" must match ${KEY_ID_PATTERN}`);
    }
    if (key.length !== KEY_LENGTH_BYTES) {
      throw new KeyringConfigurationError(
        `key "${keyId}" is ${key.length} bytes; AES-256 needs ${KEY_LENGTH_BYTES}`,
      );
    }
    validated.set(keyId, Buffer.from(key));
  }
  if (!validated.has(activeKeyId)) {
    throw new KeyringConfigurationError(`active key id "${activeKeyId}" is not in the keyring`);
  }
  return { keys: validated, activeKeyId };
}

/**
 * AES-256-GCM with a random 96-bit IV: `iv | tag | ciphertext`. The associated data is authenticated but not
 * stored; the caller binds whatever names the key (an envelope header, payload metadata) through it.
 */
export function sealBytes(key: Buffer, plaintext: Uint8Array, associatedData: Uint8Array): Buffer {
  const iv = randomBytes(IV_LENGTH_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: AUTH_TAG_LENGTH_BYTES });
  cipher.setAAD(associatedData);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

/** Reverses sealBytes; throws FieldDecryptionError (naming the key id) on truncated or tampered input. */
export function openSealedBytes(
  key: Buffer,
  keyId: string,
  sealed: Uint8Array,
  associatedData: Uint8Array,
): Buffer {
  if (sealed.length < IV_LENGTH_BYTES + AUTH_TAG_LENGTH_BYTES) {
    throw new FieldDecryptionError('encrypted value is truncated');
  }
  const iv = sealed.subarray(0, IV_LENGTH_BYTES);
  const authTag = sealed.subarray(IV_LENGTH_BYTES, IV_LENGTH_BYTES + AUTH_TAG_LENGTH_BYTES);
  const ciphertext = sealed.subarray(IV_LENGTH_BYTES + AUTH_TAG_LENGTH_BYTES);
  const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: AUTH_TAG_LENGTH_BYTES });
  decipher.setAAD(associatedData);
  decipher.setAuthTag(authTag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    throw new FieldDecryptionError(`encrypted value failed authentication with key "${keyId}" (tampered?)`);
  }
}

export function createFieldCipher(options: FieldCipherOptions): FieldCipher {
  const keyring = createAesKeyring(options.keys, options.activeKeyId);
  if (options.blindIndexKey.length < MINIMUM_BLIND_INDEX_KEY_BYTES) {
    throw new KeyringConfigurationError(
      `blind index key is ${options.blindIndexKey.length} bytes; at least ${MINIMUM_BLIND_INDEX_KEY_BYTES} are needed`,
    );
  }
  const blindIndexKey = Buffer.from(options.blindIndexKey);
  const activeKeyId = keyring.activeKeyId;
  const activeKey = keyring.keys.get(activeKeyId)!;

  // The envelope header is authenticated too, so swapping the key id of a stored value is detected.
  const headerFor = (keyId: string) => Buffer.from(`${ENVELOPE_PREFIX}${keyId}`, 'utf8');

  function encrypt(plaintext: string): string {
    const sealed = sealBytes(activeKey, Buffer.from(plaintext, 'utf8'), headerFor(activeKeyId));
    return `${ENVELOPE_PREFIX}${activeKeyId}:${sealed.toString('base64')}`;
  }

  function decrypt(envelope: string): string {
    if (!isEncryptedEnvelope(envelope)) {
      throw new FieldDecryptionError('value is not an encrypted envelope (expected prefix "enc:v1:")');
    }
    const rest = envelope.slice(ENVELOPE_PREFIX.length);
    const separator = rest.indexOf(':');
    if (separator <= 0) throw new FieldDecryptionError('encrypted envelope has no key id');
    const keyId = rest.slice(0, separator);
    const encodedPayload = rest.slice(separator + 1);
    const key = keyring.keys.get(keyId);
    if (!key) throw new FieldDecryptionError(`encrypted value names unknown key id "${keyId}"`);
    if (!BASE64_PATTERN.test(encodedPayload)) {
      throw new FieldDecryptionError('encrypted envelope payload is not base64');
    }
    const sealed = Buffer.from(encodedPayload, 'base64');
    return openSealedBytes(key, keyId, sealed, headerFor(keyId)).toString('utf8');
  }

  return {
    activeKeyId,
    encrypt,
    decrypt,
    encryptOptional: (plaintext) =>
      plaintext === null || plaintext === undefined ? null : encrypt(plaintext),
    decryptOptional: (envelope) => (envelope === null || envelope === undefined ? null : decrypt(envelope)),
    blindIndex: (value) => createHmac('sha256', blindIndexKey).update(value, 'utf8').digest('hex'),
  };
}

export interface Keyring {
  keys: Record<string, Buffer>;
  /** The first key listed: new values are encrypted with it, the others only decrypt. */
  activeKeyId: string;
}

/**
 * Parses `k2:<base64>,k1:<base64>` (newest first). Errors name the problem and the key id, never key material.
 */
export function parseKeyring(text: string): Keyring {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (entries.length === 0) {
    throw new KeyringConfigurationError('keyring is empty; expected "<keyId>:<base64 32-byte key>[,...]"');
  }
  const keys = new Map<string, Buffer>();
  entries.forEach((entry, index) => {
    const separator = entry.indexOf(':');
    if (separator <= 0) {
      throw new KeyringConfigurationError(`keyring entry ${index + 1} is not "<keyId>:<base64 key>"`);
    }
    const keyId = entry.slice(0, separator);
    const encodedKey = entry.slice(separator + 1);
    if (!KEY_ID_PATTERN.test(keyId)) {
      throw new KeyringConfigurationError(`keyring entry ${index + 1}: key id must match ${KEY_ID_PATTERN}`);
    }
    if (keys.has(keyId)) {
      throw new KeyringConfigurationError(`keyring lists key id "${keyId}" twice`);
    }
    keys.set(keyId, decodeKey(encodedKey, `key "${keyId}"`, KEY_LENGTH_BYTES));
  });
  return { keys: Object.fromEntries(keys), activeKeyId: keys.keys().next().value! };
}

/** Parses a base64 secret (such as the blind index key) of at least `minimumBytes` bytes. */
export function parseBase64Secret(
  text: string,
  description: string,
  minimumBytes = MINIMUM_BLIND_INDEX_KEY_BYTES,
): Buffer {
  const secret = decodeKey(text.trim(), description);
  if (secret.length < minimumBytes) {
    throw new KeyringConfigurationError(
      `${description} is ${secret.length} bytes; at least ${minimumBytes} are needed`,
    );
  }
  return secret;
}

function decodeKey(encoded: string, description: string, exactBytes?: number): Buffer {
  if (!BASE64_PATTERN.test(encoded)) {
    throw new KeyringConfigurationError(`${description} is not valid base64`);
  }
  const key = Buffer.from(encoded, 'base64');
  if (exactBytes !== undefined && key.length !== exactBytes) {
    throw new KeyringConfigurationError(
      `${description} decodes to ${key.length} bytes; expected ${exactBytes}`,
    );
  }
  return key;
}
