// What the activity tests share: a trip and customer of the file's own, booking snapshots, running an activity.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { Knex } from 'knex';
import type { BookingState, Passenger } from '../../src/domain/booking';
import { defaultRefundRule } from '../../src/domain/fares';
import type { FieldCipher } from '../../src/security/field-encryption';
import { openTestDatabase, testCipher } from './database';
import { createTrip, currency, standardPriceMinor, type TestTrip } from './trips';
import { insertUser } from './users';

/** The trip's STANDARD fare: what every seat of a snapshot costs. */
export const seatPrice = { amountMinor: standardPriceMinor, currency };

/** A trip of the file's own and the customer who books it. */
export interface ActivityTrip extends TestTrip {
  customerId: string;
}

/** What every activity test file starts from: a cipher, a connection pool and a trip of its own. */
export interface ActivityTestBed {
  cipher: FieldCipher;
  database: Knex;
  trip: ActivityTrip;
}

/**
 * Opens the pool and creates the trip in the calling file's beforeAll, removes both in its afterAll; register it
 * before the file's own hooks, which then run after it on the way in and on the way out.
 */
export function useActivityTestBed(options: { poolSize?: number } = {}): ActivityTestBed {
  const cipher = testCipher();
  let database: Knex | undefined;
  let trip: ActivityTrip | undefined;
  const started = <Value>(value: Value | undefined): Value => {
    if (value === undefined) throw new Error('the activity test bed is read before its beforeAll has run');
    return value;
  };

  beforeAll(async () => {
    database = openTestDatabase({ poolSize: options.poolSize ?? 6, applicationName: 'activity-tests' });
    const customer = await insertUser(database, cipher, { roles: ['customer'] });
    trip = { ...(await createTrip(database)), customerId: customer.id };
  });

  afterAll(async () => {
    await trip?.remove();
    if (trip !== undefined) await database?.('users').where({ id: trip.customerId }).delete();
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
  trip: ActivityTrip,
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
    departureTime: trip.departureTime.toISOString(),
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

type ActivityInput<Activity> = Activity extends (...input: infer Input) => Promise<unknown> ? Input : never;
type ActivityResult<Activity> = Activity extends (...input: never[]) => Promise<infer Result>
  ? Result
  : never;

/**
 * Runs `activities[name]` in a real activity Context, as a worker would; called on its object, as the worker
 * calls it, never as a detached method.
 */
export function runActivity<Activities, Name extends keyof Activities>(
  activities: Activities,
  name: Name,
  ...input: ActivityInput<Activities[Name]>
): Promise<ActivityResult<Activities[Name]>> {
  const activity = activities[name] as (...input: unknown[]) => Promise<ActivityResult<Activities[Name]>>;
  // Expected business failures would otherwise print a WARN with a stack trace each.
  return new MockActivityEnvironment(undefined, { logger: quietLogger }).run(
    (...args: unknown[]) => activity.apply(activities, args),
    ...input,
  );
}
