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
      await transaction('booking_hold_claims')
        .where('customer_id', customerId)
        .where('expires_at', '<=', at)
        .delete();
      const counted: { rows: { counted: boolean }[] } = await transaction.raw(
        `SELECT EXISTS (SELECT 1 FROM booking_hold_claims
                         WHERE booking_id = :bookingId AND refused_request_fingerprint IS NULL)
             OR EXISTS (SELECT 1 FROM bookings WHERE id = :bookingId) AS counted`,
        { bookingId },
      );
      if (counted.rows[0].counted) return;
      const openHolds: { rows: { expires_at: Date }[] } = await transaction.raw(openHoldsSql, {
        customerId,
        at,
        limit: maximumOpenHolds,
      });
      if (openHolds.rows.length >= maximumOpenHolds) {
        throw capReached(
          openHolds.rows.map((row) => row.expires_at),
          at,
        );
      }
      // A retry of a create refused earlier (its seat is free now) turns the refusal's row into its claim.
      await transaction('booking_hold_claims')
        .insert({
          booking_id: bookingId,
          customer_id: customerId,
          claimed_at: at,
          expires_at: new Date(at.getTime() + claimDurationMs),
        })
        .onConflict('booking_id')
        .merge({
          claimed_at: at,
          expires_at: new Date(at.getTime() + claimDurationMs),
          released_at: null,
          refused_request_fingerprint: null,
        });
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
