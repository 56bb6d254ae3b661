// RecordBooking: writes the workflow's booking snapshot to the bookings and passengers tables the fronts read.
import type { Knex } from 'knex';
import type { BookingState } from '../domain/booking';
import type { FieldCipher } from '../security/field-encryption';
import type { ReadModelActivities } from './interface';

export interface ReadModelActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
}

function bookingRow(snapshot: BookingState, cipher: FieldCipher) {
  return {
    id: snapshot.id,
    customer_id: snapshot.customerId,
    trip_id: snapshot.tripId,
    route_id: snapshot.routeId,
    status: snapshot.status,
    contact_email: cipher.encrypt(snapshot.contactEmail),
    contact_phone: cipher.encryptOptional(snapshot.contactPhone),
    currency: snapshot.price.total.currency,
    price_total_minor: snapshot.price.total.amountMinor,
    amount_paid_minor: snapshot.amountPaid.amountMinor,
    amount_refunded_minor: snapshot.amountRefunded.amountMinor,
    price_breakdown: JSON.stringify(snapshot.price),
    hold_expires_at: snapshot.holdExpiresAt,
    payment_status: snapshot.payment.status,
    payment_method_masked: cipher.encryptOptional(snapshot.payment.method),
    payment_last_attempt_at: snapshot.payment.lastAttemptAt ?? null,
    payment_decline_reason: snapshot.payment.declineReason ?? null,
    cancellation_reason: snapshot.cancellationReason ?? null,
    cancelled_at: snapshot.cancelledAt ?? null,
    departure_time: snapshot.departureTime,
    version: snapshot.version,
    created_at: snapshot.createdAt,
    updated_at: snapshot.updatedAt,
  };
}

const immutableBookingColumns = new Set(['id', 'customer_id', 'created_at']);

/**
 * Replaces the passenger rows with the snapshot's. Rows are updated in place where id and position still match,
 * because deleting a passenger would cascade to its seat allocations; a seat's passenger link is detached first.
 */
async function replacePassengers(
  transaction: Knex.Transaction,
  snapshot: BookingState,
  cipher: FieldCipher,
): Promise<void> {
  const positions = new Map(snapshot.passengers.map((passenger, index) => [passenger.id, index + 1]));
  const existing: { id: string; position: number }[] = await transaction('passengers')
    .where({ booking_id: snapshot.id })
    .select('id', 'position');
  const outdatedIds = existing.filter((row) => positions.get(row.id) !== row.position).map((row) => row.id);
  if (outdatedIds.length > 0) {
    await transaction('seat_allocations').whereIn('passenger_id', outdatedIds).update({ passenger_id: null });
    await transaction('passengers').whereIn('id', outdatedIds).delete();
  }
  if (snapshot.passengers.length > 0) {
    await transaction('passengers')
      .insert(
        snapshot.passengers.map((passenger, index) => ({
          id: passenger.id,
          booking_id: snapshot.id,
          position: index + 1,
          first_name: cipher.encrypt(passenger.firstName),
          last_name: cipher.encrypt(passenger.lastName),
          email: cipher.encrypt(passenger.email),
          phone: cipher.encryptOptional(passenger.phone),
          seat_number: passenger.seatNumber,
          fare_class: passenger.fareClass,
          updated_at: snapshot.updatedAt,
        })),
      )
      .onConflict('id')
      .merge(['first_name', 'last_name', 'email', 'phone', 'seat_number', 'fare_class', 'updated_at'])
      .where('passengers.booking_id', snapshot.id);
  }
  // Each active seat points at the passenger sitting in it now (seat changes move passengers between seats).
  await transaction.raw(
    `UPDATE seat_allocations AS allocation SET passenger_id = passenger.id
       FROM passengers AS passenger
      WHERE allocation.booking_id = ? AND passenger.booking_id = allocation.booking_id
        AND passenger.seat_number = allocation.seat_number AND allocation.state IN ('HELD', 'BOOKED')
        AND allocation.passenger_id IS DISTINCT FROM passenger.id`,
    [snapshot.id],
  );
}

/**
 * Upserts the booking and its passengers when the snapshot is at least as new as the stored row (compare-and-set
 * on version in SQL, so an out-of-order retry never moves the read model backwards). Returns whether it wrote.
 */
export async function writeBookingSnapshot(
  transaction: Knex.Transaction,
  snapshot: BookingState,
  cipher: FieldCipher,
): Promise<boolean> {
  const row = bookingRow(snapshot, cipher);
  const written = await transaction('bookings')
    .insert(row)
    .onConflict('id')
    .merge(Object.keys(row).filter((column) => !immutableBookingColumns.has(column)))
    .where('bookings.version', '<=', snapshot.version)
    .returning('id');
  if (written.length === 0) return false;
  await replacePassengers(transaction, snapshot, cipher);
  return true;
}

export function createReadModelActivities(dependencies: ReadModelActivityDependencies): ReadModelActivities {
  const { database, cipher } = dependencies;
  return {
    async RecordBooking(snapshot: BookingState): Promise<void> {
      await database.transaction((transaction) => writeBookingSnapshot(transaction, snapshot, cipher));
    },
  };
}
