// What makes two requests "the same": one keyed fingerprint of the canonical JSON, and the earlier schemes it accepts.
import { createHash, randomBytes } from 'node:crypto';
import { DomainError } from '../../../src/domain/errors';
import type { CreateBookingCommand } from '../../../src/domain/validation';
import {
  assertNotRefusedWithOtherRequest,
  createRequestFingerprints,
  fingerprintOf,
  idempotentRequestFingerprints,
  isSameRequest,
} from '../../../src/application/request-fingerprints';
import { createFieldCipher } from '../../../src/security/field-encryption';

const cipher = createFieldCipher({
  keys: { k1: randomBytes(32) },
  activeKeyId: 'k1',
  blindIndexKey: randomBytes(32),
});
const bookingId = '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e';
const fingerprint = (operationId: string, pathParameters: unknown, body: unknown) =>
  idempotentRequestFingerprints(cipher, operationId, pathParameters, body).fingerprint;

describe('fingerprintOf', () => {
  it('is the keyed hash of the RFC 8785 canonical JSON', () => {
    expect(fingerprintOf(cipher, { b: [1, 'x'], a: 0.5 })).toBe(cipher.blindIndex('{"a":0.5,"b":[1,"x"]}'));
  });

  it('refuses a value JSON cannot represent', () => {
    expect(() => fingerprintOf(cipher, undefined)).toThrow(TypeError);
  });
});

describe('idempotentRequestFingerprints', () => {
  it('ignores the order of object keys at every depth', () => {
    const first = fingerprint('createBooking', {}, { a: 1, b: { c: [1, 2], d: 'x' } });
    const second = fingerprint('createBooking', {}, { b: { d: 'x', c: [1, 2] }, a: 1 });
    expect(first).toBe(second);
  });

  it('tells apart bodies, array orders, path parameters and operations', () => {
    const base = fingerprint('confirmPayment', { booking_id: bookingId }, { payment_token: 'tok_visa' });
    expect(fingerprint('confirmPayment', { booking_id: bookingId }, { payment_token: 'tok_other' })).not.toBe(
      base,
    );
    expect(
      fingerprint(
        'confirmPayment',
        { booking_id: bookingId.replace('7', '8') },
        { payment_token: 'tok_visa' },
      ),
    ).not.toBe(base);
    expect(fingerprint('createBooking', { booking_id: bookingId }, { payment_token: 'tok_visa' })).not.toBe(
      base,
    );
    expect(fingerprint('x', {}, { list: [1, 2] })).not.toBe(fingerprint('x', {}, { list: [2, 1] }));
  });

  it('treats an absent body and an empty one as different requests', () => {
    expect(fingerprint('cancelBooking', {}, undefined)).not.toBe(fingerprint('cancelBooking', {}, {}));
  });

  it('reproduces the plain SHA-256 keys stored by the earlier scheme', () => {
    // Computed by the hand-written canonical JSON the keyed scheme replaced, on the same requests.
    const body = { z: 'é', a: [1, 2.5, { y: null, x: true }], é: '\u2028"', A: -0.000001 };
    expect(
      idempotentRequestFingerprints(cipher, 'createBooking', { booking_id: 'b' }, body).earlierFingerprint,
    ).toBe('866e01e73b95ed18f801a7095c335f95ffcb690cdc79b77a756b7da95e5c3e07');
    expect(idempotentRequestFingerprints(cipher, 'cancelBooking', {}, undefined).earlierFingerprint).toBe(
      '65760bdf5e78a757d915d0f2b76492786028a02587cda583fe99634d8eec0f58',
    );
  });
});

describe('createRequestFingerprints', () => {
  const command: CreateBookingCommand = {
    tripId: bookingId,
    passengers: [
      {
        firstName: 'Ana',
        lastName: 'Silva',
        email: 'ana@example.com',
        seatNumber: '1A',
        fareClass: 'STANDARD',
      },
    ],
    contactEmail: 'ana@example.com',
  };

  it('keys the canonical command, and knows the hash of its own key order the earlier scheme stored', () => {
    const fingerprints = createRequestFingerprints(cipher, command);
    expect(fingerprints.fingerprint).toBe(fingerprintOf(cipher, command));
    expect(fingerprints.earlierFingerprint).toBe(cipher.blindIndex(JSON.stringify(command)));
    expect(fingerprints.fingerprint).not.toBe(
      createHash('sha256').update(JSON.stringify(command)).digest('hex'),
    );
  });

  it('takes a refusal or memo of either scheme for the same request, and refuses another request', () => {
    const fingerprints = createRequestFingerprints(cipher, command);
    expect(isSameRequest(fingerprints.earlierFingerprint, fingerprints)).toBe(true);
    expect(() => assertNotRefusedWithOtherRequest(fingerprints.fingerprint, fingerprints)).not.toThrow();
    expect(() => assertNotRefusedWithOtherRequest(null, fingerprints)).not.toThrow();
    const other = createRequestFingerprints(cipher, { ...command, contactEmail: 'bo@example.com' });
    expect(() => assertNotRefusedWithOtherRequest(other.fingerprint, fingerprints)).toThrow(DomainError);
    expect(() => assertNotRefusedWithOtherRequest(other.earlierFingerprint, fingerprints)).toThrow(
      expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED' }) as Error,
    );
  });
});
