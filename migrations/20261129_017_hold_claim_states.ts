// A hold claim's lifecycle as one state column, moved only along the written transitions (src/domain/hold-claims.ts).
import type { Knex } from 'knex';

// Where a claim stands is one column, `state`, which existing rows get from what their timestamps mean. A trigger
// refuses any change of state that is not one of the moves listed in booking_hold_claim_moves (the moves of the
// domain's transition table; a test keeps the two equal), so no write moves a claim backwards: a released claim is
// never promised again.
//
// The three timestamps stay, written by the trigger alone from the state, because API processes of the previous
// release keep serving during a roll-out (the migration runs before the first pod is replaced): they read and
// write those columns. Their writes are turned into the move they meant, when it is allowed; a move that is not
// (their acknowledge of a released claim) leaves the claim where it was. A later migration drops the three columns
// and the translation once no such process runs.
const upSql = `
ALTER TABLE booking_hold_claims ADD COLUMN state text;
UPDATE booking_hold_claims SET state = CASE
  WHEN refused_request_fingerprint IS NOT NULL THEN 'REFUSED'
  WHEN released_at IS NOT NULL THEN 'RELEASED'
  WHEN started_at IS NOT NULL THEN 'STARTED'
  WHEN acknowledged_at IS NOT NULL THEN 'PROMISED'
  ELSE 'CLAIMED' END;
ALTER TABLE booking_hold_claims
  ALTER COLUMN state SET NOT NULL,
  ALTER COLUMN state SET DEFAULT 'CLAIMED',
  ADD CONSTRAINT booking_hold_claims_state_check
    CHECK (state IN ('REFUSED', 'CLAIMED', 'PROMISED', 'STARTED', 'RELEASED')),
  ADD CONSTRAINT booking_hold_claims_refusal_check
    CHECK ((state = 'REFUSED') = (refused_request_fingerprint IS NOT NULL));

CREATE TABLE booking_hold_claim_moves (
  from_state text NOT NULL,
  to_state text NOT NULL,
  PRIMARY KEY (from_state, to_state),
  CHECK (from_state <> to_state)
);
INSERT INTO booking_hold_claim_moves (from_state, to_state) VALUES
  ('CLAIMED', 'PROMISED'), ('CLAIMED', 'RELEASED'), ('CLAIMED', 'STARTED'),
  ('PROMISED', 'RELEASED'), ('PROMISED', 'STARTED'),
  ('REFUSED', 'CLAIMED'), ('RELEASED', 'CLAIMED'),
  ('STARTED', 'PROMISED'), ('STARTED', 'RELEASED');

CREATE FUNCTION booking_hold_claim_moves_only() RETURNS trigger
LANGUAGE plpgsql AS $function$
DECLARE
  meant text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- A refusal inserted by a process that does not know the state column.
    IF NEW.refused_request_fingerprint IS NOT NULL THEN
      NEW.state := 'REFUSED';
    END IF;
  ELSIF NEW.state = OLD.state THEN
    -- A write of the timestamps alone, by a process that does not know the state column: the move it meant.
    meant := CASE
      WHEN NEW.released_at IS NOT NULL AND OLD.released_at IS NULL THEN 'RELEASED'
      WHEN NEW.started_at IS NOT NULL AND OLD.started_at IS NULL THEN 'STARTED'
      WHEN NEW.acknowledged_at IS NOT NULL AND OLD.acknowledged_at IS NULL THEN 'PROMISED'
      ELSE OLD.state END;
    IF EXISTS (SELECT 1 FROM booking_hold_claim_moves WHERE from_state = OLD.state AND to_state = meant) THEN
      NEW.state := meant;
    END IF;
  ELSIF NOT EXISTS (SELECT 1 FROM booking_hold_claim_moves
                     WHERE from_state = OLD.state AND to_state = NEW.state) THEN
    RAISE EXCEPTION 'a hold claim cannot move from % to %', OLD.state, NEW.state
      USING ERRCODE = 'check_violation', TABLE = 'booking_hold_claims';
  END IF;
  -- The timestamps say what the state says, for the processes that still read them.
  NEW.released_at := CASE WHEN NEW.state IN ('REFUSED', 'RELEASED')
    THEN coalesce(NEW.released_at, CASE WHEN TG_OP = 'UPDATE' THEN OLD.released_at END, statement_timestamp()) END;
  NEW.acknowledged_at := CASE WHEN NEW.state IN ('PROMISED', 'STARTED')
    THEN coalesce(NEW.acknowledged_at, statement_timestamp()) END;
  NEW.started_at := CASE WHEN NEW.state = 'STARTED' THEN coalesce(NEW.started_at, statement_timestamp()) END;
  RETURN NEW;
END
$function$;
CREATE TRIGGER booking_hold_claims_moves_only BEFORE INSERT OR UPDATE ON booking_hold_claims
  FOR EACH ROW EXECUTE FUNCTION booking_hold_claim_moves_only();

DROP INDEX booking_hold_claims_unstarted_index;
CREATE INDEX booking_hold_claims_unstarted_index ON booking_hold_claims (claimed_at)
  WHERE state IN ('CLAIMED', 'PROMISED');

CREATE OR REPLACE FUNCTION claim_booking_hold(uuid, uuid, timestamptz, timestamptz, timestamptz, integer, text, text,
                                              OUT counted boolean, OUT claimed boolean, OUT open_holds json)
LANGUAGE plpgsql VOLATILE AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended($8, 0));
  WITH purged AS (
    DELETE FROM booking_hold_claims AS purge
     WHERE purge.customer_id = $1 AND purge.claimed_at <= $5 AND purge.booking_id <> $2
  ), earlier AS (
    SELECT EXISTS (SELECT 1 FROM booking_hold_claims AS claim
                    WHERE claim.booking_id = $2 AND claim.state <> 'REFUSED' AND claim.expires_at > $3)
        OR EXISTS (SELECT 1 FROM bookings WHERE bookings.id = $2) AS made
  ), holds AS (
    SELECT held.expires_at FROM (
      SELECT bookings.hold_expires_at AS expires_at FROM bookings
       WHERE bookings.customer_id = $1 AND bookings.status = 'PENDING_PAYMENT' AND bookings.hold_expires_at > $3
      UNION ALL
      SELECT claim.expires_at FROM booking_hold_claims AS claim
       WHERE claim.customer_id = $1 AND claim.state IN ('CLAIMED', 'PROMISED', 'STARTED') AND claim.expires_at > $3
         AND NOT EXISTS (SELECT 1 FROM bookings WHERE bookings.id = claim.booking_id)
    ) AS held
    ORDER BY held.expires_at
    LIMIT $6
  ), taken AS (
    -- A refused or lapsed claim of the id is taken again (the claim event); a given-out id stays promised.
    INSERT INTO booking_hold_claims AS claim (booking_id, customer_id, claimed_at, expires_at, start_request, state)
    SELECT $2, $1, $3, $4, $7, 'CLAIMED'
     WHERE NOT (SELECT made FROM earlier) AND (SELECT count(*) FROM holds) < $6
    ON CONFLICT (booking_id) DO UPDATE
       SET claimed_at = excluded.claimed_at, expires_at = excluded.expires_at,
           state = CASE WHEN claim.state IN ('PROMISED', 'STARTED') THEN 'PROMISED' ELSE 'CLAIMED' END,
           refused_request_fingerprint = NULL, start_request = excluded.start_request
    RETURNING claim.booking_id
  )
  SELECT (SELECT made FROM earlier), EXISTS (SELECT 1 FROM taken),
         (SELECT coalesce(json_agg(holds.expires_at ORDER BY holds.expires_at), '[]'::json) FROM holds)
    INTO counted, claimed, open_holds;
END
$function$;
`;

// Back to the function of migration 011 and the timestamps alone, which the trigger kept up to date.
const downSql = `
CREATE OR REPLACE FUNCTION claim_booking_hold(uuid, uuid, timestamptz, timestamptz, timestamptz, integer, text, text,
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
DROP INDEX IF EXISTS booking_hold_claims_unstarted_index;
CREATE INDEX booking_hold_claims_unstarted_index ON booking_hold_claims (claimed_at)
  WHERE released_at IS NULL AND started_at IS NULL;
DROP TRIGGER IF EXISTS booking_hold_claims_moves_only ON booking_hold_claims;
DROP FUNCTION IF EXISTS booking_hold_claim_moves_only();
DROP TABLE IF EXISTS booking_hold_claim_moves;
ALTER TABLE booking_hold_claims DROP COLUMN IF EXISTS state;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
