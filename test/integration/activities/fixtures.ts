// Test data of the activity tests: each file gets its own stops, route, layout, trip and customer, removed afterwards.
import { randomBytes, randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { Knex } from 'knex';
import { createDatabase } from '../../../src/db/connection';
import type { BookingState, Passenger } from '../../../src/domain/booking';
import { defaultRefundRule } from '../../../src/domain/fares';
import { createFieldCipher, type FieldCipher } from '../../../src/security/field-encryption';

export const seatPrice = { amountMinor: 2590, currency: 'EUR' };

export function createTestCipher(): FieldCipher {
  return createFieldCipher({
    keys: { test: randomBytes(32) },
    activeKeyId: 'test',
    blindIndexKey: randomBytes(32),
  });
}

export function openTestDatabase(poolSize = 6): Knex {
  return createDatabase(process.env.DATABASE_URL!, { poolSize, applicationName: 'activity-tests' });
}

export interface TestTrip {
  tripId: string;
  routeId: string;
  layoutId: string;
  customerId: string;
  departureTime: string;
  /** Deletes everything this fixture and its bookings created, the simulator's ledger rows included. */
  remove(): Promise<void>;
}

/** What every activity test file starts from: a cipher, a connection pool and a trip of its own. */
export interface ActivityTestBed {
  cipher: FieldCipher;
  database: Knex;
  trip: TestTrip;
}

/**
 * Opens the pool and creates the trip in the calling file's beforeAll, removes both in its afterAll; register it
 * before the file's own hooks, which then run after it on the way in and on the way out.
 */
export function useActivityTestBed(options: { poolSize?: number } = {}): ActivityTestBed {
  const cipher = createTestCipher();
  let database: Knex | undefined;
  let trip: TestTrip | undefined;
  const started = <Value>(value: Value | undefined): Value => {
    if (value === undefined) throw new Error('the activity test bed is read before its beforeAll has run');
    return value;
  };

  beforeAll(async () => {
    database = openTestDatabase(options.poolSize);
    trip = await createTestTrip(database, cipher);
  });

  afterAll(async () => {
    await trip?.remove();
    await database?.destroy();
  });

  return {
    cipher,
    get database() {
      return started(database);
    },
    get trip() {
      return started(trip);
    },
  };
}

const seatLetters = ['A', 'B', 'C', 'D'];
const rowCount = 4;

/** A trip on a 4×4 layout (seats 1A to 4D) of its own, departing in a week, and a customer to book it. */
export async function createTestTrip(database: Knex, cipher: FieldCipher): Promise<TestTrip> {
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const stopCodes = [`A${suffix}`, `B${suffix}`];
  await database('stops').insert(
    stopCodes.map((code, index) => ({
      code,
      name: `Activity test stop ${index + 1}`,
      city: index === 0 ? 'Lisbon' : 'Porto',
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    })),
  );
  const [{ id: routeId }] = await database('routes')
    .insert({
      code: `ACT-${suffix}`,
      origin_stop_code: stopCodes[0],
      destination_stop_code: stopCodes[1],
      operator_name: 'Activity tests',
      distance_km: 313,
      typical_duration_minutes: 210,
    })
    .returning('id');
  const [{ id: layoutId }] = await database('seat_layouts')
    .insert({
      code: `ACT-${suffix}`,
      name: 'Activity test layout',
      row_count: rowCount,
      seats_per_row: seatLetters.length,
      seat_count: rowCount * seatLetters.length,
    })
    .returning('id');
  await database('seats').insert(
    Array.from({ length: rowCount }, (_, rowIndex) =>
      seatLetters.map((letter) => ({
        layout_id: layoutId,
        seat_number: `${rowIndex + 1}${letter}`,
        row_number: rowIndex + 1,
        fare_class: 'STANDARD',
      })),
    ).flat(),
  );
  const departure = new Date(Date.now() + 7 * 24 * 3_600_000);
  const [{ id: tripId }] = await database('trips')
    .insert({
      route_id: routeId,
      layout_id: layoutId,
      departure_time: departure,
      arrival_time: new Date(departure.getTime() + 210 * 60_000),
    })
    .returning('id');
  await database('trip_fares').insert({
    trip_id: tripId,
    fare_class: 'STANDARD',
    amount_minor: seatPrice.amountMinor,
    currency: seatPrice.currency,
  });
  const email = `activity-test-${suffix}@example.com`;
  const [{ id: customerId }] = await database('users')
    .insert({
      email: cipher.encrypt(email),
      email_lookup: cipher.blindIndex(email),
      password_hash: 'not-a-login-account',
      display_name: cipher.encrypt('Activity Tester'),
    })
    .returning('id');

  return {
    tripId,
    routeId,
    layoutId,
    customerId,
    departureTime: departure.toISOString(),
    async remove() {
      const bookingIds: string[] = await database('bookings').where({ trip_id: tripId }).pluck('id');
      for (const bookingId of bookingIds) {
        const keyPattern = `${bookingId}:%`;
        const chargeIds = database('payment_simulator.charges')
          .where('idempotency_key', 'like', keyPattern)
          .select('id');
        await database('payment_simulator.refunds').whereIn('charge_id', chargeIds).delete();
        await database('payment_simulator.charges').where('idempotency_key', 'like', keyPattern).delete();
        await database('payment_simulator.transient_failures')
          .where('idempotency_key', 'like', keyPattern)
          .delete();
      }
      await database('bookings').whereIn('id', bookingIds).delete();
      await database('routes').where({ id: routeId }).delete();
      await database('seat_layouts').where({ id: layoutId }).delete();
      await database('stops').whereIn('code', stopCodes).delete();
      await database('users').where({ id: customerId }).delete();
    },
  };
}

export function testPassenger(seatNumber: string, overrides: Partial<Passenger> = {}): Passenger {
  return {
    id: randomUUID(),
    firstName: 'Ana',
    lastName: 'Silva',
    email: 'ana.silva@example.com',
    phone: '+351912345678',
    seatNumber,
    fareClass: 'STANDARD',
    ...overrides,
  };
}

/** A PENDING_PAYMENT booking of the trip, version 1, as the workflow would hand it to ReserveSeats. */
export function bookingSnapshot(
  trip: TestTrip,
  passengers: readonly Passenger[],
  overrides: Partial<BookingState> = {},
): BookingState {
  const now = new Date().toISOString();
  const lines = passengers.map((passenger) => ({
    passengerId: passenger.id,
    seatNumber: passenger.seatNumber,
    fareClass: passenger.fareClass,
    amount: seatPrice,
  }));
  return {
    id: randomUUID(),
    customerId: trip.customerId,
    tripId: trip.tripId,
    routeId: trip.routeId,
    status: 'PENDING_PAYMENT',
    passengers,
    contactEmail: 'contact@example.com',
    contactPhone: '+351911111111',
    price: {
      lines,
      total: { amountMinor: seatPrice.amountMinor * lines.length, currency: seatPrice.currency },
    },
    amountPaid: { amountMinor: 0, currency: 'EUR' },
    amountRefunded: { amountMinor: 0, currency: 'EUR' },
    holdExpiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
    payment: { status: 'NONE' },
    paymentAttempts: [],
    refundRule: defaultRefundRule,
    departureTime: trip.departureTime,
    version: 1,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

const quietLogger = new DefaultLogger('ERROR');

/** Awaits an activity run that must fail and returns the ApplicationFailure it threw. */
export async function failureOf(run: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ApplicationFailure) return error;
    throw error;
  }
  throw new Error('expected the activity to fail');
}

/** Runs an activity in a real activity Context, as a worker would. */
export function runActivity<P extends unknown[], R>(
  activity: (...args: P) => Promise<R>,
  ...args: P
): Promise<R> {
  // Expected business failures would otherwise print a WARN with a stack trace each.
  return new MockActivityEnvironment(undefined, { logger: quietLogger }).run(activity, ...args);
}
