// The bookings a trip's cancellation must handle: every booking open when the mark committed, written with the mark.
import type { Knex } from 'knex';

// Counting and paging the trip's open bookings after the mark lost those that ended on their own in between (a
// refused payment, an expiry): they were counted at the start but never listed. The list is fixed at the mark,
// in the mark's transaction, so the cancellation handles each of them once, whatever they do meanwhile. Trips
// cancelled before this migration get the list of their bookings still open now. Rows go with their booking or
// trip (only tests ever delete those).
const upSql = `
CREATE TABLE trip_cancellation_bookings (
  trip_id uuid NOT NULL REFERENCES trips (id) ON DELETE CASCADE,
  booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
  PRIMARY KEY (trip_id, booking_id)
);

INSERT INTO trip_cancellation_bookings (trip_id, booking_id)
SELECT bookings.trip_id, bookings.id
FROM bookings JOIN trips ON trips.id = bookings.trip_id
WHERE trips.status = 'CANCELLED' AND bookings.status IN ('PENDING_PAYMENT', 'CONFIRMED');
`;

const downSql = `DROP TABLE IF EXISTS trip_cancellation_bookings;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
