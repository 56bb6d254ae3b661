// A create's claim keeps the booking's sealed workflow start, so an acknowledged booking id is always started.
import type { Knex } from 'knex';

// A create may answer 202 (its answer fell due first) and then fail to reach Temporal, or its API process may die
// right after answering. The claim, written before the start, now carries the start itself (encrypted: it names
// the passengers), so whoever finds the booking unstarted, a read of it or the API's reconciler, starts the same
// workflow. `acknowledged_at` marks a claim whose booking id a client was given: an error answer for the same id
// no longer drops it. `started_at` marks a claim whose workflow is known to exist; the reconciler skips it.
const upSql = `
ALTER TABLE booking_hold_claims
  ADD COLUMN start_request text,
  ADD COLUMN acknowledged_at timestamptz,
  ADD COLUMN started_at timestamptz;
CREATE INDEX booking_hold_claims_unstarted_index ON booking_hold_claims (claimed_at)
  WHERE released_at IS NULL AND started_at IS NULL;
`;

const downSql = `
DROP INDEX IF EXISTS booking_hold_claims_unstarted_index;
ALTER TABLE booking_hold_claims
  DROP COLUMN IF EXISTS start_request,
  DROP COLUMN IF EXISTS acknowledged_at,
  DROP COLUMN IF EXISTS started_at;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
