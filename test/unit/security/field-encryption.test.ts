// Field encryption: round trips, key rotation, tamper detection, blind indexes and keyring parsing.
import { expect } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import {
  createFieldCipher,
  FieldDecryptionError,
  isEncryptedEnvelope,
  KeyringConfigurationError,
  parseBase64Secret,
  parseKeyring,
} from '../../../src/security/field-encryption';

const firstKey = randomBytes(32);
const secondKey = randomBytes(32);
const blindIndexKey = randomBytes(32);

function cipherWith(keys: Record<string, Buffer>, activeKeyId: string) {
  return createFieldCipher({ keys, activeKeyId, blindIndexKey });
}

describe('createFieldCipher', () => {
  it('round-trips text, including non-ASCII and empty strings', () => {
    const cipher = cipherWith({ k1: firstKey }, 'k1');
    for (const plaintext of ['alice@example.com', 'João Ñúñez 🚌', '']) {
      const envelope = cipher.encrypt(plaintext);
      expect(envelope).toMatch(/^enc:v1:k1:[A-Za-z0-9+/]+={0,2}$/);
      expect(isEncryptedEnvelope(envelope)).toBe(true);
      expect(envelope).not.toContain(plaintext || 'never-empty');
      expect(cipher.decrypt(envelope)).toBe(plaintext);
    }
  });

  it('encrypts the same plaintext differently every time', () => {
    const cipher = cipherWith({ k1: firstKey }, 'k1');
    const envelopes = new Set(Array.from({ length: 20 }, () => cipher.encrypt('same value')));
    expect(envelopes.size).toBe(20);
  });

  it('keeps decrypting values written with an older key after rotation', () => {
    const beforeRotation = cipherWith({ k1: firstKey }, 'k1');
    const writtenWithFirstKey = beforeRotation.encrypt('+447700900123');

    const afterRotation = cipherWith({ k1: firstKey, k2: secondKey }, 'k2');
    const writtenWithSecondKey = afterRotation.encrypt('+447700900123');

    expect(writtenWithSecondKey.startsWith('enc:v1:k2:')).toBe(true);
    expect(afterRotation.decrypt(writtenWithFirstKey)).toBe('+447700900123');
    expect(afterRotation.decrypt(writtenWithSecondKey)).toBe('+447700900123');
  });

  it('names the unknown key id when a value was written with a retired key', () => {
    const writer = cipherWith({ k1: firstKey }, 'k1');
    const reader = cipherWith({ k2: secondKey }, 'k2');
    expect(() => reader.decrypt(writer.encrypt('secret'))).toThrow(/unknown key id "k1"/);
  });

  it('detects tampered ciphertext, a swapped key id and malformed envelopes', () => {
    const cipher = cipherWith({ k1: firstKey, k2: secondKey }, 'k1');
    const envelope = cipher.encrypt('Alice Martins');
    const payload = Buffer.from(envelope.slice('enc:v1:k1:'.length), 'base64');
    payload[payload.length - 1] ^= 0x01;
    const tampered = `enc:v1:k1:${payload.toString('base64')}`;
    expect(() => cipher.decrypt(tampered)).toThrow(FieldDecryptionError);
    expect(() => cipher.decrypt(tampered)).toThrow(/tampered/);

    const swappedKeyId = envelope.replace('enc:v1:k1:', 'enc:v1:k2:');
    expect(() => cipher.decrypt(swappedKeyId)).toThrow(FieldDecryptionError);

    expect(() => cipher.decrypt('Alice Martins')).toThrow(/not an encrypted envelope/);
    expect(() => cipher.decrypt('enc:v1:k1:AAAA')).toThrow(/truncated/);
    expect(() => cipher.decrypt('enc:v1:k1:not base64!')).toThrow(/not base64/);
    expect(() => cipher.decrypt('enc:v1:nokey')).toThrow(/no key id/);
  });

  it('passes null and undefined through the optional helpers', () => {
    const cipher = cipherWith({ k1: firstKey }, 'k1');
    expect(cipher.encryptOptional(null)).toBeNull();
    expect(cipher.encryptOptional(undefined)).toBeNull();
    expect(cipher.decryptOptional(null)).toBeNull();
    expect(cipher.decryptOptional(cipher.encryptOptional('+351912345678'))).toBe('+351912345678');
  });

  it('computes a deterministic keyed blind index', () => {
    const cipher = cipherWith({ k1: firstKey }, 'k1');
    const rotated = cipherWith({ k1: firstKey, k2: secondKey }, 'k2');
    const index = cipher.blindIndex('alice@example.com');
    expect(index).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated.blindIndex('alice@example.com')).toBe(index);
    expect(cipher.blindIndex('bob@example.com')).not.toBe(index);
    const otherBlindKey = createFieldCipher({
      keys: { k1: firstKey },
      activeKeyId: 'k1',
      blindIndexKey: secondKey,
    });
    expect(otherBlindKey.blindIndex('alice@example.com')).not.toBe(index);
  });

  it('rejects a bad configuration', () => {
    expect(() => cipherWith({ k1: randomBytes(16) }, 'k1')).toThrow(/16 bytes; AES-256 needs 32/);
    expect(() => cipherWith({ k1: firstKey }, 'k9')).toThrow(/active key id "k9"/);
    expect(() => cipherWith({ 'bad:id': firstKey }, 'bad:id')).toThrow(KeyringConfigurationError);
    expect(() =>
      createFieldCipher({ keys: { k1: firstKey }, activeKeyId: 'k1', blindIndexKey: randomBytes(8) }),
    ).toThrow(/blind index key is 8 bytes/);
  });
});

describe('parseKeyring', () => {
  it('parses newest-first entries and makes the first one active', () => {
    const keyring = parseKeyring(`k2:${secondKey.toString('base64')}, k1:${firstKey.toString('base64')}`);
    expect(keyring.activeKeyId).toBe('k2');
    expect(Object.keys(keyring.keys)).toEqual(['k2', 'k1']);
    expect(keyring.keys.k1.equals(firstKey)).toBe(true);
    expect(keyring.keys.k2.equals(secondKey)).toBe(true);

    const cipher = createFieldCipher({ ...keyring, blindIndexKey });
    expect(cipher.decrypt(cipher.encrypt('round trip'))).toBe('round trip');
  });

  it.each([
    ['an empty string', '', /keyring is empty/],
    ['only separators', ' , ', /keyring is empty/],
    ['an entry without a key id', 'just-a-key', /entry 1 is not "<keyId>:<base64 key>"/],
    ['an empty key id', ':AAAA', /entry 1 is not/],
    [
      'a key id with a space',
      `k1:${firstKey.toString('base64')},bad id:${secondKey.toString('base64')}`,
      /entry 2: key id must match/,
    ],
    ['a key that is not base64', 'k1:not*base64', /key "k1" is not valid base64/],
    [
      'a 24-byte key',
      `k1:${randomBytes(24).toString('base64')}`,
      /key "k1" decodes to 24 bytes; expected 32/,
    ],
    [
      'a duplicated key id',
      `k1:${firstKey.toString('base64')},k1:${secondKey.toString('base64')}`,
      /lists key id "k1" twice/,
    ],
  ])('rejects %s', (_description, text, message) => {
    expect(() => parseKeyring(text)).toThrow(KeyringConfigurationError);
    expect(() => parseKeyring(text)).toThrow(message);
  });

  it('never echoes key material in its errors', () => {
    const shortKey = randomBytes(24).toString('base64');
    expect(() => parseKeyring(`k1:${shortKey}`)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(shortKey) }),
    );
  });
});

describe('parseBase64Secret', () => {
  it('accepts a long enough secret and rejects a short or malformed one', () => {
    expect(parseBase64Secret(blindIndexKey.toString('base64'), 'BLIND_INDEX_KEY').equals(blindIndexKey)).toBe(
      true,
    );
    expect(() => parseBase64Secret(randomBytes(16).toString('base64'), 'BLIND_INDEX_KEY')).toThrow(
      /BLIND_INDEX_KEY is 16 bytes; at least 32/,
    );
    expect(() => parseBase64Secret('%%%', 'BLIND_INDEX_KEY')).toThrow(/BLIND_INDEX_KEY is not valid base64/);
  });
});
