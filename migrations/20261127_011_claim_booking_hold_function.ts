// A create's hold-slot claim as one call: the customer's lock, then the count and the claim, in one round trip.
import type { Knex } from 'knex';

// The claim needs a statement that starts after the per-customer lock is granted, so its snapshot sees every claim
// committed before; a plpgsql function takes a fresh snapshot for each statement it runs, so lock and claim fit in
// one call (its own transaction) instead of BEGIN, lock, claim, COMMIT. The lock key is the caller's, so API
// processes that still claim in their own transaction exclude each other with this one.
//
// $1 customer, $2 booking, $3 the claim's time, $4 when it stops counting, $5 the customer's claims older than this
// are purged (not this booking id's), $6 the open-hold cap, $7 the sealed start, $8 the advisory lock's key.
const upSql = `
CREATE FUNCTION claim_booking_hold(uuid, uuid, timestamptz, timestamptz, timestamptz, integer, text, text,
                                   OUT counted boolean, OUT claimed boolean, OUT open_holds json)
LANGUAGE plpgsql VOLATILE AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended($8, 0));
  WITH purged AS (
    DELETE FROM booking_hold_claims AS purge
     WHERE purge.customer_id = $1 AND purge.claimed_at <= $5 AND purge.booking_id <> $2
  ), earlier AS (
    SELECT EXISTS (SELECT 1 FROM booking_hold_claims AS claim
                    WHERE claim.booking_id = $2 AND claim.refused_request_fingerprint IS NULL
                      AND claim.expires_at > $3)
        OR EXISTS (SELECT 1 FROM bookings WHERE bookings.id = $2) AS made
  ), holds AS (
    SELECT held.expires_at FROM (
      SELECT bookings.hold_expires_at AS expires_at FROM bookings
       WHERE bookings.customer_id = $1 AND bookings.status = 'PENDING_PAYMENT' AND bookings.hold_expires_at > $3
      UNION ALL
      SELECT claim.expires_at FROM booking_hold_claims AS claim
       WHERE claim.customer_id = $1 AND claim.released_at IS NULL AND claim.expires_at > $3
         AND NOT EXISTS (SELECT 1 FROM bookings WHERE bookings.id = claim.booking_id)
    ) AS held
    ORDER BY held.expires_at
    LIMIT $6
  ), taken AS (
    INSERT INTO booking_hold_claims AS claim (booking_id, customer_id, claimed_at, expires_at, start_request)
    SELECT $2, $1, $3, $4, $7
     WHERE NOT (SELECT made FROM earlier) AND (SELECT count(*) FROM holds) < $6
    ON CONFLICT (booking_id) DO UPDATE
       SET claimed_at = excluded.claimed_at, expires_at = excluded.expires_at, released_at = NULL,
           refused_request_fingerprint = NULL, start_request = excluded.start_request, started_at = NULL
    RETURNING claim.booking_id
  )
  SELECT (SELECT made FROM earlier), EXISTS (SELECT 1 FROM taken),
         (SELECT coalesce(json_agg(holds.expires_at ORDER BY holds.expires_at), '[]'::json) FROM holds)
    INTO counted, claimed, open_holds;
END
$function$;
`;

const downSql = `
DROP FUNCTION IF EXISTS claim_booking_hold(uuid, uuid, timestamptz, timestamptz, timestamptz, integer, text, text);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
