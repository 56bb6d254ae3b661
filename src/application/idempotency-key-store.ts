// REST's Idempotency-Key: a key reserves the id of what its request makes and keeps the request's final answer.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  findDomainError,
  idempotencyKeyInUse,
  idempotencyKeyReused,
  type DomainError,
} from '../domain/errors';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  isMissingAccount,
  letGoIdempotencyKey,
  purgeExpiredIdempotencyKeys,
  type IdempotencyKeyRow,
} from '../db/idempotency-keys';
import type { FieldCipher } from '../security/field-encryption';
import { idempotentRequestFingerprints, type RequestFingerprints } from './request-fingerprints';

/** An answer as plain data, as a front sends it and as a key stores it. */
export interface StoredAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: unknown;
}

export interface IdempotencySettings {
  /** How long a key and its answer are kept; at least 24 hours (the table's CHECK insists too). */
  retentionHours: number;
  /** How long a key stays locked by a request that never finished (a crashed process) before a retry may take it over. */
  inFlightLockSeconds: number;
}

export interface IdempotentRequest {
  customerId: string;
  key: string;
  operationId: string;
  /** The request's fingerprint (the store's `fingerprintOf`), and the one a key of the earlier scheme holds. */
  fingerprint: string;
  earlierFingerprint?: string;
  /** For problem documents of final business errors: the request path and id. */
  instance: string;
  requestId: string;
}

/** Answer headers worth replaying; the rest (request id, rate limits, dates) belong to each delivery. */
const replayedHeaders = ['content-type', 'location', 'etag'];
const inUseRetryAfterSeconds = 1;

/**
 * Business outcomes are final and replayed. Anything else (5xx, 429, still processing) may still be cured or
 * finished by a retry, which takes the key over and goes on with the same reserved id.
 */
function isFinalOutcome(error: DomainError): boolean {
  return !error.mapping.retryable && error.mapping.httpStatus < 500;
}

export function createIdempotencyKeys<Answer extends StoredAnswer>(dependencies: {
  database: Knex;
  cipher: FieldCipher;
  settings: IdempotencySettings;
  /** The front's answer to a final business refusal, stored and replayed like any answer. */
  refusalAnswer: (error: DomainError, request: IdempotentRequest) => Answer;
}) {
  const { database, cipher, settings, refusalAnswer } = dependencies;

  function replay(row: IdempotencyKeyRow): StoredAnswer {
    return {
      status: row.response_status as number,
      headers: { ...(row.response_headers ?? {}), 'idempotent-replayed': 'true' },
      body: JSON.parse(cipher.decrypt(row.response_body as string)) as unknown,
    };
  }

  async function complete(request: IdempotentRequest, answer: StoredAnswer): Promise<void> {
    const headers = Object.fromEntries(
      Object.entries(answer.headers).filter(([name]) => replayedHeaders.includes(name.toLowerCase())),
    );
    // Bookings carry names and emails, so the stored copy is encrypted like every other personal field.
    const sealedBody = cipher.encrypt(JSON.stringify(answer.body));
    await completeIdempotencyKey(database, request, { status: answer.status, sealedBody, headers });
  }

  /**
   * Runs the operation once per key: the first request runs it with the key's reserved id and stores the
   * outcome, a repeat with the same fingerprint gets that outcome again (or, when the first ended without one,
   * runs again with the same reserved id), a repeat with another fingerprint or while the first runs is refused.
   */
  async function run(
    firstRequest: IdempotentRequest,
    operation: (reservedId: string) => Promise<StoredAnswer>,
  ): Promise<StoredAnswer> {
    let request = firstRequest;
    let reservedId: string | undefined;
    // A key purged between our failed claim and the read is simply claimed again.
    for (let attempt = 0; ; attempt += 1) {
      try {
        reservedId = await claimIdempotencyKey(database, request, settings);
      } catch (error) {
        // No user row to scope the key to (a token whose subject has no account here): the operation itself
        // refuses such callers, so it runs unguarded rather than failing as a server error.
        if (isMissingAccount(error)) return operation(randomUUID());
        throw error;
      }
      if (reservedId !== undefined) break;
      const row = await findIdempotencyKey(database, request);
      if (row === undefined) {
        if (attempt < 2) continue;
        throw idempotencyKeyInUse(inUseRetryAfterSeconds);
      }
      if (row.request_hash !== request.fingerprint) {
        // A key stored by the earlier scheme goes on under the fingerprint it holds, so its SQL finds it.
        if (row.request_hash !== request.earlierFingerprint) throw idempotencyKeyReused();
        request = { ...request, fingerprint: row.request_hash };
        continue;
      }
      if (row.state === 'IN_FLIGHT') throw idempotencyKeyInUse(inUseRetryAfterSeconds);
      return replay(row);
    }

    let answer: StoredAnswer;
    try {
      answer = await operation(reservedId);
    } catch (thrown) {
      const error = findDomainError(thrown);
      if (error === undefined || !isFinalOutcome(error)) {
        // A retry may take the key over at once; it joins what this request started with the same reserved id.
        await letGoIdempotencyKey(database, request);
        throw thrown;
      }
      answer = refusalAnswer(error, request);
    }
    await complete(request, answer);
    return answer;
  }

  /** The fingerprints of a request to a key: its operation, path parameters and body, key order aside. */
  function fingerprintOf(operationId: string, pathParameters: unknown, body: unknown): RequestFingerprints {
    return idempotentRequestFingerprints(cipher, operationId, pathParameters, body);
  }

  return { run, fingerprintOf, purgeExpired: () => purgeExpiredIdempotencyKeys(database) };
}

export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>;

/** Purges expired keys now and then; the returned function stops it (call it at shutdown). */
export function schedulePurge(
  keys: { purgeExpired(): Promise<number> },
  intervalMs: number,
  onError: (error: unknown) => void,
): () => void {
  const timer = setInterval(() => {
    keys.purgeExpired().catch(onError);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
