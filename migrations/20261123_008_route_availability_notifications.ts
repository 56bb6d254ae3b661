// Every change that can alter a route's seat availability notifies `route_availability_changed` with the route's id.
import type { Knex } from 'knex';

// The API keeps availability answers only while it hears these (src/db/route-availability-changes.ts). The payload
// is the route id the answer is kept under, or '*' for a change that may touch every route (a layout, a stop's time
// zone). PostgreSQL sends a transaction's notifications at its commit, once per distinct payload, and none on
// rollback, so a listener never hears of a change it cannot yet read.
const upSql = `
CREATE FUNCTION notify_route_availability_of_trip_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('route_availability_changed', trip.route_id::text) FROM trips AS trip WHERE trip.id = NEW.trip_id;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('route_availability_changed', trip.route_id::text) FROM trips AS trip WHERE trip.id = OLD.trip_id;
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION notify_route_availability_of_trips() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('route_availability_changed', NEW.route_id::text);
  END IF;
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('route_availability_changed', OLD.route_id::text);
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION notify_route_availability_of_every_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('route_availability_changed', '*');
  RETURN NULL;
END;
$$;

-- A seat held, booked or released; the passenger link and expiry times do not show in availability.
CREATE TRIGGER seat_allocations_added_or_removed_notify_route_availability
  AFTER INSERT OR DELETE ON seat_allocations
  FOR EACH ROW EXECUTE FUNCTION notify_route_availability_of_trip_rows();
CREATE TRIGGER seat_allocations_changed_notify_route_availability
  AFTER UPDATE OF state, trip_id, seat_number ON seat_allocations
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.trip_id IS DISTINCT FROM NEW.trip_id
                     OR OLD.seat_number IS DISTINCT FROM NEW.seat_number)
  EXECUTE FUNCTION notify_route_availability_of_trip_rows();
CREATE TRIGGER trip_fares_notify_route_availability
  AFTER INSERT OR UPDATE OR DELETE ON trip_fares
  FOR EACH ROW EXECUTE FUNCTION notify_route_availability_of_trip_rows();
CREATE TRIGGER trips_notify_route_availability
  AFTER INSERT OR UPDATE OR DELETE ON trips
  FOR EACH ROW EXECUTE FUNCTION notify_route_availability_of_trips();

CREATE TRIGGER seat_allocations_emptied_notify_route_availability
  AFTER TRUNCATE ON seat_allocations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_route_availability_of_every_route();
CREATE TRIGGER trip_fares_emptied_notify_route_availability
  AFTER TRUNCATE ON trip_fares
  FOR EACH STATEMENT EXECUTE FUNCTION notify_route_availability_of_every_route();
CREATE TRIGGER trips_emptied_notify_route_availability
  AFTER TRUNCATE ON trips
  FOR EACH STATEMENT EXECUTE FUNCTION notify_route_availability_of_every_route();
CREATE TRIGGER seats_notify_route_availability
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON seats
  FOR EACH STATEMENT EXECUTE FUNCTION notify_route_availability_of_every_route();
CREATE TRIGGER routes_notify_route_availability
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON routes
  FOR EACH STATEMENT EXECUTE FUNCTION notify_route_availability_of_every_route();
CREATE TRIGGER stops_notify_route_availability
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON stops
  FOR EACH STATEMENT EXECUTE FUNCTION notify_route_availability_of_every_route();
`;

const downSql = `
DROP TRIGGER IF EXISTS stops_notify_route_availability ON stops;
DROP TRIGGER IF EXISTS routes_notify_route_availability ON routes;
DROP TRIGGER IF EXISTS seats_notify_route_availability ON seats;
DROP TRIGGER IF EXISTS trips_emptied_notify_route_availability ON trips;
DROP TRIGGER IF EXISTS trip_fares_emptied_notify_route_availability ON trip_fares;
DROP TRIGGER IF EXISTS seat_allocations_emptied_notify_route_availability ON seat_allocations;
DROP TRIGGER IF EXISTS trips_notify_route_availability ON trips;
DROP TRIGGER IF EXISTS trip_fares_notify_route_availability ON trip_fares;
DROP TRIGGER IF EXISTS seat_allocations_changed_notify_route_availability ON seat_allocations;
DROP TRIGGER IF EXISTS seat_allocations_added_or_removed_notify_route_availability ON seat_allocations;
DROP FUNCTION IF EXISTS notify_route_availability_of_every_route();
DROP FUNCTION IF EXISTS notify_route_availability_of_trips();
DROP FUNCTION IF EXISTS notify_route_availability_of_trip_rows();
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
