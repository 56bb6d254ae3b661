// Admission of repeated requests, the one mechanism both fronts use: a request names what it makes once, a repeat
// joins it or hears its answer, the same name with another request is refused (docs/design.md, Repeated requests).
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { v5 as uuidFromName } from 'uuid';
import {
  DomainError,
  findDomainError,
  idempotencyKeyInUse,
  idempotencyKeyReused,
  seatUnavailable,
} from '../domain/errors';
import type { CreateBookingCommand } from '../domain/validation';
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

// ---- REST: an Idempotency-Key reserves the id of what the request makes and keeps its final answer ----

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
  fingerprint: string;
  /** For problem documents of final business errors: the request path and id. */
  instance: string;
  requestId: string;
}

/** Answer headers worth replaying; the rest (request id, rate limits, dates) belong to each delivery. */
const replayedHeaders = ['content-type', 'location', 'etag'];
const inUseRetryAfterSeconds = 1;

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

/** What makes two requests "the same" for a key: the operation, its path parameters and its body. */
export function requestFingerprint(operationId: string, pathParameters: unknown, body: unknown): string {
  return createHash('sha256').update(canonicalJson({ operationId, pathParameters, body })).digest('hex');
}

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
    request: IdempotentRequest,
    operation: (reservedId: string) => Promise<StoredAnswer>,
  ): Promise<StoredAnswer> {
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
      if (row.request_hash !== request.fingerprint) throw idempotencyKeyReused();
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

  return { run, purgeExpired: () => purgeExpiredIdempotencyKeys(database) };
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

// ---- gRPC: nothing stored; the id is a name-based UUID of the caller and its request_id ----

// Namespaces of the name-based ids; changing one would make retries in flight create a second booking or payment.
const bookingIdNamespace = 'b3f0c0de-5a7e-4b1e-9c2a-6d8e4f1a2b3c';
const paymentAttemptIdNamespace = '8b2e0e0c-5e65-423e-b320-d21b53ce677a';

/** The booking a create with this request id makes: the same caller and request id always name the same one. */
export function bookingIdForRequest(caller: { readonly userId: string }, requestId: string): string {
  return uuidFromName(`${caller.userId.toLowerCase()}\n${requestId}`, bookingIdNamespace);
}

const commandIdNamespace = '4f6d3a1e-2c7b-4e58-9a0d-1b5c8e7f2a96';

/** The change or cancellation a call with this request id sends, the same for every retry of it. */
export function commandIdForRequest(caller: { readonly userId: string }, requestId: string): string {
  return uuidFromName(`${caller.userId.toLowerCase()}\n${requestId}`, commandIdNamespace);
}

/** The payment attempt a ConfirmPayment with this request id makes, the same for every retry of it. */
export function paymentAttemptIdForRequest(caller: { readonly userId: string }, requestId: string): string {
  return uuidFromName(`${caller.userId.toLowerCase()}\n${requestId}`, paymentAttemptIdNamespace);
}

// ---- Both fronts: a booking id names one create request ----

/**
 * A keyed hash (the cipher's blind index) of the validated create: stored with the claim's start, sent with the
 * create update, whose validator refuses another request under the same booking id (IDEMPOTENCY_KEY_REUSED).
 */
export function createRequestFingerprint(cipher: FieldCipher, command: CreateBookingCommand): string {
  return cipher.blindIndex(JSON.stringify(command));
}

/** A create refused before it claimed a slot is remembered; the same id with another request is refused. */
export function assertNotRefusedWithOtherRequest(
  refusedFingerprint: string | null,
  fingerprint: string,
): void {
  if (refusedFingerprint !== null && refusedFingerprint !== fingerprint) throw idempotencyKeyReused();
}

// ---- Within one API process: a burst for one seat starts one workflow, not one per request ----

export type SeatPassage =
  | {
      entered: true;
      /** Call once the create's seats are held or its create has ended; idempotent. */ leave(): void;
    }
  | {
      entered: false;
      /** The requested seats another booking's create is reserving, sorted. */ reservedByOthers: string[];
    };

export interface SeatsInFlight {
  /**
   * Marks the seats as being reserved by the booking, unless a create of another booking in this process is
   * reserving any of them on a leg of `legs` (the whole trip when absent). A create of the same booking (a retry)
   * enters alongside the first; creates of one seat on adjacent segments enter side by side.
   */
  enter(
    tripId: string,
    seatNumbers: readonly string[],
    bookingId: string,
    legs?: readonly number[],
  ): SeatPassage;
}

/** SEAT_UNAVAILABLE for seats another booking's create is reserving at this moment. */
export function seatsBeingReserved(seatNumbers: readonly string[]): DomainError {
  return seatUnavailable(
    seatNumbers,
    `another booking is reserving ${seatNumbers.length === 1 ? 'it' : 'them'}`,
  );
}

export function createSeatsInFlight(): SeatsInFlight {
  /** Per trip, seat and leg: the booking reserving it, and how many of its creates entered and have not left. */
  const reservations = new Map<string, { bookingId: string; creates: number }>();
  const keyOf = (tripId: string, seatNumber: string, leg: number | undefined) =>
    leg === undefined ? `${tripId}/${seatNumber}` : `${tripId}/${seatNumber}/${leg}`;

  function enter(
    tripId: string,
    seatNumbers: readonly string[],
    bookingId: string,
    legs?: readonly number[],
  ): SeatPassage {
    const seatKeys = seatNumbers.map((seatNumber) =>
      (legs ?? [undefined]).map((leg) => keyOf(tripId, seatNumber, leg)),
    );
    const keys = seatKeys.flat();
    const reservedByOthers = seatNumbers.filter((_, index) =>
      seatKeys[index].some((key) => {
        const reservation = reservations.get(key);
        return reservation !== undefined && reservation.bookingId !== bookingId;
      }),
    );
    if (reservedByOthers.length > 0) return { entered: false, reservedByOthers: reservedByOthers.sort() };
    for (const key of keys) {
      const reservation = reservations.get(key);
      if (reservation === undefined) reservations.set(key, { bookingId, creates: 1 });
      else reservation.creates += 1;
    }
    let left = false;
    return {
      entered: true,
      leave() {
        if (left) return;
        left = true;
        for (const key of keys) {
          const reservation = reservations.get(key);
          if (reservation === undefined) continue;
          reservation.creates -= 1;
          if (reservation.creates === 0) reservations.delete(key);
        }
      },
    };
  }

  return { enter };
}
