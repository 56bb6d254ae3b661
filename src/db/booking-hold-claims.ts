// A create's claim in PostgreSQL, written before its workflow starts: the per-customer cap on unpaid holds and the sealed start.
import type { Knex } from 'knex';
import type { Config } from '../config';
import { DomainError } from '../domain/errors';
import {
  holdClaimStatesAllowing,
  nextHoldClaimState,
  slotTakingHoldClaimStates,
  unstartedHoldClaimStates,
  type HoldClaimEvent,
  type HoldClaimState,
} from '../domain/hold-claims';

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
   * The booking id is about to be given to a client (202, BOOKING_PROCESSING), or someone other than the create (a
   * read, the reconciler) is about to start the booking: from now on the claim is a promise that the booking is
   * started, which no later error answer may drop. False when the create withdrew the claim first (an error
   * answer): nothing may be started or promised under it.
   */
  promise(bookingId: string): Promise<boolean>;
  /**
   * A create whose start failed answers an error: its slot is freed and its start dropped, unless the id was
   * promised first. Whether it was dropped.
   */
  withdraw(bookingId: string): Promise<boolean>;
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
  state: HoldClaimState;
  /** The encrypted BookingStart; null for a create refused before it claimed anything. */
  sealedStart: string | null;
  /** Takes no slot and may not be started: its create ended without a booking, or was refused. */
  released: boolean;
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
function unstartedQuery(database: Knex, claimedBefore: Date, limit: number): Knex.Raw<unknown> {
  const start = movesTo('start', 'claims.state');
  return database.raw(
    `WITH settled AS (
       UPDATE booking_hold_claims AS claims SET state = ${start.sql}
         FROM bookings
        WHERE bookings.id = claims.booking_id AND claims.state IN (${start.from.map(() => '?').join(', ')})
     )
     SELECT claims.booking_id, claims.start_request FROM booking_hold_claims AS claims
      WHERE claims.state IN (${unstartedHoldClaimStates.map(() => '?').join(', ')})
        AND claims.start_request IS NOT NULL AND claims.claimed_at < ?
        AND NOT EXISTS (SELECT 1 FROM bookings WHERE bookings.id = claims.booking_id)
      ORDER BY claims.claimed_at
      LIMIT ?`,
    [...start.bindings, ...start.from, ...unstartedHoldClaimStates, claimedBefore, limit],
  );
}

/**
 * The new state of a claim that `event` moves, as a CASE over its state, and the states it is allowed from: the
 * domain's transition table, the only moves these statements make (the table's trigger refuses any other).
 */
function movesTo(
  event: HoldClaimEvent,
  column = 'state',
): { sql: string; bindings: string[]; from: HoldClaimState[] } {
  const from = holdClaimStatesAllowing(event);
  return {
    sql: `CASE ${column} ${from.map(() => 'WHEN ? THEN ?').join(' ')} END`,
    bindings: from.flatMap((state) => [state, nextHoldClaimState(state, event) as HoldClaimState]),
    from,
  };
}

/**
 * Columns for a create's query about earlier creates of this booking id: `made_before`, whether one got as far as
 * a claim (a workflow may exist) or a booking row; `refused_request_fingerprint`, the request of one refused
 * before it claimed anything.
 */
export function earlierCreateColumns(database: Knex, bookingId: string): Knex.Raw[] {
  return [
    database.raw(
      `(EXISTS (SELECT 1 FROM booking_hold_claims
                 WHERE booking_id = ? AND state <> 'REFUSED')
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

  /** Moves the claim by `event` when its state allows it; whether it moved (a move to the same state counts). */
  async function move(bookingId: string, event: HoldClaimEvent): Promise<boolean> {
    const { sql, bindings, from } = movesTo(event);
    const moved = await database('booking_hold_claims')
      .where('booking_id', bookingId)
      .whereIn('state', from)
      .update({ state: database.raw(sql, bindings) });
    return moved > 0;
  }

  async function find(bookingId: string): Promise<HoldClaim | undefined> {
    const row: { customer_id: string; state: HoldClaimState; start_request: string | null } | undefined =
      await database('booking_hold_claims')
        .where('booking_id', bookingId)
        .first('customer_id', 'state', 'start_request');
    if (row === undefined) return undefined;
    return {
      customerId: row.customer_id,
      state: row.state,
      sealedStart: row.start_request,
      released: !slotTakingHoldClaimStates.includes(row.state),
    };
  }

  async function unstarted(claimedBefore: Date, limit: number) {
    const result = (await unstartedQuery(database, claimedBefore, limit)) as {
      rows: { booking_id: string; start_request: string }[];
    };
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
        state: nextHoldClaimState('new', 'refuse'),
        refused_request_fingerprint: requestFingerprint,
      })
      .onConflict('booking_id')
      .ignore();
  }

  return {
    claim,
    release: async (bookingId) => {
      await move(bookingId, 'release');
    },
    promise: (bookingId) => move(bookingId, 'promise'),
    withdraw: (bookingId) => move(bookingId, 'withdraw'),
    markStarted: async (bookingId) => {
      await move(bookingId, 'start');
    },
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
