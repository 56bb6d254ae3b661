// Encrypts every Temporal payload (workflow, update, activity and memo data) with the field-encryption keyring.
//
// Follows Temporal's encryption sample: the whole original Payload message is serialized and sealed with
// AES-256-GCM, and the stored payload says only `encoding: binary/encrypted` and `encryption-key-id: <id>`.
// Search attributes never pass through payload codecs, so they stay plaintext by design: the booking's
// search attributes hold ids, status and departure time only, never personal data.
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Config } from '../config';
import { keyringFromConfig } from './field-cipher-from-config';
import { FieldDecryptionError, openSealedBytes, sealBytes, type AesKeyring } from './field-encryption';

export const encryptedEncoding = 'binary/encrypted';
export const encodingMetadataKey = 'encoding';
export const keyIdMetadataKey = 'encryption-key-id';

export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
}

function text(bytes: Uint8Array | null | undefined): string | undefined {
  return bytes === null || bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');
}

/** The encoding and key id are authenticated with the data, so relabelling a payload's key is detected. */
function associatedDataFor(keyId: string): Buffer {
  return Buffer.from(`${encryptedEncoding}:${keyId}`, 'utf8');
}

export function isEncryptedPayload(payload: Payload): boolean {
  return text(payload.metadata?.[encodingMetadataKey]) === encryptedEncoding;
}

/**
 * Encode seals with the active key; decode opens with the key the payload names, so payloads written before a
 * rotation still decode while their key stays in the keyring. Payloads of any other encoding (histories
 * recorded before encryption was switched on) pass through decode unchanged.
 */
export function createPayloadEncryptionCodec(keyring: AesKeyring): PayloadCodec {
  const activeKeyId = keyring.activeKeyId;
  const activeKey = keyring.keys.get(activeKeyId)!;

  function encrypt(payload: Payload): Payload {
    const serialized = temporal.api.common.v1.Payload.encode(payload).finish();
    return {
      metadata: {
        [encodingMetadataKey]: Buffer.from(encryptedEncoding, 'utf8'),
        [keyIdMetadataKey]: Buffer.from(activeKeyId, 'utf8'),
      },
      data: sealBytes(activeKey, serialized, associatedDataFor(activeKeyId)),
    };
  }

  function decrypt(payload: Payload): Payload {
    if (!isEncryptedPayload(payload)) return payload;
    const keyId = text(payload.metadata?.[keyIdMetadataKey]);
    if (keyId === undefined) throw new PayloadDecryptionError('encrypted payload names no encryption key id');
    const key = keyring.keys.get(keyId);
    if (key === undefined) {
      throw new PayloadDecryptionError(`encrypted payload names unknown encryption key id "${keyId}"`);
    }
    try {
      const serialized = openSealedBytes(
        key,
        keyId,
        payload.data ?? new Uint8Array(),
        associatedDataFor(keyId),
      );
      return temporal.api.common.v1.Payload.decode(serialized);
    } catch (error) {
      const reason = error instanceof FieldDecryptionError ? error.message : 'it is not a serialized payload';
      throw new PayloadDecryptionError(`encrypted payload cannot be decrypted: ${reason}`);
    }
  }

  // The Promise constructor turns a payload's failure into a rejection, as the codec contract expects.
  return {
    encode: (payloads) => new Promise((resolve) => resolve(payloads.map(encrypt))),
    decode: (payloads) => new Promise((resolve) => resolve(payloads.map(decrypt))),
  };
}

/** The data converter of every Temporal Client and Worker of this service, production and tests alike. */
export function createBookingDataConverter(config: Pick<Config, 'encryption'>): DataConverter {
  return { payloadCodecs: [createPayloadEncryptionCodec(keyringFromConfig(config))] };
}
