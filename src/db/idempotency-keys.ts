// The idempotency_keys table: a key taken by one request at a time, the id it reserves, and the answer it stored.
import type { Knex } from 'knex';
import { isPostgresError, postgresErrorCodes } from './postgres-errors';

export interface IdempotencyKeyRef {
  customerId: string;
  key: string;
  fingerprint: string;
}

export interface IdempotencyKeyRow {
  request_hash: string;
  state: 'IN_FLIGHT' | 'COMPLETED';
  response_status: number | null;
  /** Encrypted by the caller: answers name passengers. */
  response_body: string | null;
  response_headers: Record<string, string> | null;
}

const purgeBatchSize = 1000;

/**
 * Takes the key for this request and returns the id it reserves, or undefined when another request holds the
 * key or has finished with it. One statement, so two racing requests cannot both win. A take-over (the same
 * request, after its holder died or let go) keeps the reserved id; a new or expired key reserves a new one.
 */
export async function claimIdempotencyKey(
  database: Knex,
  request: IdempotencyKeyRef & { operationId: string },
  settings: { retentionHours: number; inFlightLockSeconds: number },
): Promise<string | undefined> {
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

/** Stores the request's final answer under its key, while the key is still this request's. */
export async function completeIdempotencyKey(
  database: Knex,
  request: IdempotencyKeyRef,
  answer: { status: number; sealedBody: string; headers: Record<string, string> },
): Promise<void> {
  await database('idempotency_keys')
    .where({ customer_id: request.customerId, key: request.key, request_hash: request.fingerprint })
    .where('state', 'IN_FLIGHT')
    .update({
      state: 'COMPLETED',
      response_status: answer.status,
      response_body: answer.sealedBody,
      response_headers: JSON.stringify(answer.headers),
      locked_until: null,
    });
}

/** Unlocks the key at once, keeping it tied to this request and its reserved id. */
export async function letGoIdempotencyKey(database: Knex, request: IdempotencyKeyRef): Promise<void> {
  await database('idempotency_keys')
    .where({ customer_id: request.customerId, key: request.key, request_hash: request.fingerprint })
    .where('state', 'IN_FLIGHT')
    .update({ locked_until: database.fn.now() });
}

export async function findIdempotencyKey(
  database: Knex,
  request: Pick<IdempotencyKeyRef, 'customerId' | 'key'>,
): Promise<IdempotencyKeyRow | undefined> {
  return database('idempotency_keys')
    .where({ customer_id: request.customerId, key: request.key })
    .first('request_hash', 'state', 'response_status', 'response_body', 'response_headers');
}

/** Deletes expired keys in small batches, so a purge never holds long locks. */
export async function purgeExpiredIdempotencyKeys(database: Knex): Promise<number> {
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

/** PostgreSQL's foreign-key violation, or a customer id that is not a UUID at all: no account to scope a key to. */
export function isMissingAccount(error: unknown): boolean {
  return (
    isPostgresError(error, postgresErrorCodes.foreignKeyViolation) ||
    isPostgresError(error, postgresErrorCodes.invalidTextRepresentation)
  );
}
