// RecordBooking: encrypted read-model rows, a version guard against out-of-order writes, passengers kept in step.
import { expect } from '@jest/globals';
import type { ReadModelActivities, SeatActivities } from '../../../src/activities/interface';
import { createReadModelActivities } from '../../../src/activities/read-model';
import { createSeatActivities } from '../../../src/activities/seats';
import {
  bookingColumns,
  bookingViewOfSnapshot,
  bookingViews,
  findBookingRow,
} from '../../../src/db/booking-read-model';
import type { BookingState } from '../../../src/domain/booking';
import { activityKey } from '../../../src/domain/ids';
import {
  bookingSnapshot,
  runActivity,
  seatPrice,
  testPassenger,
  useActivityTestBed,
} from '../../support/activities';
import { testEnvelopePattern } from '../../support/database';

const testBed = useActivityTestBed();
let readModel: ReadModelActivities;
let seats: SeatActivities;

beforeAll(() => {
  readModel = createReadModelActivities({ database: testBed.database, cipher: testBed.cipher });
  seats = createSeatActivities({
    database: testBed.database,
    cipher: testBed.cipher,
    lapsedHoldGraceSeconds: 60,
  });
});

const passengerColumns = ['first_name', 'last_name', 'email', 'phone'] as const;

interface PassengerRow {
  id: string;
  booking_id: string;
  position: number;
  seat_number: string;
  first_name: string;
  email: string;
  phone: string | null;
}

async function storedPassengers(bookingId: string) {
  const rows = await testBed
    .database<PassengerRow>('passengers')
    .where({ booking_id: bookingId })
    .orderBy('position');
  return rows.map((row) => ({
    id: row.id,
    position: row.position,
    seatNumber: row.seat_number,
    firstName: testBed.cipher.decrypt(row.first_name),
    email: testBed.cipher.decrypt(row.email),
    phone: testBed.cipher.decryptOptional(row.phone),
  }));
}

/** A bookings row as the assertions compare it, column by column. */
type BookingsRow = { id: string } & Record<string, unknown>;

interface EncryptedBookingColumns {
  contact_email: string;
  contact_phone: string;
  payment_method_masked: string;
  status: string;
  version: number;
}

function confirmed(booking: BookingState, version: number): BookingState {
  return {
    ...booking,
    status: 'CONFIRMED',
    version,
    amountPaid: booking.price.total,
    payment: { status: 'CAPTURED', method: 'visa •••• 4242', lastAttemptAt: new Date().toISOString() },
    updatedAt: new Date().toISOString(),
  };
}

describe('RecordBooking', () => {
  it('stores personal data only as enc:v1 envelopes that decrypt to the snapshot', async () => {
    const booking = bookingSnapshot(testBed.trip, [
      testPassenger('1A'),
      testPassenger('1B', { phone: undefined }),
    ]);
    await runActivity(readModel, 'RecordBooking', confirmed(booking, 2));

    const { rows } = await testBed.database.raw<{ rows: EncryptedBookingColumns[] }>(
      'SELECT contact_email, contact_phone, payment_method_masked, status, version FROM bookings WHERE id = ?',
      [booking.id],
    );
    expect(rows[0]).toMatchObject({ status: 'CONFIRMED', version: 2 });
    for (const column of ['contact_email', 'contact_phone', 'payment_method_masked'] as const) {
      expect(rows[0][column]).toMatch(testEnvelopePattern);
    }
    expect(testBed.cipher.decrypt(rows[0].contact_email)).toBe(booking.contactEmail);
    expect(testBed.cipher.decrypt(rows[0].payment_method_masked)).toBe('visa •••• 4242');

    const { rows: passengerRows } = await testBed.database.raw<{
      rows: Record<(typeof passengerColumns)[number], string | null>[];
    }>('SELECT * FROM passengers WHERE booking_id = ?', [booking.id]);
    for (const row of passengerRows) {
      for (const column of passengerColumns) {
        if (row[column] !== null) expect(row[column]).toMatch(testEnvelopePattern);
      }
    }
    expect(await storedPassengers(booking.id)).toEqual([
      expect.objectContaining({ position: 1, firstName: 'Ana', phone: '+351912345678' }),
      expect.objectContaining({ position: 2, seatNumber: '1B', phone: null }),
    ]);
    const row = await testBed.database<BookingsRow>('bookings').where({ id: booking.id }).first();
    expect(row).toMatchObject({
      amount_paid_minor: seatPrice.amountMinor * 2,
      payment_status: 'CAPTURED',
      price_breakdown: booking.price,
    });
  });

  it('never goes back to an older version, and rewrites the same version idempotently', async () => {
    const booking = bookingSnapshot(testBed.trip, [testPassenger('2A')]);
    await runActivity(readModel, 'RecordBooking', booking);
    await runActivity(readModel, 'RecordBooking', confirmed(booking, 3));
    const stale = { ...booking, version: 2, passengers: [{ ...booking.passengers[0], firstName: 'Stale' }] };
    await runActivity(readModel, 'RecordBooking', stale);
    await runActivity(readModel, 'RecordBooking', confirmed(booking, 3));

    const row = await testBed.database<BookingsRow>('bookings').where({ id: booking.id }).first();
    expect(row).toMatchObject({ status: 'CONFIRMED', version: 3 });
    expect(await storedPassengers(booking.id)).toEqual([expect.objectContaining({ firstName: 'Ana' })]);
  });

  it('keeps passengers in step with seat changes, additions and edits, relinking the seats', async () => {
    const [first, second] = [testPassenger('3A'), testPassenger('3B')];
    const booking = bookingSnapshot(testBed.trip, [first]);
    await runActivity(seats, 'ReserveSeats', {
      bookingId: booking.id,
      tripId: booking.tripId,
      seats: [{ passengerId: first.id, seatNumber: '3A', fareClass: 'STANDARD' }],
      holdExpiresAt: booking.holdExpiresAt,
      idempotencyKey: activityKey(booking.id, 'reserve-seats', 1),
      booking,
    });
    // Version 2 moves the first passenger to 3C and adds the second in 3B.
    await runActivity(seats, 'ReserveSeats', {
      bookingId: booking.id,
      tripId: booking.tripId,
      seats: [
        { passengerId: first.id, seatNumber: '3C', fareClass: 'STANDARD' },
        { passengerId: second.id, seatNumber: '3B', fareClass: 'STANDARD' },
      ],
      holdExpiresAt: booking.holdExpiresAt,
      idempotencyKey: activityKey(booking.id, 'reserve-seats', 2),
    });
    await runActivity(seats, 'ReleaseSeats', {
      bookingId: booking.id,
      tripId: booking.tripId,
      seatNumbers: ['3A'],
      idempotencyKey: activityKey(booking.id, 'release-seats', 2),
    });
    await runActivity(readModel, 'RecordBooking', {
      ...booking,
      version: 2,
      passengers: [{ ...first, seatNumber: '3C', firstName: 'Ana Maria' }, second],
    });

    expect(await storedPassengers(booking.id)).toEqual([
      expect.objectContaining({ id: first.id, position: 1, seatNumber: '3C', firstName: 'Ana Maria' }),
      expect.objectContaining({ id: second.id, position: 2, seatNumber: '3B' }),
    ]);
    const active = await testBed
      .database('seat_allocations')
      .where({ booking_id: booking.id })
      .whereIn('state', ['HELD', 'BOOKED'])
      .orderBy('seat_number')
      .select('seat_number', 'passenger_id');
    expect(active).toEqual([
      { seat_number: '3B', passenger_id: second.id },
      { seat_number: '3C', passenger_id: first.id },
    ]);
  });
});

describe('the bookings row (db/booking-read-model)', () => {
  it('is described by one column list: every column of the table, in its order', async () => {
    const tableColumns = await testBed
      .database<{ table_name: string; column_name: string; ordinal_position: number }>(
        'information_schema.columns',
      )
      .whereRaw('table_schema = current_schema()')
      .where({ table_name: 'bookings' })
      .orderBy('ordinal_position')
      .pluck('column_name');
    expect([...bookingColumns]).toEqual(tableColumns);
  });

  it('reads back as exactly the view of the snapshot it was written from', async () => {
    const paidAt = new Date(Date.now() - 60_000).toISOString();
    const snapshot = bookingSnapshot(
      testBed.trip,
      [testPassenger('3A'), testPassenger('3B', { phone: undefined })],
      {
        status: 'CANCELLED',
        version: 4,
        contactPhone: undefined,
        amountPaid: { amountMinor: 2 * seatPrice.amountMinor, currency: seatPrice.currency },
        amountRefunded: { amountMinor: seatPrice.amountMinor, currency: seatPrice.currency },
        payment: { status: 'PARTIALLY_REFUNDED', method: 'visa •••• 4242', lastAttemptAt: paidAt },
        confirmedAt: paidAt,
        cancelledAt: new Date().toISOString(),
        cancellationReason: 'plans changed',
      },
    );
    await runActivity(readModel, 'RecordBooking', snapshot);

    const row = await findBookingRow(testBed.database, snapshot.id);
    expect(row).toBeDefined();
    expect(await bookingViews(testBed.database, [row!], testBed.cipher)).toEqual([
      bookingViewOfSnapshot(snapshot),
    ]);
  });
});
