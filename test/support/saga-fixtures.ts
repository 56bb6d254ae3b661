// Test data and probes for saga tests: trips and customers of their own, the seat inventory and the payment ledger.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Actor } from '../../src/domain/actor';
import type { Role } from '../../src/domain/roles';
import { findDomainError, type DomainError } from '../../src/domain/errors';
import { emailLookup } from '../../src/db/user-email';
import type { FareClass } from '../../src/domain/booking';
import type { CreateBookingInput, PassengerInputData } from '../../src/domain/validation';
import type { FieldCipher } from '../../src/security/field-encryption';

export const standardPriceMinor = 2500;
export const premiumPriceMinor = 4000;
export const currency = 'EUR';
const seatLetters = ['A', 'B', 'C', 'D', 'E', 'F'];
const seatsPerRow = 4;

export interface SagaTrip {
  tripId: string;
  routeId: string;
  layoutId: string;
  departureTime: Date;
  /** Every seat of the bus, in order: `1A`, `1B`, ... */
  seatNumbers: string[];
  /** The seats of the first `premiumRows` rows. */
  premiumSeatNumbers: string[];
}

export interface SagaTripOptions {
  /** Seats on the bus, four per row (the last row may be shorter); 16 by default. */
  seatCount?: number;
  /** How many of the first rows are PREMIUM; the others are STANDARD. */
  premiumRows?: number;
  /** Milliseconds from now to departure; a week by default. */
  departureInMs?: number;
}

/** A trip on its own route, stops and layout, so test files never share seats. */
export async function createSagaTrip(database: Knex, options: SagaTripOptions = {}): Promise<SagaTrip> {
  const seatCount = options.seatCount ?? 16;
  const premiumRows = options.premiumRows ?? 0;
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const stopCodes = [`SA${suffix}`, `SB${suffix}`];
  await database('stops').insert(
    stopCodes.map((code, index) => ({
      code,
      name: `Saga test stop ${index + 1}`,
      city: index === 0 ? 'Lisbon' : 'Porto',
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    })),
  );
  const [{ id: routeId }] = await database('routes')
    .insert({
      code: `SAGA-${suffix}`,
      origin_stop_code: stopCodes[0],
      destination_stop_code: stopCodes[1],
      operator_name: 'Saga tests',
      distance_km: 313,
      typical_duration_minutes: 210,
    })
    .returning('id');
  const rowCount = Math.ceil(seatCount / seatsPerRow);
  const [{ id: layoutId }] = await database('seat_layouts')
    .insert({
      code: `SAGA-${suffix}`,
      name: `Saga test layout of ${seatCount} seats`,
      row_count: rowCount,
      seats_per_row: seatsPerRow,
      seat_count: seatCount,
    })
    .returning('id');
  const seats = Array.from({ length: seatCount }, (_, index) => {
    const rowNumber = Math.floor(index / seatsPerRow) + 1;
    const fareClass: FareClass = rowNumber <= premiumRows ? 'PREMIUM' : 'STANDARD';
    return {
      layout_id: layoutId,
      seat_number: `${rowNumber}${seatLetters[index % seatsPerRow]}`,
      row_number: rowNumber,
      fare_class: fareClass,
    };
  });
  await database('seats').insert(seats);
  const departureTime = new Date(Date.now() + (options.departureInMs ?? 7 * 24 * 3_600_000));
  const [{ id: tripId }] = await database('trips')
    .insert({
      route_id: routeId,
      layout_id: layoutId,
      departure_time: departureTime,
      arrival_time: new Date(departureTime.getTime() + 210 * 60_000),
    })
    .returning('id');
  await database('trip_fares').insert([
    { trip_id: tripId, fare_class: 'STANDARD', amount_minor: standardPriceMinor, currency },
    { trip_id: tripId, fare_class: 'PREMIUM', amount_minor: premiumPriceMinor, currency },
  ]);
  return {
    tripId,
    routeId,
    layoutId,
    departureTime,
    seatNumbers: seats.map((seat) => seat.seat_number),
    premiumSeatNumbers: seats.filter((seat) => seat.fare_class === 'PREMIUM').map((seat) => seat.seat_number),
  };
}

/** A user account and the Actor a verified token for it would give. */
export async function createSagaCustomer(
  database: Knex,
  cipher: FieldCipher,
  roles: Role[] = ['customer'],
): Promise<Actor> {
  const email = `saga-${randomBytes(6).toString('hex')}@example.com`;
  const [{ id }] = await database('users')
    .insert({
      email: cipher.encrypt(email),
      email_lookup: emailLookup(cipher, email),
      password_hash: 'not-a-login-account',
      display_name: cipher.encrypt('Saga Tester'),
      roles,
    })
    .returning('id');
  return { userId: id, roles, scopes: ['bookings:read', 'bookings:write', 'payments:write'] };
}

export function passengerFor(
  seatNumber: string,
  fareClass: FareClass = 'STANDARD',
  overrides: Partial<PassengerInputData> = {},
): PassengerInputData {
  return {
    firstName: 'Ana',
    lastName: 'Silva',
    email: 'ana.silva@example.com',
    seatNumber,
    fareClass,
    ...overrides,
  };
}

/** A create request for `seatNumbers` (STANDARD unless listed in `premiumSeats`). */
export function bookingRequest(
  trip: Pick<SagaTrip, 'tripId' | 'premiumSeatNumbers'>,
  seatNumbers: readonly string[],
  options: { contactPhone?: string } = {},
): CreateBookingInput {
  return {
    tripId: trip.tripId,
    passengers: seatNumbers.map((seatNumber, index) =>
      passengerFor(seatNumber, trip.premiumSeatNumbers.includes(seatNumber) ? 'PREMIUM' : 'STANDARD', {
        firstName: `Passenger${index + 1}`,
      }),
    ),
    contactEmail: 'contact@example.com',
    ...(options.contactPhone === undefined ? {} : { contactPhone: options.contactPhone }),
  };
}

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

/** The trip's seats held or booked by two bookings at once (invariant 1): always empty. */
export async function doublyHeldSeats(database: Knex, tripId: string): Promise<string[]> {
  return database('seat_allocations')
    .where({ trip_id: tripId })
    .whereIn('state', ['HELD', 'BOOKED'])
    .groupBy('seat_number')
    .havingRaw('count(*) > 1')
    .pluck('seat_number');
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

/** Polls `probe` until it returns a value `accept` takes, or fails after `timeoutMs` with the last value seen. */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `condition not met in ${options.timeoutMs ?? 15_000} ms; last value ${JSON.stringify(value)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

/** The DomainError a call failed with; undefined when it succeeded or failed with something else. */
export async function domainErrorOf(call: Promise<unknown>): Promise<DomainError | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return findDomainError(error);
  }
}

/** The code of the DomainError a call failed with (or `resolved` when it did not fail). */
export async function errorCodeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'resolved';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}
