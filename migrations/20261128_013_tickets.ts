// E-tickets: the driver role, ES256 ticket signing keys beside the token keys, and one row per issued ticket.
import type { Knex } from 'knex';

const upSql = `
ALTER TABLE users DROP CONSTRAINT users_roles_valid;
ALTER TABLE users ADD CONSTRAINT users_roles_valid CHECK (
  cardinality(roles) >= 1 AND roles <@ ARRAY['customer', 'agent', 'admin', 'driver']::text[]
);

-- Ticket keys are rotated and published like the token keys, under an issuer of their own.
ALTER TABLE identity_signing_keys DROP CONSTRAINT identity_signing_keys_algorithm_valid;
ALTER TABLE identity_signing_keys ADD CONSTRAINT identity_signing_keys_algorithm_valid
  CHECK (algorithm IN ('RS256', 'ES256'));

-- A ticket is never deleted or edited but for its revocation: a replaced one stays, revoked, so devices that
-- synced it learn it is gone; it goes only with its booking. The token is the signed QR payload exactly as issued.
CREATE TABLE tickets (
  id uuid PRIMARY KEY,
  booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
  passenger_id uuid NOT NULL,
  trip_id uuid NOT NULL REFERENCES trips (id) ON DELETE CASCADE,
  seat text NOT NULL,
  boarding_stop text NOT NULL,
  alighting_stop text NOT NULL,
  booking_version integer NOT NULL,
  token text NOT NULL,
  valid_from timestamptz NOT NULL,
  valid_until timestamptz NOT NULL,
  issued_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  revoked_reason text CONSTRAINT tickets_revoked_reason_valid CHECK (
    revoked_reason IN ('SEAT_CHANGED', 'SEGMENT_CHANGED', 'PASSENGER_REMOVED', 'BOOKING_CANCELLED', 'BOOKING_EXPIRED')
  ),
  CONSTRAINT tickets_revocation_complete CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL)),
  CONSTRAINT tickets_window_valid CHECK (valid_until > valid_from)
);
CREATE INDEX tickets_booking_index ON tickets (booking_id, issued_at);
-- One valid ticket per passenger of a booking at any moment.
CREATE UNIQUE INDEX tickets_one_valid_per_passenger ON tickets (booking_id, passenger_id) WHERE revoked_at IS NULL;
-- The revocation list devices sync before departure.
CREATE INDEX tickets_trip_revoked_index ON tickets (trip_id, revoked_at) WHERE revoked_at IS NOT NULL;
`;

const downSql = `
DROP TABLE IF EXISTS tickets;
DELETE FROM identity_signing_keys WHERE algorithm = 'ES256';
ALTER TABLE identity_signing_keys DROP CONSTRAINT identity_signing_keys_algorithm_valid;
ALTER TABLE identity_signing_keys ADD CONSTRAINT identity_signing_keys_algorithm_valid CHECK (algorithm IN ('RS256'));
-- A driver-only account falls back to the least privileged role rather than losing its bookings' owner.
UPDATE users SET roles = COALESCE(NULLIF(array_remove(roles, 'driver'), '{}'), ARRAY['customer']::text[])
  WHERE 'driver' = ANY (roles);
ALTER TABLE users DROP CONSTRAINT users_roles_valid;
ALTER TABLE users ADD CONSTRAINT users_roles_valid CHECK (
  cardinality(roles) >= 1 AND roles <@ ARRAY['customer', 'agent', 'admin']::text[]
);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
