// What makes two requests "the same": one fingerprint scheme, a keyed hash of the request's RFC 8785 canonical JSON.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { idempotencyKeyReused } from '../domain/errors';
import type { CreateBookingCommand } from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';

/**
 * The fingerprint of a request: the cipher's blind index (HMAC-SHA256) of its canonical JSON, so the same request
 * has the same fingerprint whatever its key order, and none reveals what it was made of.
 */
export function fingerprintOf(cipher: FieldCipher, request: unknown): string {
  const canonical = canonicalize(request);
  if (canonical === undefined) throw new TypeError('a request fingerprint needs a JSON value');
  return cipher.blindIndex(canonical);
}

/** A request's fingerprint, and the one a store may hold for it from the scheme used before (docs/design.md). */
export interface RequestFingerprints {
  fingerprint: string;
  earlierFingerprint: string;
}

/** What makes two requests "the same" for an Idempotency-Key: the operation, its path parameters and its body. */
export function idempotentRequestFingerprints(
  cipher: FieldCipher,
  operationId: string,
  pathParameters: unknown,
  body: unknown,
): RequestFingerprints {
  const request = { operationId, pathParameters, body };
  return {
    fingerprint: fingerprintOf(cipher, request),
    // Keys stored before the keyed scheme hold a plain SHA-256 of the same canonical JSON.
    earlierFingerprint: createHash('sha256')
      .update(canonicalize(request) ?? '')
      .digest('hex'),
  };
}

/**
 * The validated create's fingerprint: stored with the claim's start, set as the workflow's memo and sent with the
 * create update, whose validator refuses another request under the same booking id (IDEMPOTENCY_KEY_REUSED).
 */
export function createRequestFingerprints(
  cipher: FieldCipher,
  command: CreateBookingCommand,
): RequestFingerprints {
  return {
    fingerprint: fingerprintOf(cipher, command),
    // Workflows and claims made before the canonical form hold the hash of the command's own key order.
    earlierFingerprint: cipher.blindIndex(JSON.stringify(command)),
  };
}

/** Whether a stored fingerprint names this request, under either scheme. */
export function isSameRequest(stored: string, fingerprints: RequestFingerprints): boolean {
  return stored === fingerprints.fingerprint || stored === fingerprints.earlierFingerprint;
}

/** A create refused before it claimed a slot is remembered; the same id with another request is refused. */
export function assertNotRefusedWithOtherRequest(
  refusedFingerprint: string | null,
  fingerprints: RequestFingerprints,
): void {
  if (refusedFingerprint !== null && !isSameRequest(refusedFingerprint, fingerprints)) {
    throw idempotencyKeyReused();
  }
}
