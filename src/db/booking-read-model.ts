// The bookings read model: the one description of a bookings row and its passengers, how a snapshot is written, how readers read it.
import type { Knex } from 'knex';
import type {
  BookingState,
  BookingStatus,
  CancelledPassenger,
  FareClass,
  Passenger,
  PaymentAction,
  PaymentStatus,
  PriceBreakdown,
  RefundRule,
} from '../domain/booking';
import type { BookingSegment } from '../domain/segments';
import { boardingOf, passengerBoardingStatus } from '../domain/boarding';
import { DomainError } from '../domain/errors';
import { isUuid } from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';
import { readPage, type KeysetListing, type PageWindow, type RowPage } from './paging';
import { detachPassengers, linkSeatsToPassengers } from './seat-allocations';

/** A booking as readers see it: the workflow's state without what only the workflow needs, decrypted. */
export type BookingView = Omit<
  BookingState,
  'paymentAttempts' | 'paymentIncidents' | 'refundRule' | 'boardings' | 'noShowsRecordedAt'
>;

/** A row of `bookings` as PostgreSQL returns it; personal fields hold `enc:` envelopes. */
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
  price_breakdown: Partial<PriceBreakdown> | null;
  hold_expires_at: Date | null;
  payment_status: PaymentStatus;
  payment_method_masked: string | null;
  payment_last_attempt_at: Date | null;
  payment_decline_reason: string | null;
  cancellation_reason: string | null;
  cancelled_at: Date | null;
  departure_time: Date;
  segment: BookingSegment | null;
  /** The open payment without its client secret; null while none is open. */
  payment_action: PaymentAction | null;
  /** The rule the booking was made under; null on rows written before the read model kept it. */
  refund_rule: RefundRule | null;
  /** Passengers cancelled out of the booking while it went on; null until the first. */
  cancelled_passengers: CancelledPassenger[] | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

type BookingColumn = keyof BookingRow;

/** The columns as given, when they name every column of Row: leaving one out is a type error at the call. */
function everyColumnOf<Row>() {
  return <const Columns extends readonly (keyof Row)[]>(
    columns: Columns & ([Exclude<keyof Row, Columns[number]>] extends [never] ? unknown : never),
  ): Columns => columns;
}

/** The client secret is the customer's, in the payment's answer: never stored. */
function paymentActionColumn(action: PaymentAction | undefined): string | null {
  if (action === undefined) return null;
  const { clientSecret: _secret, ...stored } = action;
  return JSON.stringify(stored);
}

/** Every column of BookingRow, in the table's order: what readers select and the writer fills. */
export const bookingColumns = everyColumnOf<BookingRow>()([
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
  'segment',
  'payment_action',
  'refund_rule',
  'cancelled_passengers',
]);

/** Foreign key of a booking row to its trip: a snapshot of a trip that does not exist fails it. */
export const bookingTripKey = 'bookings_trip_id_fkey';

/** Columns an upsert leaves as the first write made them. */
const immutableBookingColumns: ReadonlySet<BookingColumn> = new Set(['id', 'customer_id', 'created_at']);

interface PassengerRow {
  id: string;
  booking_id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string | null;
  seat_number: string;
  fare_class: FareClass;
  passenger_type: string | null;
  birth_date: string | null;
}

/** A passenger's own columns: what a snapshot write replaces and a read gives back. */
const passengerDetailColumns = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'seat_number',
  'fare_class',
  'passenger_type',
  'birth_date',
] as const;

// ---- Writer: RecordBooking and the first ReserveSeats of a booking ----

/** The row a snapshot is stored as; every column of BookingRow is given a value (the type insists). */
function bookingRowOf(snapshot: BookingState, cipher: FieldCipher): Record<BookingColumn, Knex.Value> {
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
    segment: snapshot.segment === undefined ? null : JSON.stringify(snapshot.segment),
    payment_action: paymentActionColumn(snapshot.payment.action),
    refund_rule: JSON.stringify(snapshot.refundRule),
    cancelled_passengers:
      snapshot.cancelledPassengers === undefined ? null : JSON.stringify(snapshot.cancelledPassengers),
    version: snapshot.version,
    created_at: snapshot.createdAt,
    updated_at: snapshot.updatedAt,
  };
}

const boardingColumnNames = [
  'boarding_status',
  'boarded_at',
  'boarded_stop',
  'boarded_by',
  'boarded_device',
] as const;

/** The passenger's day-of-travel status as the snapshot says it (domain/boarding). */
function boardingColumnsOf(
  snapshot: BookingState,
  passengerId: string,
): Record<(typeof boardingColumnNames)[number], Knex.Value> {
  const boarding = boardingOf(snapshot, passengerId);
  return {
    boarding_status: passengerBoardingStatus(snapshot, passengerId),
    boarded_at: boarding?.boardedAt ?? null,
    boarded_stop: boarding?.stopCode ?? null,
    boarded_by: boarding?.actorId ?? null,
    boarded_device: boarding?.deviceId ?? null,
  };
}

/**
 * Replaces the passenger rows with the snapshot's. Rows are updated in place where id and position still match,
 * because deleting a passenger would cascade to its seat allocations; a seat's passenger link is detached first.
 */
async function replacePassengers(
  transaction: Knex.Transaction,
  snapshot: BookingState,
  cipher: FieldCipher,
  newBooking: boolean,
): Promise<void> {
  const positions = new Map(snapshot.passengers.map((passenger, index) => [passenger.id, index + 1]));
  // Passengers and seat allocations reference the booking row: one this transaction inserted has neither yet.
  const existing: { id: string; position: number }[] = newBooking
    ? []
    : await transaction('passengers').where({ booking_id: snapshot.id }).select('id', 'position');
  const outdatedIds = existing.filter((row) => positions.get(row.id) !== row.position).map((row) => row.id);
  if (outdatedIds.length > 0) {
    await detachPassengers(transaction, outdatedIds);
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
          passenger_type: passenger.passengerType ?? null,
          birth_date: cipher.encryptOptional(passenger.birthDate),
          ...boardingColumnsOf(snapshot, passenger.id),
          updated_at: snapshot.updatedAt,
        })),
      )
      .onConflict('id')
      .merge([...passengerDetailColumns, ...boardingColumnNames, 'updated_at'])
      .where('passengers.booking_id', snapshot.id);
  }
  if (!newBooking) await linkSeatsToPassengers(transaction, snapshot.id);
}

/** What a snapshot write did: whether it wrote, and the row it replaced (none when it created the row). */
export interface SnapshotWrite {
  written: boolean;
  previous?: { status: BookingStatus; version: number; paymentLastAttemptAt: Date | null };
}

/**
 * Upserts the booking and its passengers when the snapshot is at least as new as the stored row (compare-and-set
 * on version in SQL, so an out-of-order retry never moves the read model backwards). The replaced row is read
 * under the row lock first, so the caller can tell which transition the write made.
 */
export async function writeBookingSnapshot(
  transaction: Knex.Transaction,
  snapshot: BookingState,
  cipher: FieldCipher,
): Promise<SnapshotWrite> {
  const stored: Pick<BookingRow, 'status' | 'version' | 'payment_last_attempt_at'> | undefined =
    await transaction('bookings')
      .where({ id: snapshot.id })
      .forUpdate()
      .first('status', 'version', 'payment_last_attempt_at');
  const written: { id: string; xmax: string }[] = await transaction('bookings')
    .insert(bookingRowOf(snapshot, cipher))
    .onConflict('id')
    .merge(bookingColumns.filter((column) => !immutableBookingColumns.has(column)))
    .where('bookings.version', '<=', snapshot.version)
    // xmax is 0 on a row this statement inserted; a concurrent first write may have inserted it since the read.
    .returning(['id', 'xmax']);
  if (written.length === 0) return { written: false };
  const inserted = String(written[0].xmax) === '0';
  await replacePassengers(transaction, snapshot, cipher, inserted);
  if (inserted) return { written: true };
  return {
    written: true,
    previous: {
      status: stored?.status ?? snapshot.status,
      version: stored?.version ?? snapshot.version,
      paymentLastAttemptAt: stored?.payment_last_attempt_at ?? null,
    },
  };
}

/** PENDING_PAYMENT bookings whose hold expired more than `graceSeconds` ago: their workflow did not end them. */
export async function countOverduePendingPayments(database: Knex, graceSeconds: number): Promise<number> {
  const row: { overdue: string | number } | undefined = await database('bookings')
    .where({ status: 'PENDING_PAYMENT' })
    .where('hold_expires_at', '<', database.raw('now() - make_interval(secs => ?)', [graceSeconds]))
    .first(database.raw('count(*) AS overdue'));
  return Number(row?.overdue ?? 0);
}

// ---- Readers: the application's reads and the activities' existence checks ----

function selectBookingRows(database: Knex): Knex.QueryBuilder {
  return database('bookings').select(bookingColumns.map((column) => `bookings.${column}`));
}

export async function findBookingRow(database: Knex, bookingId: string): Promise<BookingRow | undefined> {
  return (await selectBookingRows(database).where('bookings.id', bookingId).first()) as
    BookingRow | undefined;
}

/** The trip a stored booking is for; undefined when the booking has no row. */
export async function tripOfBooking(database: Knex, bookingId: string): Promise<string | undefined> {
  const row = await database<BookingRow>('bookings').where({ id: bookingId }).first('trip_id');
  return row?.trip_id;
}

/** A row of the bookings listing: the booking and its created_at as the page token records it. */
export interface ListedBookingRow extends BookingRow {
  /** created_at to the microsecond in UTC, as PostgreSQL stores it (a JavaScript Date keeps milliseconds). */
  cursor_created_at: string;
}

/** Where a page of bookings stopped: newest first, by creation time and then id. */
export interface BookingPosition {
  createdAt: string;
  id: string;
}

const cursorTimestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export const bookingListing: KeysetListing<ListedBookingRow, BookingPosition> = {
  name: 'bookings',
  positionOf: (row) => ({ createdAt: row.cursor_created_at, id: row.id }),
  readPosition(value) {
    const position = value as Partial<BookingPosition> | null;
    // Date.parse alone lets trailing text through (a NUL among it), which the query would then send to SQL.
    if (
      typeof position !== 'object' ||
      position === null ||
      typeof position.createdAt !== 'string' ||
      !cursorTimestampPattern.test(position.createdAt) ||
      Number.isNaN(Date.parse(position.createdAt)) ||
      !isUuid(position.id)
    ) {
      return undefined;
    }
    return { createdAt: position.createdAt, id: position.id };
  },
};

/** The bookings listing, newest first: one customer's or everyone's, optionally of one status, after a position. */
function bookingListQuery(
  database: Knex,
  filter: { customerId?: string; status: BookingStatus | null; after?: BookingPosition },
): Knex.QueryBuilder {
  const query = selectBookingRows(database)
    .select(
      database.raw(
        `to_char(bookings.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_created_at`,
      ),
    )
    .orderBy([
      { column: 'bookings.created_at', order: 'desc' },
      { column: 'bookings.id', order: 'desc' },
    ]);
  if (filter.customerId !== undefined) query.where('bookings.customer_id', filter.customerId);
  if (filter.status !== null) query.where('bookings.status', filter.status);
  if (filter.after !== undefined) {
    query.whereRaw('(bookings.created_at, bookings.id) < (?::timestamptz, ?::uuid)', [
      filter.after.createdAt,
      filter.after.id,
    ]);
  }
  return query;
}

/** The page of the bookings listing the window asks for: one customer's or everyone's, optionally of one status. */
export function readBookingPage(
  database: Knex,
  window: PageWindow<ListedBookingRow, BookingPosition>,
  filter: { customerId?: string; status: BookingStatus | null },
): Promise<RowPage<ListedBookingRow>> {
  return readPage(
    window,
    bookingListQuery(database, { ...filter, ...(window.after === undefined ? {} : { after: window.after }) }),
  );
}

function decryptPassenger(row: PassengerRow, cipher: FieldCipher): Passenger {
  const phone = cipher.decryptOptional(row.phone);
  const birthDate = cipher.decryptOptional(row.birth_date);
  return {
    id: row.id,
    firstName: cipher.decrypt(row.first_name),
    lastName: cipher.decrypt(row.last_name),
    email: cipher.decrypt(row.email),
    ...(phone === null ? {} : { phone }),
    seatNumber: row.seat_number,
    fareClass: row.fare_class,
    ...(row.passenger_type === null ? {} : { passengerType: row.passenger_type }),
    ...(birthDate === null ? {} : { birthDate }),
  };
}

function bookingViewOfRow(
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
      ...(row.payment_action === null ? {} : { action: row.payment_action }),
    },
    departureTime: row.departure_time.toISOString(),
    ...(row.segment === null ? {} : { segment: row.segment }),
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.cancelled_at === null ? {} : { cancelledAt: row.cancelled_at.toISOString() }),
    ...(row.cancellation_reason === null ? {} : { cancellationReason: row.cancellation_reason }),
    ...(row.cancelled_passengers === null ? {} : { cancelledPassengers: row.cancelled_passengers }),
  };
}

/** The rows as views with their passengers (one query for all of them), in the rows' order. */
export async function bookingViews(
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
    .select('id', 'booking_id', ...passengerDetailColumns);
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
    return bookingViewOfRow(row, passengers, cipher);
  });
}

/**
 * The view the read model will hold for this snapshot. It stores no confirmation time, so a caller's own write
 * and a later read of the same version compare equal.
 */
export function bookingViewOfSnapshot(snapshot: BookingState): BookingView {
  const {
    paymentAttempts: _paymentAttempts,
    paymentIncidents: _paymentIncidents,
    refundRule: _refundRule,
    confirmedAt: _confirmedAt,
    boardings: _boardings,
    noShowsRecordedAt: _noShowsRecordedAt,
    ...view
  } = snapshot;
  return view;
}
