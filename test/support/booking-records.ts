// What PostgreSQL holds about a booking, read straight from its tables: seats, the payment ledger, notifications.
import type { Knex } from 'knex';
import type { LedgerChargeRow } from '../../src/db/payment-simulator-ledger';

/** A row of the payment simulator's ledger of charges, with the time it was written. */
export type SimulatorChargeRow = LedgerChargeRow & { created_at: Date };

/** The booking's seats that are held or booked, as `seat:STATE`, sorted. */
export async function activeSeatsOf(database: Knex, bookingId: string): Promise<string[]> {
  const rows: { seat_number: string; state: string }[] = await database('seat_allocations')
    .where({ booking_id: bookingId })
    .whereIn('state', ['HELD', 'BOOKED'])
    .select('seat_number', 'state');
  return rows.map((row) => `${row.seat_number}:${row.state}`).sort();
}

/** Seat number → the booking holding or having booked it, for every active seat of the trip. */
export async function seatHolders(database: Knex, tripId: string): Promise<Record<string, string>> {
  const rows: { seat_number: string; booking_id: string }[] = await database('seat_allocations')
    .where({ trip_id: tripId })
    .whereIn('state', ['HELD', 'BOOKED'])
    .select('seat_number', 'booking_id');
  return Object.fromEntries(rows.map((row) => [row.seat_number, row.booking_id]));
}

/** The trip's seats held or booked by two bookings at once on one leg (invariant 1): always empty. */
export async function doublyHeldSeats(database: Knex, tripId: string): Promise<string[]> {
  const { rows } = await database.raw<{ rows: { seat_number: string }[] }>(
    `SELECT DISTINCT first.seat_number
       FROM seat_allocations AS first JOIN seat_allocations AS second
         ON second.trip_id = first.trip_id AND second.seat_number = first.seat_number AND second.id <> first.id
        AND second.legs && first.legs
      WHERE first.trip_id = ? AND first.state IN ('HELD', 'BOOKED') AND second.state IN ('HELD', 'BOOKED')
      ORDER BY first.seat_number`,
    [tripId],
  );
  return rows.map((row) => row.seat_number);
}

export interface PaymentLedger {
  /** Approved charges at the gateway, oldest first, in minor units. */
  charges: number[];
  declinedCharges: number;
  refunds: number[];
  capturedMinor: number;
  refundedMinor: number;
}

/** What the payment gateway (simulator) holds for the booking: the money that really moved. */
export async function paymentLedger(database: Knex, bookingId: string): Promise<PaymentLedger> {
  const keyPattern = `${bookingId}:%`;
  const charges: { amount_minor: number; status: string }[] = await database('payment_simulator.charges')
    .where('idempotency_key', 'like', keyPattern)
    .orderBy('created_at')
    .select('amount_minor', 'status');
  const refunds: { amount_minor: number }[] = await database('payment_simulator.refunds')
    .where('idempotency_key', 'like', keyPattern)
    .orderBy('created_at')
    .select('amount_minor');
  const approved = charges
    .filter((charge) => charge.status === 'APPROVED')
    .map((charge) => charge.amount_minor);
  const refunded = refunds.map((refund) => refund.amount_minor);
  const sum = (amounts: number[]) => amounts.reduce((total, amount) => total + amount, 0);
  return {
    charges: approved,
    declinedCharges: charges.length - approved.length,
    refunds: refunded,
    capturedMinor: sum(approved),
    refundedMinor: sum(refunded),
  };
}

/** Templates of the notifications recorded for the booking, by channel, e.g. `EMAIL:booking-confirmed`. */
export async function notificationsOf(database: Knex, bookingId: string): Promise<string[]> {
  const rows: { channel: string; template: string }[] = await database('notifications')
    .where({ booking_id: bookingId })
    .orderBy('created_at')
    .select('channel', 'template');
  return rows.map((row) => `${row.channel}:${row.template}`);
}
