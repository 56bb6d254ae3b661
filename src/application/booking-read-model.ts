// Reads bookings from the PostgreSQL read model RecordBooking writes, decrypting personal fields for the reader.
import type { Knex } from 'knex';
import type { BookingStatus, FareClass, Passenger, PriceLine, PaymentStatus } from '../domain/booking';
import { DomainError } from '../domain/errors';
import type { FieldCipher } from '../security/field-encryption';
import type { BookingView } from './interface';

export interface BookingRow {
  id: string;
  customer_id: string;
  trip_id: string;
  route_id: string;
  status: BookingStatus;
  contact_email: string;
  contact_phone: string | null;
  currency: string;
  price_total_minor: number;
  amount_paid_minor: number;
  amount_refunded_minor: number;
  price_breakdown: { lines?: PriceLine[] } | null;
  hold_expires_at: Date | null;
  payment_status: PaymentStatus;
  payment_method_masked: string | null;
  payment_last_attempt_at: Date | null;
  payment_decline_reason: string | null;
  cancellation_reason: string | null;
  cancelled_at: Date | null;
  departure_time: Date;
  version: number;
  created_at: Date;
  updated_at: Date;
}

interface PassengerRow {
  id: string;
  booking_id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string | null;
  seat_number: string;
  fare_class: FareClass;
}

const bookingColumns = [
  'id',
  'customer_id',
  'trip_id',
  'route_id',
  'status',
  'contact_email',
  'contact_phone',
  'currency',
  'price_total_minor',
  'amount_paid_minor',
  'amount_refunded_minor',
  'price_breakdown',
  'hold_expires_at',
  'payment_status',
  'payment_method_masked',
  'payment_last_attempt_at',
  'payment_decline_reason',
  'cancellation_reason',
  'cancelled_at',
  'departure_time',
  'version',
  'created_at',
  'updated_at',
] as const;

export function selectBookingColumns(database: Knex): Knex.QueryBuilder {
  return database('bookings').select(bookingColumns.map((column) => `bookings.${column}`));
}

function decryptPassenger(row: PassengerRow, cipher: FieldCipher): Passenger {
  const phone = cipher.decryptOptional(row.phone);
  return {
    id: row.id,
    firstName: cipher.decrypt(row.first_name),
    lastName: cipher.decrypt(row.last_name),
    email: cipher.decrypt(row.email),
    ...(phone === null ? {} : { phone }),
    seatNumber: row.seat_number,
    fareClass: row.fare_class,
  };
}

export function toBookingView(
  row: BookingRow,
  passengers: readonly Passenger[],
  cipher: FieldCipher,
): BookingView {
  const money = (amountMinor: number) => ({ amountMinor, currency: row.currency });
  const contactPhone = cipher.decryptOptional(row.contact_phone);
  const paymentMethod = cipher.decryptOptional(row.payment_method_masked);
  return {
    id: row.id,
    customerId: row.customer_id,
    tripId: row.trip_id,
    routeId: row.route_id,
    status: row.status,
    passengers: [...passengers],
    contactEmail: cipher.decrypt(row.contact_email),
    ...(contactPhone === null ? {} : { contactPhone }),
    price: { lines: row.price_breakdown?.lines ?? [], total: money(row.price_total_minor) },
    amountPaid: money(row.amount_paid_minor),
    amountRefunded: money(row.amount_refunded_minor),
    holdExpiresAt: (row.hold_expires_at ?? row.created_at).toISOString(),
    payment: {
      status: row.payment_status,
      ...(paymentMethod === null ? {} : { method: paymentMethod }),
      ...(row.payment_last_attempt_at === null
        ? {}
        : { lastAttemptAt: row.payment_last_attempt_at.toISOString() }),
      ...(row.payment_decline_reason === null ? {} : { declineReason: row.payment_decline_reason }),
    },
    departureTime: row.departure_time.toISOString(),
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.cancelled_at === null ? {} : { cancelledAt: row.cancelled_at.toISOString() }),
    ...(row.cancellation_reason === null ? {} : { cancellationReason: row.cancellation_reason }),
  };
}

/** The rows with their passengers (one query for all of them), in the rows' order. */
export async function withPassengers(
  database: Knex,
  rows: readonly BookingRow[],
  cipher: FieldCipher,
): Promise<BookingView[]> {
  if (rows.length === 0) return [];
  const passengerRows: PassengerRow[] = await database('passengers')
    .whereIn(
      'booking_id',
      rows.map((row) => row.id),
    )
    .orderBy([{ column: 'booking_id' }, { column: 'position' }])
    .select('id', 'booking_id', 'first_name', 'last_name', 'email', 'phone', 'seat_number', 'fare_class');
  const passengersByBooking = new Map<string, Passenger[]>();
  for (const passengerRow of passengerRows) {
    const list = passengersByBooking.get(passengerRow.booking_id) ?? [];
    list.push(decryptPassenger(passengerRow, cipher));
    passengersByBooking.set(passengerRow.booking_id, list);
  }
  return rows.map((row) => {
    const passengers = passengersByBooking.get(row.id);
    if (passengers === undefined) {
      throw new DomainError('INTERNAL', 'A stored booking has no passengers');
    }
    return toBookingView(row, passengers, cipher);
  });
}

export async function findBookingRow(database: Knex, bookingId: string): Promise<BookingRow | undefined> {
  return selectBookingColumns(database).where('bookings.id', bookingId).first();
}
