// The card processor's events as received: each recorded once by its id before it is answered, then applied.
import type { Knex } from 'knex';

// A processor delivers an event at least once, possibly twice at the same moment, and out of order; the row is
// written before the answer, so a delivery answered 2xx is never lost. applied_at stays empty until the event has
// been handed to the booking's workflow (or found to need nothing): a redelivery of an event recorded but not
// applied (the signal failed, the process died) applies it then. claimed_until is the lease of the delivery now
// applying it, so a second delivery arriving meanwhile leaves it alone instead of applying it twice. The reconciliation writes the outcomes it finds
// here too, under ids of its own, so a later pass knows them. booking_id is text and no foreign key: an event may
// name a booking this service never had.
const upSql = `
CREATE TABLE payment_events (
  event_id text PRIMARY KEY,
  source text NOT NULL CONSTRAINT payment_events_source_valid CHECK (source IN ('webhook', 'reconciliation')),
  type text NOT NULL,
  kind text NOT NULL,
  booking_id text,
  intent_id text,
  refund_id text,
  event jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  deliveries integer NOT NULL DEFAULT 1,
  claimed_until timestamptz NOT NULL,
  outcome text CONSTRAINT payment_events_outcome_valid
    CHECK (outcome IN ('applied', 'ignored', 'no_booking', 'no_workflow')),
  applied_at timestamptz,
  CONSTRAINT payment_events_applied_with_outcome CHECK ((outcome IS NULL) = (applied_at IS NULL))
);
CREATE INDEX payment_events_intent_index ON payment_events (intent_id) WHERE intent_id IS NOT NULL;
CREATE INDEX payment_events_refund_index ON payment_events (refund_id) WHERE refund_id IS NOT NULL;
CREATE INDEX payment_events_unapplied_index ON payment_events (received_at) WHERE applied_at IS NULL;

-- The reconciliation looks the processor's recent intents and refunds up in the ledger by the processor's ids.
CREATE INDEX payments_gateway_transaction_index ON payments (gateway_transaction_id)
  WHERE gateway_transaction_id IS NOT NULL;
CREATE INDEX refunds_gateway_refund_index ON refunds (gateway_refund_id) WHERE gateway_refund_id IS NOT NULL;
`;

const downSql = `
DROP INDEX IF EXISTS refunds_gateway_refund_index;
DROP INDEX IF EXISTS payments_gateway_transaction_index;
DROP TABLE IF EXISTS payment_events;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
