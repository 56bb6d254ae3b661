// A booking's open payment (a 3-D Secure challenge, a payment the processor is deciding), shown until it ends.
import type { Knex } from 'knex';

// JSON of the workflow's PaymentAction without its client secret, which goes to the customer in the payment's
// answer only; null while no payment is open.
const upSql = `ALTER TABLE bookings ADD COLUMN payment_action jsonb;`;

const downSql = `ALTER TABLE bookings DROP COLUMN IF EXISTS payment_action;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
