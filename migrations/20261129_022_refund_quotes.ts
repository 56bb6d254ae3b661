// Refund quotes: what cancelling some passengers would refund, as promised until a time; and each booking's refund rule.
import type { Knex } from 'knex';

// A quote is kept whole as the domain's RefundQuote (jsonb), with the columns its readers filter on beside it; a
// cancellation that names it reads it back and refunds exactly its lines. Quotes go with their booking.
//
// The refund rule a booking was made under lives in its workflow's state; the read model keeps a copy so a quote
// is computed without asking the workflow. It is written once, with the booking's first row: a rule never changes
// after the booking is made. Rows written before this column hold NULL, and every booking until then was made
// under the standard rule (src/domain/fares.ts, defaultRefundRule), which readers take for NULL.
const upSql = `
CREATE TABLE refund_quotes (
  id uuid PRIMARY KEY,
  booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
  quote jsonb NOT NULL,
  valid_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refund_quotes_booking_index ON refund_quotes (booking_id, created_at);
CREATE INDEX refund_quotes_created_at_index ON refund_quotes (created_at);

ALTER TABLE bookings ADD COLUMN refund_rule jsonb;
`;

const downSql = `
ALTER TABLE bookings DROP COLUMN IF EXISTS refund_rule;
DROP TABLE IF EXISTS refund_quotes;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
