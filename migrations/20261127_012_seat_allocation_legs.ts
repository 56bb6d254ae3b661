// Seat inventory per leg: each allocation covers a range of legs, and overlapping active ranges of one seat exclude.
import type { Knex } from 'knex';

// Leg i runs from a route's stop i to stop i + 1 (0 is the origin, route_stops.position the intermediate stops, the
// destination last); an allocation holds the half-open range [boarding position, alighting position). The
// exclusion constraint is the seat invariant itself: PostgreSQL refuses a second active allocation of a seat that
// shares a leg with the first, whatever the code does, and lets adjacent segments (A→B, B→C) share the seat.
// Writers that leave legs out hold the whole route, as every allocation did before segments.
const upSql = `
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- The booking's segment as the workflow keeps it (stops, local times, positions); null on whole-route bookings
-- made before segments.
ALTER TABLE bookings ADD COLUMN segment jsonb;

ALTER TABLE seat_allocations ADD COLUMN legs int4range;

CREATE FUNCTION route_leg_count(uuid) RETURNS integer LANGUAGE sql STABLE AS $function$
  SELECT count(*)::integer + 1 FROM route_stops WHERE route_id = $1
$function$;

UPDATE seat_allocations AS allocation
   SET legs = int4range(0, route_leg_count(trip.route_id))
  FROM trips AS trip
 WHERE trip.id = allocation.trip_id;

ALTER TABLE seat_allocations
  ALTER COLUMN legs SET NOT NULL,
  ADD CONSTRAINT seat_allocations_legs_valid CHECK (NOT isempty(legs) AND lower(legs) >= 0
    AND lower_inc(legs) AND NOT upper_inc(legs) AND NOT upper_inf(legs));

CREATE OR REPLACE FUNCTION seat_allocations_fill_layout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.layout_id IS NULL THEN
    SELECT layout_id INTO NEW.layout_id FROM trips WHERE id = NEW.trip_id;
  END IF;
  IF NEW.legs IS NULL THEN
    SELECT int4range(0, route_leg_count(route_id)) INTO NEW.legs FROM trips WHERE id = NEW.trip_id;
  END IF;
  RETURN NEW;
END;
$$;

DROP INDEX seat_allocations_one_active_per_seat;
ALTER TABLE seat_allocations ADD CONSTRAINT seat_allocations_no_overlapping_legs
  EXCLUDE USING gist (trip_id WITH =, seat_number WITH =, legs WITH &&) WHERE (state IN ('HELD', 'BOOKED'));
`;

const downSql = `
ALTER TABLE seat_allocations DROP CONSTRAINT seat_allocations_no_overlapping_legs;
CREATE UNIQUE INDEX seat_allocations_one_active_per_seat
  ON seat_allocations (trip_id, seat_number) WHERE state IN ('HELD', 'BOOKED');
CREATE OR REPLACE FUNCTION seat_allocations_fill_layout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.layout_id IS NULL THEN
    SELECT layout_id INTO NEW.layout_id FROM trips WHERE id = NEW.trip_id;
  END IF;
  RETURN NEW;
END;
$$;
ALTER TABLE seat_allocations DROP COLUMN legs;
DROP FUNCTION route_leg_count(uuid);
ALTER TABLE bookings DROP COLUMN segment;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
