// Each passenger's type and birth date, as the booking priced and checked them.
import type { Knex } from 'knex';

// passenger_type is the route's code (ADULT, CHILD…), null on passengers booked before types. birth_date is a
// field-encrypted envelope like the names: a birth date is personal data.
const upSql = `
ALTER TABLE passengers
  ADD COLUMN passenger_type text,
  ADD COLUMN birth_date text;
`;

const downSql = `
ALTER TABLE passengers
  DROP COLUMN IF EXISTS birth_date,
  DROP COLUMN IF EXISTS passenger_type;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
