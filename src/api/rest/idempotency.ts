// Idempotency-Key in PostgreSQL, REST's one idempotency mechanism: reserves the id of what a request makes,
// replays a finished request's response, refuses reuse and parallel runs.
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { DomainError, findDomainError, idempotencyKeyInUse, idempotencyKeyReused } from '../../domain/errors';
import type { FieldCipher } from '../../security/field-encryption';
import { problemResponse } from './problem-details';
import type { RestResponse } from './responses';

export interface IdempotencySettings {
  /** How long a key and its response are kept; at least 24 hours (the table's CHECK insists too). */
  retentionHours: number;
  /** How long a key stays locked by a request that never finished (a crashed process) before a retry may take it over. */
  inFlightLockSeconds: number;
}

/** Response headers worth replaying; the rest (request id, rate limits, dates) belong to each delivery. */
const replayedHeaders = ['content-type', 'location', 'etag'];
const purgeBatchSize = 1000;
const inUseRetryAfterSeconds = 1;

interface KeyRow {
  request_hash: string;
  state: 'IN_FLIGHT' | 'COMPLETED';
  response_status: number | null;
  response_body: string | null;
  response_headers: Record<string, string> | null;
}

/** JSON with object keys sorted, so the same body hashes the same whatever the client's key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two requests "the same": the operation, its path parameters and its body. */
export function requestFingerprint(operationId: string, pathParameters: unknown, body: unknown): string {
  return createHash('sha256').update(canonicalJson({ operationId, pathParameters, body })).digest('hex');
}

/** PostgreSQL's foreign-key violation, or a customer id that is not a UUID at all. */
function isMissingAccount(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23503' || code === '22P02';
}

/**
 * Business outcomes are final and replayed. Anything else (5xx, 429, still processing) may still be cured or
 * finished by a retry, which takes the key over and goes on with the same reserved id.
 */
function isFinalOutcome(error: DomainError): boolean {
  return !error.mapping.retryable && error.mapping.httpStatus < 500;
}

export interface IdempotentRequest {
  customerId: string;
  key: string;
  operationId: string;
  fingerprint: string;
  /** For problem documents of final business errors: the request path and id. */
  instance: string;
  requestId: string;
}

export function createIdempotencyStore(dependencies: {
  database: Knex;
  cipher: FieldCipher;
  settings: IdempotencySettings;
}) {
  const { database, cipher, settings } = dependencies;

  /**
   * Takes the key for this request and returns the id it reserves, or undefined when another request holds the
   * key or has finished with it. One statement, so two racing requests cannot both win. A take-over (the same
   * request, after its holder died or let go) keeps the reserved id; a new or expired key reserves a new one.
   */
  async function claim(request: IdempotentRequest): Promise<string | undefined> {
    const result = await database.raw<{ rows: { reserved_id: string }[] }>(
      `INSERT INTO idempotency_keys AS existing
              (customer_id, key, operation, request_hash, state, created_at, expires_at, locked_until, reserved_id)
       VALUES (?, ?, ?, ?, 'IN_FLIGHT', now(), now() + make_interval(hours => ?), now() + make_interval(secs => ?),
               gen_random_uuid())
       ON CONFLICT (customer_id, key) DO UPDATE
          SET operation = excluded.operation, request_hash = excluded.request_hash, state = 'IN_FLIGHT',
              response_status = NULL, response_body = NULL, response_headers = NULL,
              created_at = excluded.created_at, expires_at = excluded.expires_at,
              locked_until = excluded.locked_until,
              reserved_id = CASE WHEN existing.expires_at <= now() THEN excluded.reserved_id
                                 ELSE existing.reserved_id END
        WHERE existing.expires_at <= now()
           OR (existing.state = 'IN_FLIGHT' AND existing.locked_until <= now()
               AND existing.request_hash = excluded.request_hash)
       RETURNING reserved_id`,
      [
        request.customerId,
        request.key,
        request.operationId,
        request.fingerprint,
        settings.retentionHours,
        settings.inFlightLockSeconds,
      ],
    );
    return result.rows[0]?.reserved_id;
  }

  async function complete(request: IdempotentRequest, response: RestResponse): Promise<void> {
    const headers = Object.fromEntries(
      Object.entries(response.headers).filter(([name]) => replayedHeaders.includes(name.toLowerCase())),
    );
    await database('idempotency_keys')
      .where({ customer_id: request.customerId, key: request.key, request_hash: request.fingerprint })
      .where('state', 'IN_FLIGHT')
      .update({
        state: 'COMPLETED',
        response_status: response.status,
        // Bookings carry names and emails, so the stored copy is encrypted like every other personal field.
        response_body: cipher.encrypt(JSON.stringify(response.body)),
        response_headers: JSON.stringify(headers),
        locked_until: null,
      });
  }

  /**
   * Lets a retry take the key over at once. The key stays tied to this request and its reserved id: what the
   * request started (a booking still being made, a workflow start whose answer was lost) is what the retry joins.
   */
  async function letGo(request: IdempotentRequest): Promise<void> {
    await database('idempotency_keys')
      .where({ customer_id: request.customerId, key: request.key, request_hash: request.fingerprint })
      .where('state', 'IN_FLIGHT')
      .update({ locked_until: database.fn.now() });
  }

  async function existing(request: IdempotentRequest): Promise<KeyRow | undefined> {
    return database('idempotency_keys')
      .where({ customer_id: request.customerId, key: request.key })
      .first('request_hash', 'state', 'response_status', 'response_body', 'response_headers');
  }

  function replay(row: KeyRow): RestResponse {
    return {
      status: row.response_status as number,
      headers: { ...(row.response_headers ?? {}), 'idempotent-replayed': 'true' },
      body: JSON.parse(cipher.decrypt(row.response_body as string)) as unknown,
    };
  }

  /**
   * Runs the operation once per key: the first request runs it with the key's reserved id and stores the
   * outcome, a repeat with the same fingerprint gets that outcome again (or, when the first ended without one,
   * runs again with the same reserved id), a repeat with another fingerprint or while the first runs is refused.
   */
  async function run(
    request: IdempotentRequest,
    operation: (reservedId: string) => Promise<RestResponse>,
  ): Promise<RestResponse> {
    let reservedId: string | undefined;
    // A key purged between our failed claim and the read is simply claimed again.
    for (let attempt = 0; ; attempt += 1) {
      try {
        reservedId = await claim(request);
      } catch (error) {
        // No user row to scope the key to (a token whose subject has no account here): the operation itself
        // refuses such callers, so it runs unguarded rather than failing as a server error.
        if (isMissingAccount(error)) return operation(randomUUID());
        throw error;
      }
      if (reservedId !== undefined) break;
      const row = await existing(request);
      if (row === undefined) {
        if (attempt < 2) continue;
        throw idempotencyKeyInUse(inUseRetryAfterSeconds);
      }
      if (row.request_hash !== request.fingerprint) throw idempotencyKeyReused();
      if (row.state === 'IN_FLIGHT') throw idempotencyKeyInUse(inUseRetryAfterSeconds);
      return replay(row);
    }

    let response: RestResponse;
    try {
      response = await operation(reservedId);
    } catch (thrown) {
      const error = findDomainError(thrown);
      if (error === undefined || !isFinalOutcome(error)) {
        await letGo(request);
        throw thrown;
      }
      response = problemResponse(error, request.instance, request.requestId);
    }
    await complete(request, response);
    return response;
  }

  /** Deletes expired keys in small batches, so a purge never holds long locks. */
  async function purgeExpired(): Promise<number> {
    let purged = 0;
    for (;;) {
      const result = await database.raw<{ rowCount: number }>(
        `DELETE FROM idempotency_keys WHERE ctid IN (
           SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT ${purgeBatchSize})`,
      );
      const count = result.rowCount;
      purged += count;
      if (count < purgeBatchSize) return purged;
    }
  }

  return { run, purgeExpired };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;

/** Purges expired keys now and then; the returned function stops it (call it at shutdown). */
export function schedulePurge(
  store: IdempotencyStore,
  intervalMs: number,
  onError: (error: unknown) => void,
): () => void {
  const timer = setInterval(() => {
    store.purgeExpired().catch(onError);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
