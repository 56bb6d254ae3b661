// ReserveSeats, ConfirmSeats and ReleaseSeats against PostgreSQL: all-or-nothing holds, idempotency, lapsed holds.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createSeatActivities } from '../../../src/activities/seats';
import type { ReserveSeatsInput, SeatActivities } from '../../../src/activities/interface';
import type { BookingState } from '../../../src/domain/booking';
import { findDomainError } from '../../../src/domain/errors';
import { activityKey } from '../../../src/domain/ids';
import {
  bookingSnapshot,
  failureOf,
  runActivity,
  seatPrice,
  testPassenger,
  useActivityTestBed,
} from '../../support/activities';

const testBed = useActivityTestBed({ poolSize: 12 });
let seats: SeatActivities;

beforeAll(() => {
  seats = createSeatActivities({
    database: testBed.database,
    cipher: testBed.cipher,
    lapsedHoldGraceSeconds: 0,
  });
});

function reservation(booking: BookingState, overrides: Partial<ReserveSeatsInput> = {}): ReserveSeatsInput {
  return {
    bookingId: booking.id,
    tripId: booking.tripId,
    seats: booking.passengers.map((passenger) => ({
      passengerId: passenger.id,
      seatNumber: passenger.seatNumber,
      fareClass: passenger.fareClass,
    })),
    holdExpiresAt: booking.holdExpiresAt,
    idempotencyKey: activityKey(booking.id, 'reserve-seats', booking.version),
    booking,
    ...overrides,
  };
}

function newBooking(...seatNumbers: string[]): BookingState {
  return bookingSnapshot(
    testBed.trip,
    seatNumbers.map((seatNumber) => testPassenger(seatNumber)),
  );
}

async function allocations(bookingId: string) {
  return testBed
    .database<{ booking_id: string; seat_number: string; state: string; passenger_id: string | null }>(
      'seat_allocations',
    )
    .where({ booking_id: bookingId })
    .orderBy('seat_number')
    .select('seat_number', 'state', 'passenger_id');
}

async function activeSeatCounts(seatNumbers: string[]): Promise<Record<string, number>> {
  const rows: { seat_number: string; count: number }[] = await testBed
    .database('seat_allocations')
    .where({ trip_id: testBed.trip.tripId })
    .whereIn('seat_number', seatNumbers)
    .whereIn('state', ['HELD', 'BOOKED'])
    .groupBy('seat_number')
    .select('seat_number', testBed.database.raw('count(*)::int AS count'));
  return Object.fromEntries(rows.map((row) => [row.seat_number, row.count]));
}

describe('ReserveSeats', () => {
  it('holds every seat, records the booking row in the same step and links each seat to its passenger', async () => {
    const booking = newBooking('1A', '1B');
    await runActivity(seats, 'ReserveSeats', reservation(booking));

    expect(await allocations(booking.id)).toEqual(
      booking.passengers
        .map((passenger) => ({
          seat_number: passenger.seatNumber,
          state: 'HELD',
          passenger_id: passenger.id,
        }))
        .sort((left, right) => left.seat_number.localeCompare(right.seat_number)),
    );
    const row = await testBed
      .database<{ id: string; contact_email: string }>('bookings')
      .where({ id: booking.id })
      .first();
    expect(row).toMatchObject({
      status: 'PENDING_PAYMENT',
      version: 1,
      price_total_minor: 2 * seatPrice.amountMinor,
    });
    expect(row?.contact_email).toMatch(/^enc:v1:/);
    expect(
      await testBed.database('passengers').where({ booking_id: booking.id }).count({ count: '*' }),
    ).toEqual([{ count: 2 }]);
  });

  it('is a no-op when retried, also when attempts overlap', async () => {
    const booking = newBooking('2A', '2B');
    const input = reservation(booking);
    await Promise.all([1, 2, 3].map(() => runActivity(seats, 'ReserveSeats', input)));
    await runActivity(seats, 'ReserveSeats', input);

    expect(await allocations(booking.id)).toHaveLength(2);
    expect(await activeSeatCounts(['2A', '2B'])).toEqual({ '2A': 1, '2B': 1 });
  });

  it('holds nothing and records no booking when one of two seats is taken', async () => {
    const holder = newBooking('1C');
    await runActivity(seats, 'ReserveSeats', reservation(holder));

    const loser = newBooking('1C', '1D');
    const failure = await failureOf(runActivity(seats, 'ReserveSeats', reservation(loser)));
    expect(failure.type).toBe('SEAT_UNAVAILABLE');
    expect(failure.nonRetryable).toBe(true);
    expect(findDomainError(failure)?.details).toEqual({ seatNumbers: ['1C'] });

    expect(await allocations(loser.id)).toEqual([]);
    expect(await testBed.database('bookings').where({ id: loser.id }).first()).toBeUndefined();
    expect(await activeSeatCounts(['1C', '1D'])).toEqual({ '1C': 1 });
  });

  it('lets exactly one of many concurrent bookings hold the same seats', async () => {
    const contenders = Array.from({ length: 8 }, () => newBooking('3A', '3B'));
    const outcomes = await Promise.allSettled(
      contenders.map((booking) => runActivity(seats, 'ReserveSeats', reservation(booking))),
    );
    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const losers = outcomes.flatMap((outcome): unknown[] =>
      outcome.status === 'rejected' ? [outcome.reason] : [],
    );
    expect(winners).toHaveLength(1);
    expect(losers.map((reason) => findDomainError(reason)?.code)).toEqual(
      Array.from({ length: 7 }, () => 'SEAT_UNAVAILABLE'),
    );
    expect(await activeSeatCounts(['3A', '3B'])).toEqual({ '3A': 1, '3B': 1 });
    expect(
      await testBed
        .database('bookings')
        .whereIn(
          'id',
          contenders.map((booking) => booking.id),
        )
        .count({ count: '*' }),
    ).toEqual([{ count: 1 }]);
  });

  it('rejects a seat the trip layout does not have (the database says so), holding nothing', async () => {
    const booking = newBooking('4D', '9D');
    const failure = await failureOf(runActivity(seats, 'ReserveSeats', reservation(booking)));
    expect(failure).toMatchObject({ type: 'VALIDATION_FAILED', nonRetryable: true });
    expect(findDomainError(failure)?.fieldViolations).toEqual([
      { field: 'seats[1].seat_number', message: 'seat 9D does not exist on this trip' },
    ]);
    expect(await testBed.database('bookings').where({ id: booking.id }).first()).toBeUndefined();
    expect(await activeSeatCounts(['4D'])).toEqual({});
  });

  it('rejects a trip that does not exist as NOT_FOUND, writing nothing', async () => {
    const booking = { ...newBooking('1A'), tripId: randomUUID() };
    const failure = await failureOf(runActivity(seats, 'ReserveSeats', reservation(booking)));
    expect(failure).toMatchObject({ type: 'NOT_FOUND', nonRetryable: true });
    expect(failure.message).toContain(booking.tripId);
    expect(await testBed.database('bookings').where({ id: booking.id }).first()).toBeUndefined();
  });

  it('needs the booking snapshot when no booking row exists yet', async () => {
    const booking = newBooking('4D');
    const failure = await failureOf(
      runActivity(seats, 'ReserveSeats', reservation(booking, { booking: undefined })),
    );
    expect(failure).toMatchObject({ type: 'NOT_FOUND', nonRetryable: true });
    expect(await allocations(booking.id)).toEqual([]);
  });

  it('adds a seat to an existing booking without a snapshot; the passenger link waits for the passenger row', async () => {
    const booking = newBooking('4A');
    await runActivity(seats, 'ReserveSeats', reservation(booking));
    const addedPassengerId = testPassenger('4B').id;
    await runActivity(seats, 'ReserveSeats', {
      bookingId: booking.id,
      tripId: booking.tripId,
      seats: [{ passengerId: addedPassengerId, seatNumber: '4B', fareClass: 'STANDARD' }],
      holdExpiresAt: booking.holdExpiresAt,
      idempotencyKey: activityKey(booking.id, 'reserve-seats', 2),
    });
    expect(await allocations(booking.id)).toEqual([
      { seat_number: '4A', state: 'HELD', passenger_id: booking.passengers[0].id },
      { seat_number: '4B', state: 'HELD', passenger_id: null },
    ]);
  });
});

describe('ConfirmSeats and ReleaseSeats', () => {
  it('book held seats, release some or all, and repeat without effect', async () => {
    const booking = newBooking('2C', '2D');
    await runActivity(seats, 'ReserveSeats', reservation(booking));
    const confirm = { bookingId: booking.id, tripId: booking.tripId, idempotencyKey: 'confirm' };
    await runActivity(seats, 'ConfirmSeats', confirm);
    await runActivity(seats, 'ConfirmSeats', confirm);
    expect((await allocations(booking.id)).map((row) => row.state)).toEqual(['BOOKED', 'BOOKED']);

    const releaseOne = {
      bookingId: booking.id,
      tripId: booking.tripId,
      seatNumbers: ['2C'],
      idempotencyKey: activityKey(booking.id, 'release-seats', 2),
    };
    await runActivity(seats, 'ReleaseSeats', releaseOne);
    await runActivity(seats, 'ReleaseSeats', releaseOne);
    expect((await allocations(booking.id)).map((row) => row.state)).toEqual(['RELEASED', 'BOOKED']);

    const releaseAll = {
      bookingId: booking.id,
      tripId: booking.tripId,
      idempotencyKey: activityKey(booking.id, 'release-seats', 3),
    };
    await runActivity(seats, 'ReleaseSeats', releaseAll);
    await runActivity(seats, 'ReleaseSeats', releaseAll);
    expect((await allocations(booking.id)).map((row) => row.state)).toEqual(['RELEASED', 'RELEASED']);

    // A released seat is free for the next booking.
    const next = newBooking('2C');
    await runActivity(seats, 'ReserveSeats', reservation(next));
    expect(await activeSeatCounts(['2C', '2D'])).toEqual({ '2C': 1 });
  });
});

describe('lapsed holds', () => {
  const lapsed = () => new Date(Date.now() - 60_000).toISOString();

  it('are taken over by another booking, and the lapsed booking can no longer confirm', async () => {
    const abandoned = newBooking('3C');
    await runActivity(seats, 'ReserveSeats', reservation(abandoned, { holdExpiresAt: lapsed() }));

    const next = newBooking('3C');
    await runActivity(seats, 'ReserveSeats', reservation(next));
    expect(await allocations(abandoned.id)).toEqual([expect.objectContaining({ state: 'RELEASED' })]);
    expect(await allocations(next.id)).toEqual([expect.objectContaining({ state: 'HELD' })]);

    const failure = await failureOf(
      runActivity(seats, 'ConfirmSeats', {
        bookingId: abandoned.id,
        tripId: testBed.trip.tripId,
        idempotencyKey: 'late',
      }),
    );
    expect(failure).toMatchObject({ type: 'HOLD_EXPIRED', nonRetryable: true });
  });

  it('of a booking already CONFIRMED, or within the grace period, still block other bookings', async () => {
    const confirmed = newBooking('3D');
    await runActivity(seats, 'ReserveSeats', reservation(confirmed, { holdExpiresAt: lapsed() }));
    await testBed.database('bookings').where({ id: confirmed.id }).update({ status: 'CONFIRMED' });
    const blocked = await failureOf(runActivity(seats, 'ReserveSeats', reservation(newBooking('3D'))));
    expect(blocked.type).toBe('SEAT_UNAVAILABLE');

    const patientSeats = createSeatActivities({
      database: testBed.database,
      cipher: testBed.cipher,
      lapsedHoldGraceSeconds: 3600,
    });
    const recent = newBooking('4C');
    await runActivity(patientSeats, 'ReserveSeats', reservation(recent, { holdExpiresAt: lapsed() }));
    const tooEarly = await failureOf(
      runActivity(patientSeats, 'ReserveSeats', reservation(newBooking('4C'))),
    );
    expect(tooEarly.type).toBe('SEAT_UNAVAILABLE');
    expect(await allocations(recent.id)).toEqual([expect.objectContaining({ state: 'HELD' })]);
  });
});
