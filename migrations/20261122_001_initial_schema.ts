// Initial schema: users, network (stops, routes, layouts, trips, fares), bookings, seat inventory, payments, outbox.
import type { Knex } from 'knex';

// Columns holding personal data store only `enc:v1:<keyId>:...` envelopes from src/security/field-encryption.ts;
// the CHECKs make a plaintext write fail at once instead of quietly landing on disk.
const upSql = `
CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL CONSTRAINT users_email_encrypted CHECK (email LIKE 'enc:%'),
  email_lookup text NOT NULL CONSTRAINT users_email_lookup_unique UNIQUE,
  password_hash text NOT NULL,
  display_name text NOT NULL CONSTRAINT users_display_name_encrypted CHECK (display_name LIKE 'enc:%'),
  phone text CONSTRAINT users_phone_encrypted CHECK (phone LIKE 'enc:%'),
  roles text[] NOT NULL DEFAULT ARRAY['customer']::text[],
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT users_roles_valid CHECK (
    cardinality(roles) >= 1 AND roles <@ ARRAY['customer', 'agent', 'admin']::text[]
  )
);

CREATE TABLE stops (
  code text PRIMARY KEY CONSTRAINT stops_code_format CHECK (code ~ '^[A-Z0-9]{2,12}$'),
  name text NOT NULL,
  city text NOT NULL,
  country_code text NOT NULL CONSTRAINT stops_country_code_format CHECK (country_code ~ '^[A-Z]{2}$'),
  time_zone text NOT NULL CONSTRAINT stops_time_zone_present CHECK (time_zone ~ '^[A-Za-z_]+(/[A-Za-z0-9_+-]+)+$')
);
CREATE INDEX stops_city_index ON stops (lower(city));

CREATE TABLE routes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  code text NOT NULL CONSTRAINT routes_code_unique UNIQUE
    CONSTRAINT routes_code_format CHECK (code ~ '^[A-Z0-9]+(-[A-Z0-9]+)*$' AND length(code) <= 40),
  origin_stop_code text NOT NULL REFERENCES stops (code),
  destination_stop_code text NOT NULL REFERENCES stops (code),
  operator_name text NOT NULL,
  distance_km integer NOT NULL CONSTRAINT routes_distance_positive CHECK (distance_km > 0),
  typical_duration_minutes integer NOT NULL
    CONSTRAINT routes_duration_positive CHECK (typical_duration_minutes > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT routes_distinct_ends CHECK (origin_stop_code <> destination_stop_code)
);
CREATE INDEX routes_origin_destination_index ON routes (origin_stop_code, destination_stop_code);
CREATE INDEX routes_destination_index ON routes (destination_stop_code);

CREATE TABLE route_stops (
  route_id uuid NOT NULL REFERENCES routes (id) ON DELETE CASCADE,
  position integer NOT NULL CONSTRAINT route_stops_position_positive CHECK (position >= 1),
  stop_code text NOT NULL REFERENCES stops (code),
  minutes_from_origin integer NOT NULL
    CONSTRAINT route_stops_minutes_positive CHECK (minutes_from_origin > 0),
  PRIMARY KEY (route_id, position),
  CONSTRAINT route_stops_stop_once_per_route UNIQUE (route_id, stop_code)
);
CREATE INDEX route_stops_stop_index ON route_stops (stop_code);

CREATE TABLE seat_layouts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  code text NOT NULL CONSTRAINT seat_layouts_code_unique UNIQUE,
  name text NOT NULL,
  row_count integer NOT NULL CONSTRAINT seat_layouts_row_count_positive CHECK (row_count >= 1),
  seats_per_row integer NOT NULL CONSTRAINT seat_layouts_seats_per_row_range CHECK (seats_per_row BETWEEN 1 AND 6),
  seat_count integer NOT NULL CONSTRAINT seat_layouts_seat_count_positive CHECK (seat_count >= 1)
);

CREATE TABLE seats (
  layout_id uuid NOT NULL REFERENCES seat_layouts (id) ON DELETE CASCADE,
  seat_number text NOT NULL CONSTRAINT seats_seat_number_format CHECK (seat_number ~ '^[1-9][0-9]{0,1}[A-F]$'),
  row_number integer NOT NULL CONSTRAINT seats_row_number_positive CHECK (row_number >= 1),
  fare_class text NOT NULL CONSTRAINT seats_fare_class_valid CHECK (fare_class IN ('STANDARD', 'PREMIUM')),
  PRIMARY KEY (layout_id, seat_number)
);

CREATE TABLE trips (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  route_id uuid NOT NULL REFERENCES routes (id) ON DELETE CASCADE,
  layout_id uuid NOT NULL REFERENCES seat_layouts (id),
  departure_time timestamptz NOT NULL,
  arrival_time timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'SCHEDULED'
    CONSTRAINT trips_status_valid CHECK (status IN ('SCHEDULED', 'DEPARTED', 'CANCELLED')),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT trips_route_departure_unique UNIQUE (route_id, departure_time),
  -- Target of the seat allocations' composite foreign key: a seat must belong to its trip's layout.
  CONSTRAINT trips_id_layout_unique UNIQUE (id, layout_id),
  CONSTRAINT trips_arrival_after_departure CHECK (arrival_time > departure_time)
);
CREATE INDEX trips_departure_time_index ON trips (departure_time);

CREATE TABLE trip_fares (
  trip_id uuid NOT NULL REFERENCES trips (id) ON DELETE CASCADE,
  fare_class text NOT NULL CONSTRAINT trip_fares_fare_class_valid CHECK (fare_class IN ('STANDARD', 'PREMIUM')),
  amount_minor bigint NOT NULL CONSTRAINT trip_fares_amount_non_negative CHECK (amount_minor >= 0),
  currency char(3) NOT NULL CONSTRAINT trip_fares_currency_format CHECK (currency ~ '^[A-Z]{3}$'),
  PRIMARY KEY (trip_id, fare_class)
);

CREATE TABLE bookings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  customer_id uuid NOT NULL REFERENCES users (id),
  trip_id uuid NOT NULL REFERENCES trips (id),
  route_id uuid NOT NULL REFERENCES routes (id),
  status text NOT NULL CONSTRAINT bookings_status_valid
    CHECK (status IN ('PENDING_PAYMENT', 'CONFIRMED', 'CANCELLED', 'EXPIRED', 'COMPLETED')),
  contact_email text NOT NULL CONSTRAINT bookings_contact_email_encrypted CHECK (contact_email LIKE 'enc:%'),
  contact_phone text CONSTRAINT bookings_contact_phone_encrypted CHECK (contact_phone LIKE 'enc:%'),
  currency char(3) NOT NULL CONSTRAINT bookings_currency_format CHECK (currency ~ '^[A-Z]{3}$'),
  price_total_minor bigint NOT NULL DEFAULT 0 CONSTRAINT bookings_price_total_non_negative CHECK (price_total_minor >= 0),
  amount_paid_minor bigint NOT NULL DEFAULT 0 CONSTRAINT bookings_amount_paid_non_negative CHECK (amount_paid_minor >= 0),
  amount_refunded_minor bigint NOT NULL DEFAULT 0
    CONSTRAINT bookings_amount_refunded_non_negative CHECK (amount_refunded_minor >= 0),
  price_breakdown jsonb NOT NULL DEFAULT '{"lines": []}'::jsonb,
  hold_expires_at timestamptz,
  payment_status text NOT NULL DEFAULT 'NONE' CONSTRAINT bookings_payment_status_valid
    CHECK (payment_status IN ('NONE', 'DECLINED', 'CAPTURED', 'PARTIALLY_REFUNDED', 'REFUNDED')),
  payment_method_masked text
    CONSTRAINT bookings_payment_method_masked_encrypted CHECK (payment_method_masked LIKE 'enc:%'),
  payment_last_attempt_at timestamptz,
  payment_decline_reason text,
  cancellation_reason text,
  cancelled_at timestamptz,
  departure_time timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CONSTRAINT bookings_version_positive CHECK (version >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT bookings_refund_within_paid CHECK (amount_refunded_minor <= amount_paid_minor)
);
-- "My bookings", newest first, keyset-paged on (created_at, id), optionally filtered by status.
CREATE INDEX bookings_customer_created_index ON bookings (customer_id, created_at DESC, id DESC);
CREATE INDEX bookings_customer_status_created_index ON bookings (customer_id, status, created_at DESC, id DESC);
CREATE INDEX bookings_trip_index ON bookings (trip_id);
CREATE INDEX bookings_pending_hold_index ON bookings (hold_expires_at) WHERE status = 'PENDING_PAYMENT';
CREATE INDEX bookings_confirmed_departure_index ON bookings (departure_time) WHERE status = 'CONFIRMED';

CREATE TABLE passengers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
  position integer NOT NULL CONSTRAINT passengers_position_positive CHECK (position >= 1),
  first_name text NOT NULL CONSTRAINT passengers_first_name_encrypted CHECK (first_name LIKE 'enc:%'),
  last_name text NOT NULL CONSTRAINT passengers_last_name_encrypted CHECK (last_name LIKE 'enc:%'),
  email text NOT NULL CONSTRAINT passengers_email_encrypted CHECK (email LIKE 'enc:%'),
  phone text CONSTRAINT passengers_phone_encrypted CHECK (phone LIKE 'enc:%'),
  seat_number text NOT NULL,
  fare_class text NOT NULL CONSTRAINT passengers_fare_class_valid CHECK (fare_class IN ('STANDARD', 'PREMIUM')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT passengers_position_unique UNIQUE (booking_id, position)
);

CREATE TABLE seat_allocations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  trip_id uuid NOT NULL,
  layout_id uuid NOT NULL,
  seat_number text NOT NULL,
  booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
  passenger_id uuid REFERENCES passengers (id) ON DELETE CASCADE,
  state text NOT NULL CONSTRAINT seat_allocations_state_valid CHECK (state IN ('HELD', 'BOOKED', 'RELEASED')),
  hold_expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  released_at timestamptz,
  CONSTRAINT seat_allocations_trip_layout_fk FOREIGN KEY (trip_id, layout_id) REFERENCES trips (id, layout_id),
  CONSTRAINT seat_allocations_seat_in_layout_fk FOREIGN KEY (layout_id, seat_number)
    REFERENCES seats (layout_id, seat_number),
  CONSTRAINT seat_allocations_hold_has_expiry CHECK (state <> 'HELD' OR hold_expires_at IS NOT NULL),
  CONSTRAINT seat_allocations_released_has_time CHECK ((state = 'RELEASED') = (released_at IS NOT NULL))
);
-- THE invariant: at any moment a seat of a trip is held or booked by at most one allocation.
CREATE UNIQUE INDEX seat_allocations_one_active_per_seat
  ON seat_allocations (trip_id, seat_number) WHERE state IN ('HELD', 'BOOKED');
CREATE INDEX seat_allocations_booking_index ON seat_allocations (booking_id);
CREATE INDEX seat_allocations_passenger_index ON seat_allocations (passenger_id);
CREATE INDEX seat_allocations_held_expiry_index ON seat_allocations (hold_expires_at) WHERE state = 'HELD';

-- Writers may leave layout_id out: it is copied from the trip, and the foreign keys then check the seat.
CREATE FUNCTION seat_allocations_fill_layout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.layout_id IS NULL THEN
    SELECT layout_id INTO NEW.layout_id FROM trips WHERE id = NEW.trip_id;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER seat_allocations_fill_layout BEFORE INSERT ON seat_allocations
  FOR EACH ROW EXECUTE FUNCTION seat_allocations_fill_layout();

CREATE TABLE payments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
  idempotency_key text NOT NULL CONSTRAINT payments_idempotency_key_unique UNIQUE,
  amount_minor bigint NOT NULL CONSTRAINT payments_amount_non_negative CHECK (amount_minor >= 0),
  currency char(3) NOT NULL CONSTRAINT payments_currency_format CHECK (currency ~ '^[A-Z]{3}$'),
  status text NOT NULL CONSTRAINT payments_status_valid CHECK (status IN ('APPROVED', 'DECLINED', 'FAILED')),
  decline_reason text,
  gateway_transaction_id text,
  method_masked text CONSTRAINT payments_method_masked_encrypted CHECK (method_masked LIKE 'enc:%'),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payments_booking_index ON payments (booking_id, created_at);

CREATE TABLE refunds (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
  payment_id uuid NOT NULL REFERENCES payments (id) ON DELETE CASCADE,
  idempotency_key text NOT NULL CONSTRAINT refunds_idempotency_key_unique UNIQUE,
  amount_minor bigint NOT NULL CONSTRAINT refunds_amount_non_negative CHECK (amount_minor >= 0),
  currency char(3) NOT NULL CONSTRAINT refunds_currency_format CHECK (currency ~ '^[A-Z]{3}$'),
  status text NOT NULL CONSTRAINT refunds_status_valid CHECK (status IN ('SUCCEEDED', 'FAILED')),
  failure_reason text,
  gateway_refund_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_booking_index ON refunds (booking_id, created_at);
CREATE INDEX refunds_payment_index ON refunds (payment_id);

CREATE TABLE notifications (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  booking_id uuid REFERENCES bookings (id) ON DELETE CASCADE,
  channel text NOT NULL CONSTRAINT notifications_channel_valid CHECK (channel IN ('EMAIL', 'SMS')),
  recipient text NOT NULL CONSTRAINT notifications_recipient_encrypted CHECK (recipient LIKE 'enc:%'),
  template text NOT NULL,
  subject text,
  body text NOT NULL CONSTRAINT notifications_body_encrypted CHECK (body LIKE 'enc:%'),
  idempotency_key text NOT NULL CONSTRAINT notifications_idempotency_key_unique UNIQUE,
  status text NOT NULL DEFAULT 'PENDING'
    CONSTRAINT notifications_status_valid CHECK (status IN ('PENDING', 'SENT', 'FAILED')),
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT notifications_attempts_non_negative CHECK (attempts >= 0),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  CONSTRAINT notifications_sent_has_time CHECK (status <> 'SENT' OR sent_at IS NOT NULL)
);
CREATE INDEX notifications_booking_index ON notifications (booking_id);
CREATE INDEX notifications_pending_index ON notifications (created_at) WHERE status = 'PENDING';

CREATE TABLE idempotency_keys (
  customer_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key text NOT NULL CONSTRAINT idempotency_keys_key_length CHECK (length(key) BETWEEN 1 AND 255),
  operation text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL DEFAULT 'IN_FLIGHT'
    CONSTRAINT idempotency_keys_state_valid CHECK (state IN ('IN_FLIGHT', 'COMPLETED')),
  response_status integer CONSTRAINT idempotency_keys_response_status_range CHECK (response_status BETWEEN 100 AND 599),
  -- A replayed response can carry names and emails, so the stored body is an encrypted JSON envelope.
  response_body text CONSTRAINT idempotency_keys_response_body_encrypted CHECK (response_body LIKE 'enc:%'),
  response_headers jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL DEFAULT now() + interval '24 hours',
  locked_until timestamptz,
  PRIMARY KEY (customer_id, key),
  CONSTRAINT idempotency_keys_kept_a_day CHECK (expires_at >= created_at + interval '24 hours'),
  CONSTRAINT idempotency_keys_completed_has_response CHECK (state <> 'COMPLETED' OR response_status IS NOT NULL)
);
CREATE INDEX idempotency_keys_expires_index ON idempotency_keys (expires_at);
`;

const downSql = `
DROP TABLE IF EXISTS idempotency_keys;
DROP TABLE IF EXISTS notifications;
DROP TABLE IF EXISTS refunds;
DROP TABLE IF EXISTS payments;
DROP TABLE IF EXISTS seat_allocations;
DROP FUNCTION IF EXISTS seat_allocations_fill_layout();
DROP TABLE IF EXISTS passengers;
DROP TABLE IF EXISTS bookings;
DROP TABLE IF EXISTS trip_fares;
DROP TABLE IF EXISTS trips;
DROP TABLE IF EXISTS seats;
DROP TABLE IF EXISTS seat_layouts;
DROP TABLE IF EXISTS route_stops;
DROP TABLE IF EXISTS routes;
DROP TABLE IF EXISTS stops;
DROP TABLE IF EXISTS users;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
