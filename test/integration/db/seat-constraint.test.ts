// Invariant 1 at the database level: a leg of a trip's seat is held or booked by at most one allocation, even under races.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { openTestDatabase, testCipher } from '../../support/database';

const NO_OVERLAPPING_LEGS = 'seat_allocations_no_overlapping_legs';
const CONCURRENT_ATTEMPTS = 20;

const cipher = testCipher();
const suffix = randomBytes(4).toString('hex').toUpperCase();

let database: Knex;
let customerId: string;
let tripId: string;
let layoutId: string;
let otherLayoutId: string;
let routeId: string;
let departureTime: Date;

async function createBooking(connection: Knex = database): Promise<string> {
  const [row] = await connection('bookings')
    .insert({
      customer_id: customerId,
      trip_id: tripId,
      route_id: routeId,
      status: 'PENDING_PAYMENT',
      contact_email: cipher.encrypt(`seat-test-${suffix}@example.com`),
      currency: 'EUR',
      price_total_minor: 1590,
      hold_expires_at: new Date(Date.now() + 15 * 60_000),
      departure_time: departureTime,
    })
    .returning<{ id: string }[]>('id');
  return row.id;
}

function allocate(
  bookingId: string,
  seatNumber: string,
  state: 'HELD' | 'BOOKED',
  connection: Knex = database,
  legs?: [number, number],
) {
  return connection('seat_allocations')
    .insert({
      trip_id: tripId,
      seat_number: seatNumber,
      booking_id: bookingId,
      state,
      ...(legs === undefined ? {} : { legs: connection.raw('int4range(?, ?)', legs) }),
      hold_expires_at: state === 'HELD' ? new Date(Date.now() + 15 * 60_000) : null,
    })
    .returning<{ id: string; layout_id: string; legs: string }[]>(['id', 'layout_id', 'legs']);
}

beforeAll(async () => {
  database = openTestDatabase({
    poolSize: CONCURRENT_ATTEMPTS + 2,
    applicationName: 'seat-constraint-tests',
  });
  await database('stops').insert([
    {
      code: `A${suffix}`,
      name: 'Test origin',
      city: 'Lisbon',
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    },
    {
      code: `M${suffix}`,
      name: 'Test middle stop',
      city: 'Coimbra',
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    },
    {
      code: `B${suffix}`,
      name: 'Test destination',
      city: 'Porto',
      country_code: 'PT',
      time_zone: 'Europe/Lisbon',
    },
  ]);
  [{ id: routeId }] = await database('routes')
    .insert({
      code: `T-${suffix}`,
      origin_stop_code: `A${suffix}`,
      destination_stop_code: `B${suffix}`,
      operator_name: 'Seat constraint test',
      distance_km: 313,
      typical_duration_minutes: 210,
    })
    .returning<{ id: string }[]>('id');
  await database('route_stops').insert({
    route_id: routeId,
    position: 1,
    stop_code: `M${suffix}`,
    minutes_from_origin: 120,
  });
  const layouts = await database('seat_layouts')
    .insert([
      { code: `T4-${suffix}`, name: 'Test four seats', row_count: 1, seats_per_row: 4, seat_count: 4 },
      {
        code: `T4B-${suffix}`,
        name: 'Another four-seat test layout',
        row_count: 1,
        seats_per_row: 4,
        seat_count: 4,
      },
    ])
    .returning<{ id: string; code: string }[]>(['id', 'code']);
  layoutId = layouts.find((layout) => layout.code === `T4-${suffix}`)!.id;
  otherLayoutId = layouts.find((layout) => layout.code === `T4B-${suffix}`)!.id;
  await database('seats').insert([
    ...['1A', '1B', '1C', '1D'].map((seat) => ({
      layout_id: layoutId,
      seat_number: seat,
      row_number: 1,
      fare_class: 'STANDARD',
    })),
    ...['1A', '1B', '1C', '1D'].map((seat) => ({
      layout_id: otherLayoutId,
      seat_number: seat,
      row_number: 1,
      fare_class: 'STANDARD',
    })),
  ]);
  departureTime = new Date(Date.now() + 7 * 24 * 3_600_000);
  [{ id: tripId }] = await database('trips')
    .insert({
      route_id: routeId,
      layout_id: layoutId,
      departure_time: departureTime,
      arrival_time: new Date(departureTime.getTime() + 210 * 60_000),
    })
    .returning<{ id: string }[]>('id');
  [{ id: customerId }] = await database('users')
    .insert({
      email: cipher.encrypt(`seat-test-${suffix}@example.com`),
      email_lookup: cipher.blindIndex(`seat-test-${suffix}@example.com`),
      password_hash: 'not-a-login-account',
      display_name: cipher.encrypt('Seat Tester'),
      roles: ['customer'],
    })
    .returning<{ id: string }[]>('id');
});

afterAll(async () => {
  if (!database) return;
  await database('bookings').where({ trip_id: tripId }).delete();
  await database('routes').where({ id: routeId }).delete();
  await database('seat_layouts').whereIn('id', [layoutId, otherLayoutId]).delete();
  await database('stops')
    .whereIn('code', [`A${suffix}`, `M${suffix}`, `B${suffix}`])
    .delete();
  await database('users').where({ id: customerId }).delete();
  await database.destroy();
});

describe('seat_allocations', () => {
  it('copies the layout from the trip and rejects a second hold or booking of an active seat', async () => {
    const firstBooking = await createBooking();
    const secondBooking = await createBooking();

    const [allocation] = await allocate(firstBooking, '1A', 'HELD');
    expect(allocation.layout_id).toBe(layoutId);

    for (const state of ['HELD', 'BOOKED'] as const) {
      await expect(allocate(secondBooking, '1A', state)).rejects.toMatchObject({
        code: '23P01',
        constraint: NO_OVERLAPPING_LEGS,
      });
    }

    await database('seat_allocations')
      .where({ id: allocation.id })
      .update({ state: 'BOOKED', hold_expires_at: null });
    await expect(allocate(secondBooking, '1A', 'HELD')).rejects.toMatchObject({
      code: '23P01',
      constraint: NO_OVERLAPPING_LEGS,
    });
  });

  it('lets a released seat be held again, keeping the released rows as history', async () => {
    const firstBooking = await createBooking();
    const secondBooking = await createBooking();
    const thirdBooking = await createBooking();

    const [first] = await allocate(firstBooking, '1B', 'HELD');
    await database('seat_allocations')
      .where({ id: first.id })
      .update({ state: 'RELEASED', released_at: database.fn.now() });

    const [second] = await allocate(secondBooking, '1B', 'HELD');
    await database('seat_allocations')
      .where({ id: second.id })
      .update({ state: 'RELEASED', released_at: database.fn.now() });

    await allocate(thirdBooking, '1B', 'BOOKED');
    const states = await database('seat_allocations')
      .where({ trip_id: tripId, seat_number: '1B' })
      .orderBy('created_at')
      .pluck('state');
    expect(states).toEqual(['RELEASED', 'RELEASED', 'BOOKED']);
  });

  it('lets exactly one of many concurrent holds on separate connections win', async () => {
    const bookings = await Promise.all(Array.from({ length: CONCURRENT_ATTEMPTS }, () => createBooking()));

    // Every transaction opens its own connection and waits for all the others before inserting.
    const backendProcessIds: number[] = [];
    let releaseAll!: () => void;
    const allConnected = new Promise<void>((resolve) => (releaseAll = resolve));

    const outcomes = await Promise.allSettled(
      bookings.map((bookingId) =>
        database.transaction(async (transaction) => {
          const {
            rows: [{ pid }],
          } = await transaction.raw<{ rows: { pid: number }[] }>('SELECT pg_backend_pid() AS pid');
          backendProcessIds.push(pid);
          if (backendProcessIds.length === CONCURRENT_ATTEMPTS) releaseAll();
          await allConnected;
          await allocate(bookingId, '1C', 'HELD', transaction);
          // Not a wait for state: each transaction stays open a moment, so the others' inserts meet it uncommitted.
          await transaction.raw('SELECT pg_sleep(0.05)');
        }),
      ),
    );

    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(new Set(backendProcessIds).size).toBe(CONCURRENT_ATTEMPTS);
    const losers = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(CONCURRENT_ATTEMPTS - 1);
    // PostgreSQL checks an exclusion after inserting: two inserts at once may each wait for the other until the
    // deadlock detector aborts one (40P01) rather than the constraint refusing it (23P01). Either way it lost.
    for (const loser of losers) {
      expect([
        { code: '23P01', constraint: NO_OVERLAPPING_LEGS },
        { code: '40P01', constraint: undefined },
      ]).toContainEqual({
        code: (loser.reason as { code?: unknown }).code,
        constraint: (loser.reason as { constraint?: unknown }).constraint,
      });
    }
    const activeHolders = await database('seat_allocations')
      .where({ trip_id: tripId, seat_number: '1C' })
      .whereIn('state', ['HELD', 'BOOKED'])
      .pluck('booking_id');
    expect(activeHolders).toHaveLength(1);
  });

  it('rejects a seat that is not in the trip layout, and a layout that is not the trip layout', async () => {
    const bookingId = await createBooking();
    await expect(allocate(bookingId, '2A', 'HELD')).rejects.toMatchObject({
      code: '23503',
      constraint: 'seat_allocations_seat_in_layout_fk',
    });
    // The seat exists in another layout, but the trip runs with this one.
    await expect(
      database('seat_allocations').insert({
        trip_id: tripId,
        layout_id: otherLayoutId,
        seat_number: '1D',
        booking_id: bookingId,
        state: 'BOOKED',
      }),
    ).rejects.toMatchObject({ code: '23503', constraint: 'seat_allocations_trip_layout_fk' });
  });

  it('checks the hold expiry and release time against the state', async () => {
    const bookingId = await createBooking();
    await expect(
      database('seat_allocations').insert({
        trip_id: tripId,
        seat_number: '1D',
        booking_id: bookingId,
        state: 'HELD',
      }),
    ).rejects.toMatchObject({ code: '23514', constraint: 'seat_allocations_hold_has_expiry' });
    await expect(
      database('seat_allocations').insert({
        trip_id: tripId,
        seat_number: '1D',
        booking_id: bookingId,
        state: 'RELEASED',
      }),
    ).rejects.toMatchObject({ code: '23514', constraint: 'seat_allocations_released_has_time' });
  });

  it('holds the whole route when a writer names no legs', async () => {
    const [allocation] = await allocate(await createBooking(), '1D', 'HELD');
    expect(allocation.legs).toBe('[0,2)');
    await database('seat_allocations')
      .where({ id: allocation.id })
      .update({ state: 'RELEASED', released_at: database.fn.now() });
  });

  it('refuses a direct SQL allocation sharing a leg, and accepts adjacent segments of one seat', async () => {
    const [first, second, third] = [await createBooking(), await createBooking(), await createBooking()];
    const [aToM] = await allocate(first, '1D', 'BOOKED', database, [0, 1]);
    const [mToB] = await allocate(second, '1D', 'HELD', database, [1, 2]);
    expect([aToM.legs, mToB.legs]).toEqual(['[0,1)', '[1,2)']);
    for (const legs of [
      [0, 2],
      [0, 1],
      [1, 2],
    ] as [number, number][]) {
      await expect(allocate(third, '1D', 'HELD', database, legs)).rejects.toMatchObject({
        code: '23P01',
        constraint: NO_OVERLAPPING_LEGS,
      });
    }
    await expect(
      database.raw(
        `INSERT INTO seat_allocations (trip_id, seat_number, booking_id, state, legs)
         VALUES (?, '1D', ?, 'BOOKED', int4range(0, 2))`,
        [tripId, third],
      ),
    ).rejects.toMatchObject({ code: '23P01', constraint: NO_OVERLAPPING_LEGS });
  });

  it('frees every leg of a released whole-route allocation for the segments within it', async () => {
    const [whole, first, second] = [await createBooking(), await createBooking(), await createBooking()];
    // The race above left one hold of 1C; release it so this test starts from a free seat.
    await database('seat_allocations')
      .where({ trip_id: tripId, seat_number: '1C' })
      .whereIn('state', ['HELD', 'BOOKED'])
      .update({ state: 'RELEASED', released_at: database.fn.now() });
    const [allocation] = await allocate(whole, '1C', 'BOOKED', database, [0, 2]);
    await expect(allocate(first, '1C', 'HELD', database, [0, 1])).rejects.toMatchObject({ code: '23P01' });
    await database('seat_allocations')
      .where({ id: allocation.id })
      .update({ state: 'RELEASED', released_at: database.fn.now() });
    await allocate(first, '1C', 'HELD', database, [0, 1]);
    await allocate(second, '1C', 'HELD', database, [1, 2]);
  });

  it('refuses an empty or unbounded leg range', async () => {
    const bookingId = await createBooking();
    await expect(allocate(bookingId, '1A', 'HELD', database, [1, 1])).rejects.toMatchObject({
      code: '23514',
      constraint: 'seat_allocations_legs_valid',
    });
  });
});
