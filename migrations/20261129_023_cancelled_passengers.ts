// The passengers cancelled out of a booking that goes on: who, when, what they had paid and what came back.
import type { Knex } from 'knex';

// JSON of the workflow's CancelledPassenger list; null until the first. No personal data: ids and money only.
const upSql = `ALTER TABLE bookings ADD COLUMN cancelled_passengers jsonb;`;

const downSql = `ALTER TABLE bookings DROP COLUMN IF EXISTS cancelled_passengers;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
