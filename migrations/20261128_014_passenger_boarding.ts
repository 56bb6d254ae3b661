// Each passenger's day-of-travel status in the read model: expected, boarded (when, where, by whom), no-show, cancelled.
import type { Knex } from 'knex';

// Written from the booking workflow's snapshot with the passenger row; rows written before boarding existed are
// EXPECTED, or CANCELLED where their booking ended so, which is what the snapshot writer would now write for them.
const upSql = `
ALTER TABLE passengers
  ADD COLUMN boarding_status text NOT NULL DEFAULT 'EXPECTED'
    CONSTRAINT passengers_boarding_status_valid CHECK (boarding_status IN ('EXPECTED', 'BOARDED', 'NO_SHOW', 'CANCELLED')),
  ADD COLUMN boarded_at timestamptz,
  ADD COLUMN boarded_stop text,
  ADD COLUMN boarded_by text,
  ADD COLUMN boarded_device text,
  ADD CONSTRAINT passengers_boarding_recorded CHECK (boarding_status <> 'BOARDED' OR (boarded_at IS NOT NULL AND boarded_stop IS NOT NULL));

UPDATE passengers AS passenger
   SET boarding_status = 'CANCELLED'
  FROM bookings AS booking
 WHERE booking.id = passenger.booking_id AND booking.status IN ('CANCELLED', 'EXPIRED');
`;

const downSql = `
ALTER TABLE passengers
  DROP CONSTRAINT passengers_boarding_recorded,
  DROP COLUMN boarded_device,
  DROP COLUMN boarded_by,
  DROP COLUMN boarded_stop,
  DROP COLUMN boarded_at,
  DROP COLUMN boarding_status;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
