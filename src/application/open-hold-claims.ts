// The per-customer cap on unpaid holds, claimed atomically in PostgreSQL before a booking's workflow starts.
import type { Knex } from 'knex';
import { DomainError } from '../domain/errors';

export interface OpenHoldClaims {
  /**
   * Takes one of the customer's slots for the booking, or throws RATE_LIMITED. A booking id that already has a
   * claim or a booking row (a retry of the same request) takes no second slot.
   */
  claim(customerId: string, bookingId: string): Promise<void>;
  /** The create ended without a booking: its slot is free again (the claim is kept to answer reads). */
  release(bookingId: string): Promise<void>;
  /** The customer whose create claimed this booking id, while the claim is kept; undefined otherwise. */
  claimant(bookingId: string): Promise<string | undefined>;
  /**
   * Columns for a query of the create's own about earlier creates of this booking id: `made_before`, whether one
   * got as far as a claim (a workflow may exist) or a booking row, so this one is a retry and answers what that
   * create got; `refused_request_fingerprint`, the request of one refused before it claimed anything.
   */
  earlierCreateColumns(bookingId: string): Knex.Raw[];
  /**
   * Remembers a create refused before it claimed a slot under the booking id it named (the refusal takes no slot):
   * the id named again with another request is refused, not taken for a retry. A create already remembered stays.
   */
  recordRefusal(customerId: string, bookingId: string, requestFingerprint: string): Promise<void>;
}

export interface OpenHoldClaimsDependencies {
  database: Knex;
  maximumOpenHolds: number;
  /**
   * How long a claim counts while its booking has no row yet: the hold's own length, since the seats cannot be
   * held longer than that after the claim. Once the row exists the row counts, with its own hold expiry.
   */
  claimDurationMs: number;
  now: () => Date;
}

// Advisory lock keys share one 64-bit space; the prefix keeps ours apart from any other use of it.
const lockPrefix = 'booking-hold-claims:';

/** Bookings awaiting payment plus creates still on their way to a booking row, earliest expiry first. */
const openHoldsSql = `
  SELECT expires_at FROM (
    SELECT hold_expires_at AS expires_at FROM bookings
     WHERE customer_id = :customerId AND status = 'PENDING_PAYMENT' AND hold_expires_at > :at
    UNION ALL
    SELECT claims.expires_at FROM booking_hold_claims AS claims
     WHERE claims.customer_id = :customerId AND claims.released_at IS NULL AND claims.expires_at > :at
       AND NOT EXISTS (SELECT 1 FROM bookings WHERE bookings.id = claims.booking_id)
  ) AS open_holds
  ORDER BY expires_at
  LIMIT :limit`;

/**
 * The claim, under the customer's lock: `counted` when the booking id already counts (a retry takes no second
 * slot; the customer's other expired claims are purged, its own is renewed instead), else `claimed` when the open
 * holds were below the cap (a create refused earlier under this id has its row turned into the claim), and
 * `open_holds`, the expiries the cap was reached with.
 */
const claimSql = `
  WITH purged AS (
    DELETE FROM booking_hold_claims
     WHERE customer_id = :customerId AND expires_at <= :at AND booking_id <> :bookingId
  ), earlier AS (
    SELECT EXISTS (SELECT 1 FROM booking_hold_claims
                    WHERE booking_id = :bookingId AND refused_request_fingerprint IS NULL AND expires_at > :at)
        OR EXISTS (SELECT 1 FROM bookings WHERE id = :bookingId) AS counted
  ), open_holds AS (${openHoldsSql}
  ), claimed AS (
    INSERT INTO booking_hold_claims (booking_id, customer_id, claimed_at, expires_at)
    SELECT CAST(:bookingId AS uuid), CAST(:customerId AS uuid), CAST(:at AS timestamptz), CAST(:expiresAt AS timestamptz)
     WHERE NOT (SELECT counted FROM earlier) AND (SELECT count(*) FROM open_holds) < :limit
    ON CONFLICT (booking_id) DO UPDATE
       SET claimed_at = excluded.claimed_at, expires_at = excluded.expires_at, released_at = NULL,
           refused_request_fingerprint = NULL
    RETURNING booking_id
  )
  SELECT (SELECT counted FROM earlier) AS counted, EXISTS (SELECT 1 FROM claimed) AS claimed,
         (SELECT coalesce(json_agg(expires_at ORDER BY expires_at), '[]'::json) FROM open_holds) AS open_holds`;

export function createOpenHoldClaims(dependencies: OpenHoldClaimsDependencies): OpenHoldClaims {
  const { database, maximumOpenHolds, claimDurationMs, now } = dependencies;

  function capReached(openHolds: readonly Date[], at: Date): DomainError {
    const retryAfterSeconds = Math.max(1, Math.ceil((openHolds[0].getTime() - at.getTime()) / 1000));
    return new DomainError(
      'RATE_LIMITED',
      `You already hold ${openHolds.length} unpaid bookings, the most allowed; pay for or cancel one before holding more seats`,
      { details: { retryAfterSeconds, openHolds: openHolds.length, maximumOpenHolds } },
    );
  }

  async function claim(customerId: string, bookingId: string): Promise<void> {
    await database.transaction(async (transaction) => {
      // Count and claim are one step per customer, whichever API process or front the creates come through;
      // the lock ends with the transaction, so a crashed process never keeps it.
      await transaction.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
        `${lockPrefix}${customerId}`,
      ]);
      const at = now();
      // One statement after the lock (its snapshot sees every claim committed before): purge the customer's
      // expired claims, tell a retry of a counted booking id, count the open holds, and claim below the cap.
      const outcome: { rows: { counted: boolean; claimed: boolean; open_holds: string[] }[] } =
        await transaction.raw(claimSql, {
          customerId,
          bookingId,
          at,
          expiresAt: new Date(at.getTime() + claimDurationMs),
          limit: maximumOpenHolds,
        });
      const { counted, claimed, open_holds: openHolds } = outcome.rows[0];
      if (counted || claimed) return;
      throw capReached(
        openHolds.map((expiresAt) => new Date(expiresAt)),
        at,
      );
    });
  }

  async function release(bookingId: string): Promise<void> {
    await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .whereNull('released_at')
      .update({ released_at: now() });
  }

  async function claimant(bookingId: string): Promise<string | undefined> {
    const row: { customer_id: string } | undefined = await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .first('customer_id');
    return row?.customer_id;
  }

  function earlierCreateColumns(bookingId: string): Knex.Raw[] {
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

  return { claim, release, claimant, earlierCreateColumns, recordRefusal };
}
