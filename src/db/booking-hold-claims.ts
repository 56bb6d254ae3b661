// A create's claim in PostgreSQL, written before its workflow starts: the per-customer cap on unpaid holds and the sealed start.
import type { Knex } from 'knex';
import type { Config } from '../config';
import { DomainError } from '../domain/errors';

export interface OpenHoldClaims {
  /**
   * Takes one of the customer's slots for the booking and stores its sealed workflow start, or throws
   * RATE_LIMITED. A booking id that already has a claim or a booking row (a retry of the same request) takes no
   * second slot and keeps the start stored first.
   */
  claim(customerId: string, bookingId: string, sealedStart: string): Promise<void>;
  /** The create ended without a booking: its slot is free again (the claim is kept to answer reads). */
  release(bookingId: string): Promise<void>;
  /**
   * A client is about to be given the booking id (202, BOOKING_PROCESSING): from now on the claim is a promise that
   * the booking is started, which no later error answer for the same id may drop.
   */
  acknowledge(bookingId: string): Promise<void>;
  /**
   * Someone other than the create is about to start the booking (a read, the reconciler): the claim becomes a
   * promise as for `acknowledge`, unless the create dropped it meanwhile with an error answer. Whether it did.
   */
  promiseUnlessReleased(bookingId: string): Promise<boolean>;
  /**
   * A create whose start failed answers an error: its slot is freed and its start dropped, unless an earlier
   * answer gave the booking id to a client. Whether it was dropped.
   */
  releaseUnlessAcknowledged(bookingId: string): Promise<boolean>;
  /** A workflow exists for the booking: nobody needs to start it again. */
  markStarted(bookingId: string): Promise<void>;
  /** The claim of this booking id, while it is kept; undefined otherwise. */
  find(bookingId: string): Promise<HoldClaim | undefined>;
  /**
   * Claims older than `claimedBefore` whose booking has no row, and that nobody released or saw started: starts
   * that may have been lost. Claims whose booking row now exists are marked started on the way.
   */
  unstarted(claimedBefore: Date, limit: number): Promise<{ bookingId: string; sealedStart: string }[]>;
  /**
   * Remembers a create refused before it claimed a slot under the booking id it named (the refusal takes no slot):
   * the id named again with another request is refused, not taken for a retry. A create already remembered stays.
   */
  recordRefusal(customerId: string, bookingId: string, requestFingerprint: string): Promise<void>;
}

export interface HoldClaim {
  customerId: string;
  /** The encrypted BookingStart; null for a create refused before it claimed anything. */
  sealedStart: string | null;
  released: boolean;
  acknowledged: boolean;
}

export interface OpenHoldClaimsDependencies {
  database: Knex;
  maximumOpenHolds: number;
  /**
   * How long a claim counts while its booking has no row yet: the hold's own length, since the seats cannot be
   * held longer than that after the claim. Once the row exists the row counts, with its own hold expiry.
   */
  claimDurationMs: number;
  /** How long a claim is kept to answer reads of its booking id: as long as idempotency keys are. */
  keepForMs: number;
  now: () => Date;
}

// Advisory lock keys share one 64-bit space; the prefix keeps ours apart from any other use of it.
const lockPrefix = 'booking-hold-claims:';

/**
 * Marks the claims whose booking row exists as started (the create went through), then lists the oldest claims
 * still without a row that nobody released or saw started. Both read one snapshot: a claim marked here is not
 * listed, since its row exists.
 */
const unstartedSql = `
  WITH settled AS (
    UPDATE booking_hold_claims AS claims SET started_at = :at
      FROM bookings
     WHERE bookings.id = claims.booking_id AND claims.released_at IS NULL AND claims.started_at IS NULL
  )
  SELECT claims.booking_id, claims.start_request FROM booking_hold_claims AS claims
   WHERE claims.released_at IS NULL AND claims.started_at IS NULL AND claims.start_request IS NOT NULL
     AND claims.claimed_at < :claimedBefore
     AND NOT EXISTS (SELECT 1 FROM bookings WHERE bookings.id = claims.booking_id)
   ORDER BY claims.claimed_at
   LIMIT :limit`;

/**
 * Columns for a create's query about earlier creates of this booking id: `made_before`, whether one got as far as
 * a claim (a workflow may exist) or a booking row; `refused_request_fingerprint`, the request of one refused
 * before it claimed anything.
 */
export function earlierCreateColumns(database: Knex, bookingId: string): Knex.Raw[] {
  return [
    database.raw(
      `(EXISTS (SELECT 1 FROM booking_hold_claims
                 WHERE booking_id = ? AND refused_request_fingerprint IS NULL)
          OR EXISTS (SELECT 1 FROM bookings WHERE id = ?)) AS made_before`,
      [bookingId, bookingId],
    ),
    database.raw(
      `(SELECT refused_request_fingerprint FROM booking_hold_claims WHERE booking_id = ?)
         AS refused_request_fingerprint`,
      [bookingId],
    ),
  ];
}

export function createOpenHoldClaims(dependencies: OpenHoldClaimsDependencies): OpenHoldClaims {
  const { database, maximumOpenHolds, claimDurationMs, keepForMs, now } = dependencies;

  function capReached(openHolds: readonly Date[], at: Date): DomainError {
    const retryAfterSeconds = Math.max(1, Math.ceil((openHolds[0].getTime() - at.getTime()) / 1000));
    return new DomainError(
      'RATE_LIMITED',
      `You already hold ${openHolds.length} unpaid bookings, the most allowed; pay for or cancel one before holding more seats`,
      { details: { retryAfterSeconds, openHolds: openHolds.length, maximumOpenHolds } },
    );
  }

  async function claim(customerId: string, bookingId: string, sealedStart: string): Promise<void> {
    const at = now();
    // One call (the claim_booking_hold function, migrations/): under the customer's lock, whichever API process or front the creates
    // come through, purge the customer's expired claims, tell a retry of a counted booking id (it takes no second
    // slot and keeps the start stored first), count the open holds, and claim below the cap.
    const outcome: { rows: { counted: boolean; claimed: boolean; open_holds: string[] }[] } =
      await database.raw(
        'SELECT counted, claimed, open_holds FROM claim_booking_hold(?, ?, ?, ?, ?, ?, ?, ?)',
        [
          customerId,
          bookingId,
          at,
          new Date(at.getTime() + claimDurationMs),
          new Date(at.getTime() - keepForMs),
          maximumOpenHolds,
          sealedStart,
          `${lockPrefix}${customerId}`,
        ],
      );
    const { counted, claimed, open_holds: openHolds } = outcome.rows[0];
    if (counted || claimed) return;
    throw capReached(
      openHolds.map((expiresAt) => new Date(expiresAt)),
      at,
    );
  }

  async function release(bookingId: string): Promise<void> {
    await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .whereNull('released_at')
      .update({ released_at: now() });
  }

  async function acknowledge(bookingId: string): Promise<void> {
    // A concurrent create of the same id may have just dropped the claim on an error of its own; this answer
    // names the booking, so the claim is armed again and its start goes on.
    await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .update({ acknowledged_at: database.raw('coalesce(acknowledged_at, ?)', [now()]), released_at: null });
  }

  async function promiseUnlessReleased(bookingId: string): Promise<boolean> {
    const promised = await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .whereNull('released_at')
      .update({ acknowledged_at: database.raw('coalesce(acknowledged_at, ?)', [now()]) });
    return promised > 0;
  }

  async function releaseUnlessAcknowledged(bookingId: string): Promise<boolean> {
    const released = await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .whereNull('acknowledged_at')
      .update({ released_at: database.raw('coalesce(released_at, ?)', [now()]) });
    return released > 0;
  }

  async function markStarted(bookingId: string): Promise<void> {
    await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .whereNull('started_at')
      .update({ started_at: now() });
  }

  async function find(bookingId: string): Promise<HoldClaim | undefined> {
    const row:
      | {
          customer_id: string;
          start_request: string | null;
          released_at: Date | null;
          acknowledged_at: Date | null;
        }
      | undefined = await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .first('customer_id', 'start_request', 'released_at', 'acknowledged_at');
    if (row === undefined) return undefined;
    return {
      customerId: row.customer_id,
      sealedStart: row.start_request,
      released: row.released_at !== null,
      acknowledged: row.acknowledged_at !== null,
    };
  }

  async function unstarted(claimedBefore: Date, limit: number) {
    const result: { rows: { booking_id: string; start_request: string }[] } = await database.raw(
      unstartedSql,
      {
        at: now(),
        claimedBefore,
        limit,
      },
    );
    return result.rows.map((row) => ({ bookingId: row.booking_id, sealedStart: row.start_request }));
  }

  async function recordRefusal(customerId: string, bookingId: string, requestFingerprint: string) {
    const at = now();
    await database('booking_hold_claims')
      .insert({
        booking_id: bookingId,
        customer_id: customerId,
        claimed_at: at,
        expires_at: new Date(at.getTime() + claimDurationMs),
        released_at: at,
        refused_request_fingerprint: requestFingerprint,
      })
      .onConflict('booking_id')
      .ignore();
  }

  return {
    claim,
    release,
    acknowledge,
    promiseUnlessReleased,
    releaseUnlessAcknowledged,
    markStarted,
    find,
    unstarted,
    recordRefusal,
  };
}

/** The claims as configured: the hold's length (tests may shorten it) and the idempotency keys' retention. */
export function openHoldClaimsFromConfig(
  config: Pick<Config, 'booking' | 'idempotency'>,
  database: Knex,
  options: { holdDurationMs?: number; now: () => Date },
): OpenHoldClaims {
  return createOpenHoldClaims({
    database,
    maximumOpenHolds: config.booking.maxOpenHoldsPerCustomer,
    claimDurationMs: options.holdDurationMs ?? config.booking.holdDurationSeconds * 1000,
    keepForMs: config.idempotency.retentionHours * 3600 * 1000,
    now: options.now,
  });
}
