// Partners' webhook endpoints, the events they can hear, and each delivery of an event to an endpoint.
import type { Knex } from 'knex';

// partner_events is the outbox: an event is written in the transaction of the change it states (the booking's
// snapshot, the trip's cancellation), with its deliveries to the endpoints subscribed at that moment, so none is
// lost or invented. fact_key names the fact (`booking.confirmed`, `passenger.boarded:<id>`), so a snapshot written
// again states nothing twice; sequence orders a subject's events and is what receivers order by. dispatched_at is
// set once the delivery workflows have been told: a row left without it (the process died between the commit and
// the signal) is dispatched by the sweep. An endpoint's secrets are field-encrypted envelopes: the current one and,
// during a rotation's overlap, the previous one with its end. Endpoints are soft-deleted so their delivery log
// outlives them for the operators; a partner never reads a deleted one.
const upSql = `
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  partner_id text NOT NULL,
  url text NOT NULL,
  description text NOT NULL DEFAULT '',
  event_types text[] NOT NULL CONSTRAINT webhook_endpoints_event_types_present CHECK (cardinality(event_types) > 0),
  all_bookings boolean NOT NULL DEFAULT false,
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  status text NOT NULL DEFAULT 'enabled' CONSTRAINT webhook_endpoints_status_valid CHECK (status IN ('enabled', 'disabled')),
  disabled_reason text,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  CONSTRAINT webhook_endpoints_previous_secret_ends CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_partner_index ON webhook_endpoints (partner_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE partner_events (
  id uuid PRIMARY KEY,
  subject_type text NOT NULL CONSTRAINT partner_events_subject_type_valid CHECK (subject_type IN ('booking', 'trip')),
  subject_id uuid NOT NULL,
  sequence integer NOT NULL CONSTRAINT partner_events_sequence_positive CHECK (sequence > 0),
  fact_key text NOT NULL,
  type text NOT NULL,
  owner_id text,
  data jsonb NOT NULL,
  itinerary text,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  dispatched_at timestamptz,
  CONSTRAINT partner_events_sequence_unique UNIQUE (subject_id, sequence),
  CONSTRAINT partner_events_fact_unique UNIQUE (subject_id, fact_key)
);
CREATE INDEX partner_events_undispatched_index ON partner_events (recorded_at) WHERE dispatched_at IS NULL;

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
  event_id uuid NOT NULL REFERENCES partner_events (id),
  subject_id uuid NOT NULL,
  sequence integer NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CONSTRAINT webhook_deliveries_status_valid CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error text,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_once UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_pending_index ON webhook_deliveries (endpoint_id, subject_id, sequence)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log_index ON webhook_deliveries (endpoint_id, created_at, id);

CREATE TABLE webhook_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id),
  attempt integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  status_code integer,
  error text,
  duration_ms integer NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
`;

const downSql = `
DROP TABLE IF EXISTS webhook_attempts;
DROP TABLE IF EXISTS webhook_deliveries;
DROP TABLE IF EXISTS partner_events;
DROP TABLE IF EXISTS webhook_endpoints;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
