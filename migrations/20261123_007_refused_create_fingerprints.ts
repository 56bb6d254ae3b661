// A create refused before its workflow started keeps the fingerprint of its request under the booking id it named.
import type { Knex } from 'knex';

// A create whose seats are taken is refused without a workflow, and the workflow's memo is where a booking id's
// request is otherwise remembered. The refused create's claim row (released at once, so it takes no slot) keeps
// the request's keyed hash instead: the same id named with another body is still told apart from a retry.
const upSql = `
ALTER TABLE booking_hold_claims ADD COLUMN refused_request_fingerprint text;
`;

const downSql = `
ALTER TABLE booking_hold_claims DROP COLUMN IF EXISTS refused_request_fingerprint;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
