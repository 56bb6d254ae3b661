// Each Idempotency-Key reserves the id of what its request makes (a create's booking, a payment's attempt).
import type { Knex } from 'knex';

// Chosen when the key is first claimed and kept when a retry takes over a request that died or was answered
// "still processing": the retry names the same booking (or payment attempt) instead of making a second one.
// An expired key that is claimed again starts with a new id.
const upSql = `
ALTER TABLE idempotency_keys ADD COLUMN reserved_id uuid NOT NULL DEFAULT gen_random_uuid();
`;

const downSql = `
ALTER TABLE idempotency_keys DROP COLUMN IF EXISTS reserved_id;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
