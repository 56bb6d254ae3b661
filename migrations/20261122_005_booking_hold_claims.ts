// Claims on the per-customer cap of open holds, taken before a booking's workflow starts.
import type { Knex } from 'knex';

// A booking's read-model row appears only once its seats are held, so creates in flight are invisible to a count
// of bookings. Each create first claims a slot here, counting and inserting under a per-customer lock; once the
// booking's row exists the row is what counts, and a create that ends without a booking releases its claim.
// No foreign key to bookings: the claim comes first, and the row may never come.
const upSql = `
CREATE TABLE booking_hold_claims (
  booking_id uuid PRIMARY KEY,
  customer_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  released_at timestamptz,
  CONSTRAINT booking_hold_claims_expire_after_claim CHECK (expires_at > claimed_at)
);
CREATE INDEX booking_hold_claims_customer_expiry_index ON booking_hold_claims (customer_id, expires_at);
`;

const downSql = `
DROP TABLE IF EXISTS booking_hold_claims;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
