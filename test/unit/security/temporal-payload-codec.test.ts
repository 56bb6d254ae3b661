// The Temporal payload codec: AES-256-GCM round trip, metadata, key rotation, tampering and plaintext pass-through.
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { ConfigError } from '../../../src/config';
import { createAesKeyring } from '../../../src/security/field-encryption';
import {
  createBookingDataConverter,
  createPayloadEncryptionCodec,
  encryptedEncoding,
  isEncryptedPayload,
  PayloadDecryptionError,
} from '../../../src/security/temporal-payload-codec';

const firstKey = randomBytes(32);
const secondKey = randomBytes(32);

const booking = {
  passengers: [{ firstName: 'Beatriz', lastName: 'Quaresma', email: 'beatriz.q@example.com' }],
  contactPhone: '+351912000111',
  paymentToken: 'tok_visa_secret',
};

function codecWith(keys: Record<string, Buffer>, activeKeyId: string) {
  return createPayloadEncryptionCodec(createAesKeyring(keys, activeKeyId));
}

function metadataText(payload: Payload, key: string): string | undefined {
  const value = payload.metadata?.[key];
  return value === undefined || value === null ? undefined : Buffer.from(value).toString('utf8');
}

describe('createPayloadEncryptionCodec', () => {
  const codec = codecWith({ k1: firstKey }, 'k1');
  const plaintext = defaultPayloadConverter.toPayload(booking);

  it('round-trips a payload, its original metadata included', async () => {
    const [encrypted] = await codec.encode([plaintext]);
    const [decrypted] = await codec.decode([encrypted]);

    expect(defaultPayloadConverter.fromPayload(decrypted)).toEqual(booking);
    expect(metadataText(decrypted, 'encoding')).toBe('json/plain');
  });

  it('stores only the encrypted encoding and the key id in the clear', async () => {
    const [encrypted] = await codec.encode([plaintext]);

    expect(Object.keys(encrypted.metadata ?? {}).sort()).toEqual(['encoding', 'encryption-key-id']);
    expect(metadataText(encrypted, 'encoding')).toBe(encryptedEncoding);
    expect(metadataText(encrypted, 'encryption-key-id')).toBe('k1');
    expect(isEncryptedPayload(encrypted)).toBe(true);
    const stored = Buffer.from(encrypted.data!).toString('latin1');
    for (const secret of [
      'Beatriz',
      'Quaresma',
      'beatriz.q@example.com',
      '+351912000111',
      'tok_visa_secret',
    ]) {
      expect(stored).not.toContain(secret);
    }
  });

  it('never encrypts the same payload the same way twice', async () => {
    const [first, second] = await codec.encode([plaintext, plaintext]);
    expect(Buffer.from(first.data!).equals(Buffer.from(second.data!))).toBe(false);
  });

  it('keeps the order and the count of a batch, an empty one included', async () => {
    const values = ['one', 2, { three: 3 }, null];
    const encrypted = await codec.encode(values.map((value) => defaultPayloadConverter.toPayload(value)));
    const decrypted = await codec.decode(encrypted);
    expect(decrypted.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual(values);
    expect(await codec.encode([])).toEqual([]);
  });

  it('decodes payloads of a retired key after a rotation and encrypts new ones with the active key', async () => {
    const [beforeRotation] = await codecWith({ k1: firstKey }, 'k1').encode([plaintext]);
    const rotated = codecWith({ k2: secondKey, k1: firstKey }, 'k2');

    const [decrypted] = await rotated.decode([beforeRotation]);
    const [afterRotation] = await rotated.encode([plaintext]);

    expect(defaultPayloadConverter.fromPayload(decrypted)).toEqual(booking);
    expect(metadataText(afterRotation, 'encryption-key-id')).toBe('k2');
  });

  it('refuses a payload whose key is no longer in the keyring, naming the key id', async () => {
    const [encrypted] = await codec.encode([plaintext]);
    const withoutFirstKey = codecWith({ k2: secondKey }, 'k2');

    await expect(withoutFirstKey.decode([encrypted])).rejects.toThrow(PayloadDecryptionError);
    await expect(withoutFirstKey.decode([encrypted])).rejects.toThrow(/unknown encryption key id "k1"/);
  });

  it('detects tampered data, a relabelled key id and a missing key id', async () => {
    const both = codecWith({ k1: firstKey, k2: secondKey }, 'k1');
    const [encrypted] = await both.encode([plaintext]);
    const flipped = Buffer.from(encrypted.data!);
    flipped[flipped.length - 1] ^= 0x01;
    const relabelled = {
      ...encrypted,
      metadata: { ...encrypted.metadata, 'encryption-key-id': Buffer.from('k2') },
    };
    const unlabelled = { ...encrypted, metadata: { encoding: Buffer.from(encryptedEncoding) } };

    await expect(both.decode([{ ...encrypted, data: flipped }])).rejects.toThrow(/failed authentication/);
    await expect(both.decode([relabelled])).rejects.toThrow(PayloadDecryptionError);
    await expect(both.decode([{ ...encrypted, data: flipped.subarray(0, 8) }])).rejects.toThrow(/truncated/);
    await expect(both.decode([unlabelled])).rejects.toThrow(/no encryption key id/);
  });

  it('passes payloads of other encodings through decode unchanged (histories recorded in plaintext)', async () => {
    const binary = defaultPayloadConverter.toPayload(new Uint8Array([1, 2, 3]));
    const empty = defaultPayloadConverter.toPayload(undefined);

    const decoded = await codec.decode([plaintext, binary, empty]);

    expect(decoded[0]).toBe(plaintext);
    expect(decoded[1]).toBe(binary);
    expect(decoded[2]).toBe(empty);
  });
});

describe('createBookingDataConverter', () => {
  const encryption = {
    keyring: `k2:${secondKey.toString('base64')},k1:${firstKey.toString('base64')}`,
    activeKeyId: 'k2',
    blindIndexKey: randomBytes(32).toString('base64'),
  };

  it('encrypts with the configured active key, through one payload codec', async () => {
    const converter = createBookingDataConverter({ encryption });
    expect(converter.payloadCodecs).toHaveLength(1);
    const [encrypted] = await converter.payloadCodecs![0].encode([
      defaultPayloadConverter.toPayload(booking),
    ]);
    expect(metadataText(encrypted, 'encryption-key-id')).toBe('k2');
  });

  it('shares its keyring with field encryption: a payload sealed under k1 decodes after k2 became active', async () => {
    const [sealedUnderFirst] = await codecWith({ k1: firstKey }, 'k1').encode([
      defaultPayloadConverter.toPayload(booking),
    ]);
    const [decoded] = await createBookingDataConverter({ encryption }).payloadCodecs![0].decode([
      sealedUnderFirst,
    ]);
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual(booking);
  });

  it('names the variable when the keyring or the active key id is wrong', () => {
    expect(() => createBookingDataConverter({ encryption: { ...encryption, keyring: 'k1:short' } })).toThrow(
      ConfigError,
    );
    expect(() => createBookingDataConverter({ encryption: { ...encryption, activeKeyId: 'k9' } })).toThrow(
      /ENCRYPTION_ACTIVE_KEY_ID/,
    );
  });
});
