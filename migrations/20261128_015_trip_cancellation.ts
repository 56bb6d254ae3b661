// Trip cancellation: when and why a trip was cancelled, and no seat held or booked on a cancelled trip.
import type { Knex } from 'knex';

// Every hold (insert) and every confirmation (HELD → BOOKED) of a seat takes the trip row FOR SHARE before it
// looks at the trip's status. The cancel's UPDATE of the row conflicts with that lock: a hold whose transaction
// locked the row first commits before the cancel does (so the scan that runs after the cancel commits finds its
// booking), and one that comes later waits for the cancel and reads CANCELLED (READ COMMITTED row locks read the
// newest row version). The seat-allocations foreign key's FOR KEY SHARE does not conflict with a status change,
// hence the explicit lock.
const upSql = `
ALTER TABLE trips
  ADD COLUMN cancelled_at timestamptz,
  ADD COLUMN cancellation_reason text;

CREATE FUNCTION seat_allocations_refuse_cancelled_trip() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  trip_status text;
BEGIN
  SELECT status INTO trip_status FROM trips WHERE id = NEW.trip_id FOR SHARE;
  IF trip_status = 'CANCELLED' THEN
    RAISE EXCEPTION 'trip % was cancelled', NEW.trip_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'seat_allocations_trip_not_cancelled';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER seat_allocations_refuse_cancelled_trip_on_hold
  BEFORE INSERT ON seat_allocations
  FOR EACH ROW WHEN (NEW.state IN ('HELD', 'BOOKED'))
  EXECUTE FUNCTION seat_allocations_refuse_cancelled_trip();

CREATE TRIGGER seat_allocations_refuse_cancelled_trip_on_booking
  BEFORE UPDATE OF state ON seat_allocations
  FOR EACH ROW WHEN (OLD.state = 'HELD' AND NEW.state = 'BOOKED')
  EXECUTE FUNCTION seat_allocations_refuse_cancelled_trip();

CREATE INDEX bookings_trip_open_index ON bookings (trip_id, id)
  WHERE status IN ('PENDING_PAYMENT', 'CONFIRMED');
`;

const downSql = `
DROP INDEX IF EXISTS bookings_trip_open_index;
DROP TRIGGER IF EXISTS seat_allocations_refuse_cancelled_trip_on_booking ON seat_allocations;
DROP TRIGGER IF EXISTS seat_allocations_refuse_cancelled_trip_on_hold ON seat_allocations;
DROP FUNCTION IF EXISTS seat_allocations_refuse_cancelled_trip();
ALTER TABLE trips
  DROP COLUMN IF EXISTS cancellation_reason,
  DROP COLUMN IF EXISTS cancelled_at;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
