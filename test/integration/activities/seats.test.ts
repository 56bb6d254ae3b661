// ReserveSeats, ConfirmSeats and ReleaseSeats against PostgreSQL: all-or-nothing holds, idempotency, lapsed holds.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createSeatActivities } from '../../../src/activities/seats';
import type { ReserveSeatsInput, SeatActivities } from '../../../src/activities/interface';
import type { BookingState } from '../../../src/domain/booking';
import { findDomainError } from '../../../src/domain/errors';
import { activityKey } from '../../../src/domain/ids';
import { createTrip, type TestTrip } from '../../support/trips';
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
    expect(findDomainError(failure)?.details).toMatchObject({ seatNumbers: ['1C'] });

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

describe('segments', () => {
  // Three stops, two legs: leg 0 runs from the origin to the middle stop, leg 1 from there to the destination.
  let trip: TestTrip;
  let stopCodes: string[];

  beforeAll(async () => {
    trip = await createTrip(testBed.database, { middleStops: 1 });
    stopCodes = trip.stopCodes;
  });
  afterAll(() => trip.remove());

  function segmentBooking(...seatNumbers: string[]): BookingState {
    return bookingSnapshot(
      { ...testBed.trip, tripId: trip.tripId, routeId: trip.routeId },
      seatNumbers.map((seatNumber) => testPassenger(seatNumber)),
    );
  }

  async function legsOf(bookingId: string) {
    const rows: { seat_number: string; legs: string; state: string }[] = await testBed
      .database('seat_allocations')
      .where({ booking_id: bookingId })
      .orderBy(['seat_number', 'created_at'])
      .select('seat_number', 'legs', 'state');
    return rows.map((row) => `${row.seat_number} ${row.legs} ${row.state}`);
  }

  it('lets adjacent segments of one seat both hold it, and refuses one sharing a leg, naming the legs', async () => {
    const first = segmentBooking('1A');
    const second = segmentBooking('1A');
    await runActivity(seats, 'ReserveSeats', reservation(first, { legs: { from: 0, to: 1 } }));
    await runActivity(seats, 'ReserveSeats', reservation(second, { legs: { from: 1, to: 2 } }));

    const whole = segmentBooking('1A');
    const failure = await failureOf(runActivity(seats, 'ReserveSeats', reservation(whole)));
    expect(failure.type).toBe('SEAT_UNAVAILABLE');
    const [origin, middle, destination] = stopCodes;
    expect(failure.message).toBe(
      `Seat 1A is not available: 1A is taken on ${origin}→${middle}, ${middle}→${destination}`,
    );
    expect(findDomainError(failure)?.details).toEqual({
      seatNumbers: ['1A'],
      overlappingLegs: [`1A ${origin}→${middle}, ${middle}→${destination}`],
    });
    expect(await legsOf(whole.id)).toEqual([]);
  });

  it('frees the seat of a released whole-route booking for both of its segments', async () => {
    const whole = segmentBooking('1B');
    await runActivity(seats, 'ReserveSeats', reservation(whole));
    expect(await legsOf(whole.id)).toEqual(['1B [0,2) HELD']);
    const first = segmentBooking('1B');
    expect(
      (await failureOf(runActivity(seats, 'ReserveSeats', reservation(first, { legs: { from: 0, to: 1 } }))))
        .type,
    ).toBe('SEAT_UNAVAILABLE');
    await runActivity(seats, 'ReleaseSeats', {
      bookingId: whole.id,
      tripId: trip.tripId,
      idempotencyKey: activityKey(whole.id, 'release-seats', 'cancel'),
    });
    const second = segmentBooking('1B');
    await runActivity(seats, 'ReserveSeats', reservation(first, { legs: { from: 0, to: 1 } }));
    await runActivity(seats, 'ReserveSeats', reservation(second, { legs: { from: 1, to: 2 } }));
    expect(await legsOf(first.id)).toEqual(['1B [0,1) HELD']);
    expect(await legsOf(second.id)).toEqual(['1B [1,2) HELD']);
  });

  it('changes a segment by holding the new legs beside the old, then cutting the old down to the new', async () => {
    const booking = segmentBooking('2A');
    const change = (legs: { from: number; to: number }, revision: string) => ({
      reserve: reservation(booking, {
        legs,
        idempotencyKey: activityKey(booking.id, 'reserve-seats', revision),
      }),
      release: {
        bookingId: booking.id,
        tripId: trip.tripId,
        keepLegs: legs,
        idempotencyKey: activityKey(booking.id, 'release-seats', revision),
      },
    });
    await runActivity(seats, 'ReserveSeats', reservation(booking, { legs: { from: 0, to: 1 } }));

    const longer = change({ from: 0, to: 2 }, 'longer');
    await runActivity(seats, 'ReserveSeats', longer.reserve);
    expect(await legsOf(booking.id)).toEqual(['2A [0,1) HELD', '2A [1,2) HELD']);
    await runActivity(seats, 'ReleaseSeats', longer.release);
    expect(await legsOf(booking.id)).toEqual(['2A [0,1) HELD', '2A [1,2) HELD']);

    const later = change({ from: 1, to: 2 }, 'later');
    await runActivity(seats, 'ReserveSeats', later.reserve);
    await runActivity(seats, 'ReleaseSeats', later.release);
    await runActivity(seats, 'ReleaseSeats', later.release);
    expect(await legsOf(booking.id)).toEqual(['2A [0,1) RELEASED', '2A [1,2) HELD']);

    // The freed leg is anyone's again.
    const other = segmentBooking('2A');
    await runActivity(seats, 'ReserveSeats', reservation(other, { legs: { from: 0, to: 1 } }));
  });
});
