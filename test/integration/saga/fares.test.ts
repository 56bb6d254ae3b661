// Fares in the booking: passenger types and a discount code priced and held, the code's maximum under a race, the price guard.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createDiscountCode } from '../../../src/db/discount-codes';
import { findDomainError } from '../../../src/domain/errors';
import type { PassengerInput } from '../../../src/domain/booking';
import type { CreateBookingInput } from '../../../src/domain/validation';
import { domainErrorOf, eventually } from '../../support/outcomes';
import { useSagaTestBed } from '../../support/saga';
import { createCustomer } from '../../support/users';
import type { TestTrip } from '../../support/trips';

jest.setTimeout(180_000);

const testBed = useSagaTestBed(
  { seatCount: 64 },
  { environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '100' } },
);

/** Standard fares of the test trips: 2 500 minor units a seat. */
const seatPrice = 2500;

async function newCode(
  database: Knex,
  overrides: { maxUsages?: number; kind?: 'amount' | 'percent'; value?: number; validUntil?: string } = {},
): Promise<string> {
  const code = `T-${randomUUID().slice(0, 8).toUpperCase()}`;
  await createDiscountCode(
    database,
    {
      code,
      kind: overrides.kind ?? 'percent',
      value: overrides.value ?? 10,
      ...(overrides.kind === 'amount' ? { currency: 'EUR' } : {}),
      validFrom: new Date(Date.now() - 3_600_000).toISOString(),
      validUntil: overrides.validUntil ?? new Date(Date.now() + 86_400_000).toISOString(),
      routeIds: [],
      maxUsages: overrides.maxUsages ?? 100,
    },
    'test-agent',
  );
  return code;
}

function passenger(
  seatNumber: string,
  extra: Partial<Pick<PassengerInput, 'passengerType' | 'birthDate'>> = {},
): Record<string, unknown> {
  return {
    firstName: 'Pat',
    lastName: 'Family',
    email: 'pat@example.com',
    fareClass: 'STANDARD',
    ...(seatNumber === '' ? {} : { seatNumber }),
    ...extra,
  };
}

/** A birth date `years` before the trip's departure day (plus a month, so the birthday has passed). */
function bornYearsBefore(trip: TestTrip, years: number): string {
  const date = new Date(trip.departureTime);
  date.setUTCFullYear(date.getUTCFullYear() - years);
  date.setUTCMonth(date.getUTCMonth() - 1);
  return date.toISOString().slice(0, 10);
}

function familyRequest(
  trip: TestTrip,
  seats: [string, string, string],
  extra: Partial<CreateBookingInput> = {},
) {
  return {
    tripId: trip.tripId,
    passengers: [
      passenger(seats[0], { passengerType: 'ADULT' }),
      passenger(seats[1], { passengerType: 'ADULT' }),
      passenger(seats[2], { passengerType: 'CHILD', birthDate: bornYearsBefore(trip, 8) }),
      passenger('', { passengerType: 'INFANT', birthDate: bornYearsBefore(trip, 1) }),
    ],
    contactEmail: 'family@example.com',
    ...extra,
  };
}

async function usagesOf(database: Knex, code: string): Promise<number> {
  const row: { usages: number } | undefined = await database('discount_codes')
    .where({ code })
    .first('usages');
  return row?.usages ?? -1;
}

test('a family of two adults, a child and a lap infant with a discount code: priced per type, three seats held', async () => {
  const { saga, trip } = testBed;
  const customer = await createCustomer(saga.database, saga.cipher);
  const code = await newCode(saga.database);
  const booking = await saga.application.createBooking(
    customer,
    familyRequest(trip, ['1A', '1B', '1C'], { discountCode: ` ${code.toLowerCase()} ` }),
  );
  expect(booking.status).toBe('PENDING_PAYMENT');
  // Adults 100 %, child 50 %, infant free on a lap: 6 250 before the code, 10 % (625) off, shared by fare.
  expect(
    booking.price.lines.map((line) => [
      line.passengerType,
      line.seatNumber,
      line.amount.amountMinor,
      line.discount?.amountMinor,
    ]),
  ).toEqual([
    ['ADULT', '1A', 2250, 250],
    ['ADULT', '1B', 2250, 250],
    ['CHILD', '1C', 1125, 125],
    ['INFANT', '', 0, 0],
  ]);
  expect(booking.price.total.amountMinor).toBe(5625);
  expect(booking.price.discount).toMatchObject({
    code,
    kind: 'percent',
    value: 10,
    amount: { amountMinor: 625 },
  });
  expect(booking.passengers.map((traveller) => [traveller.passengerType, traveller.seatNumber])).toEqual([
    ['ADULT', '1A'],
    ['ADULT', '1B'],
    ['CHILD', '1C'],
    ['INFANT', ''],
  ]);
  const held: { seat_number: string }[] = await saga
    .database('seat_allocations')
    .where({ booking_id: booking.id })
    .whereIn('state', ['HELD', 'BOOKED'])
    .select('seat_number');
  expect(held.map((row) => row.seat_number).sort()).toEqual(['1A', '1B', '1C']);
  expect(await usagesOf(saga.database, code)).toBe(1);

  const paid = await saga.application.confirmPayment(customer, booking.id, { paymentToken: 'tok_visa' });
  expect(paid).toMatchObject({ status: 'CONFIRMED', amountPaid: { amountMinor: 5625 } });
});

test('50 creates at once with a code of at most 10 usages: exactly 10 bookings redeem it, the others are refused', async () => {
  const { saga, trip } = testBed;
  const code = await newCode(saga.database, { maxUsages: 10 });
  const customers = await Promise.all(
    Array.from({ length: 5 }, () => createCustomer(saga.database, saga.cipher)),
  );
  const seats = Array.from({ length: 50 }, (_, index) => `${Math.floor(index / 4) + 3}${'ABCD'[index % 4]}`);
  const outcomes = await Promise.all(
    seats.map((seatNumber, index) =>
      saga.application
        .createBooking(customers[index % customers.length], {
          tripId: trip.tripId,
          passengers: [passenger(seatNumber)],
          contactEmail: 'race@example.com',
          discountCode: code,
        })
        .then(
          (booking) => ({ booked: booking.id }),
          (error: unknown) => ({ refused: findDomainError(error) }),
        ),
    ),
  );
  const booked = outcomes.flatMap((outcome) => ('booked' in outcome ? [outcome.booked] : []));
  const refusals = outcomes.flatMap((outcome) => ('refused' in outcome ? [outcome.refused] : []));
  expect(booked).toHaveLength(10);
  expect(refusals.map((error) => `${error?.code}:${JSON.stringify(error?.details.reason)}`)).toEqual(
    Array.from({ length: 40 }, () => 'DISCOUNT_CODE_INVALID:"used_up"'),
  );
  expect(await usagesOf(saga.database, code)).toBe(10);
  const redemptions = await saga
    .database('discount_redemptions')
    .where({ code })
    .whereNull('released_at')
    .count<{ count: string }[]>({ count: '*' });
  expect(Number(redemptions[0]?.count)).toBe(10);
  // Refused creates hold nothing.
  const seatsHeld = await saga
    .database('seat_allocations')
    .where({ trip_id: trip.tripId })
    .whereIn('seat_number', seats)
    .whereIn('state', ['HELD', 'BOOKED'])
    .count<{ count: string }[]>({ count: '*' });
  expect(Number(seatsHeld[0]?.count)).toBe(10);
});

test('the code is given back when its booking is cancelled, and when it expires unpaid', async () => {
  const { saga, trip } = testBed;
  const customer = await createCustomer(saga.database, saga.cipher);
  const code = await newCode(saga.database, { maxUsages: 2 });
  const cancelled = await saga.application.createBooking(customer, {
    tripId: trip.tripId,
    passengers: [passenger('16A')],
    contactEmail: 'back@example.com',
    discountCode: code,
  });
  const shortHold = saga.applicationWith({ BOOKING_HOLD_SECONDS: '2' });
  const expiring = await shortHold.createBooking(customer, {
    tripId: trip.tripId,
    passengers: [passenger('16B')],
    contactEmail: 'back@example.com',
    discountCode: code,
  });
  expect(await usagesOf(saga.database, code)).toBe(2);
  await saga.application.cancelBooking(customer, cancelled.id, { reason: 'plans changed' });
  expect(await usagesOf(saga.database, code)).toBe(1);
  await eventually(
    () => saga.application.getBooking(customer, expiring.id),
    (booking) => booking.status === 'EXPIRED',
    { timeoutMs: 30_000 },
  );
  expect(await usagesOf(saga.database, code)).toBe(0);
  const released: { booking_id: string; released_at: Date | null }[] = await saga
    .database('discount_redemptions')
    .where({ code })
    .select('booking_id', 'released_at');
  expect(released.every((row) => row.released_at !== null)).toBe(true);
});

test('the price guard: another total is PRICE_CHANGED with the current price, and nothing is held or redeemed', async () => {
  const { saga, trip } = testBed;
  const customer = await createCustomer(saga.database, saga.cipher);
  const code = await newCode(saga.database);
  const request = familyRequest(trip, ['15A', '15B', '15C'], {
    discountCode: code,
    expectedTotal: { amountMinor: 4 * seatPrice, currency: 'EUR' },
  });
  const refusal = await domainErrorOf(saga.application.createBooking(customer, request));
  expect(refusal?.code).toBe('PRICE_CHANGED');
  expect(refusal?.details.currentTotal).toEqual({ amountMinor: 5625, currency: 'EUR' });
  const held = await saga
    .database('seat_allocations')
    .where({ trip_id: trip.tripId })
    .whereIn('seat_number', ['15A', '15B', '15C'])
    .count<{ count: string }[]>({ count: '*' });
  expect(Number(held[0]?.count)).toBe(0);
  expect(await usagesOf(saga.database, code)).toBe(0);
  const booked = await saga.application.createBooking(customer, {
    ...request,
    expectedTotal: { amountMinor: 5625, currency: 'EUR' },
  });
  expect(booked.price.total.amountMinor).toBe(5625);
});

test('bad fares input, each a clear error', async () => {
  const { saga, trip } = testBed;
  const customer = await createCustomer(saga.database, saga.cipher);
  const create = (input: Record<string, unknown>) =>
    domainErrorOf(
      saga.application.createBooking(customer, {
        tripId: trip.tripId,
        contactEmail: 'bad@example.com',
        ...input,
      }),
    );
  const teenAsChild = await create({
    passengers: [
      passenger('14A', { passengerType: 'ADULT' }),
      passenger('14B', { passengerType: 'CHILD', birthDate: bornYearsBefore(trip, 13) }),
    ],
  });
  expect(teenAsChild?.fieldViolations).toEqual([
    { field: 'passengers[1].birth_date', message: expect.stringMatching(/13 .*CHILD.*3.12/) },
  ]);
  const infantAlone = await create({
    passengers: [
      passenger('14A', { passengerType: 'CHILD', birthDate: bornYearsBefore(trip, 10) }),
      passenger('', { passengerType: 'INFANT', birthDate: bornYearsBefore(trip, 1) }),
    ],
  });
  expect(infantAlone?.code).toBe('VALIDATION_FAILED');
  expect(infantAlone?.fieldViolations.map((violation) => violation.message).join(' ')).toMatch(/adult/i);
  expect(
    (await create({ passengers: [passenger('14A')], discountCode: 'NO-SUCH-CODE' }))?.details,
  ).toMatchObject({
    reason: 'unknown',
  });
  const expired = await newCode(saga.database, { validUntil: new Date(Date.now() - 1000).toISOString() });
  expect((await create({ passengers: [passenger('14A')], discountCode: expired }))?.details).toMatchObject({
    reason: 'expired',
  });
  const usedUp = await newCode(saga.database, { maxUsages: 1 });
  await saga.application.createBooking(customer, {
    tripId: trip.tripId,
    contactEmail: 'bad@example.com',
    passengers: [passenger('14C')],
    discountCode: usedUp,
  });
  expect((await create({ passengers: [passenger('14A')], discountCode: usedUp }))?.details).toMatchObject({
    reason: 'used_up',
  });
  expect(
    (await create({ passengers: [passenger('14A', { birthDate: '2026-02-30' })] }))?.fieldViolations,
  ).toEqual([{ field: 'passengers[0].birth_date', message: 'must be a date YYYY-MM-DD that exists' }]);
});
