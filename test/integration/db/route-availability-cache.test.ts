// Seat availability is kept until PostgreSQL notifies a change to its route, and only while those notices are heard;
// reads that reach PostgreSQL together go as one query.
import type { Knex } from 'knex';
import { createCatalogApplication } from '../../../src/application/catalog';
import {
  everyRoute,
  listenForRouteAvailabilityChanges,
  type RouteAvailabilityChanges,
} from '../../../src/db/route-availability-changes';
import { createLogger } from '../../../src/logger';
import { createNetworkFixture, type NetworkFixture } from '../../support/route-network';
import { openTestDatabase, testCipher, testDatabaseUrl } from '../../support/database';
import { eventually } from '../../support/outcomes';
import { insertUser } from '../../support/users';

// Of this suite only: the API processes other suites start listen too.
const listenerApplicationName = `availability-cache-tests-${process.pid}`;
let database: Knex;
let network: NetworkFixture;
const logger = createLogger({ level: 'silent', name: 'route-availability-cache-tests' });
const opened: RouteAvailabilityChanges[] = [];
const frozenClock = () => Date.UTC(2031, 0, 1);

beforeAll(async () => {
  database = openTestDatabase({ poolSize: 3, applicationName: 'route-availability-cache-tests' });
  const cipher = testCipher();
  const customer = await insertUser(database, cipher, { roles: ['customer'] });
  network = await createNetworkFixture(database, {
    cipher,
    customerId: customer.id,
    date: '2031-12-11',
    nextDate: '2031-12-12',
  });
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((changes) => changes.close()));
});

afterAll(async () => {
  await network?.remove();
  await database?.destroy();
});

async function listen(): Promise<RouteAvailabilityChanges> {
  const changes = await listenForRouteAvailabilityChanges({
    databaseUrl: testDatabaseUrl(),
    logger,
    applicationName: listenerApplicationName,
    firstReconnectDelayMs: 50,
    maximumReconnectDelayMs: 200,
  });
  opened.push(changes);
  return changes;
}

/** The notices travel asynchronously: reads are polled, often, for at most 10 s. */
const polling = { timeoutMs: 10_000, intervalMs: 20 };

/** Counts the availability reads that reach PostgreSQL (they alone select from trip_fares). */
function countAvailabilityQueries(): { count: number; stop(): void } {
  const counter = {
    count: 0,
    stop: () => database.off('query', onQuery),
  };
  const onQuery = (query: { sql: string }) => {
    if (query.sql.includes('trip_fares')) counter.count += 1;
  };
  database.on('query', onQuery);
  return counter;
}

function catalogKeeping(changes: RouteAvailabilityChanges) {
  return createCatalogApplication({
    database,
    availabilityCache: { changes, timeToLiveSeconds: 3600, maximumEntries: 100 },
    now: frozenClock,
  });
}

async function seatStatus(catalog: ReturnType<typeof createCatalogApplication>, seatNumber: string) {
  const availability = await catalog.getRouteAvailability(network.routes.main.id, network.date);
  const morning = availability.trips.find((trip) => trip.tripId === network.trips.morning);
  return morning?.seatMap.find((seat) => seat.seatNumber === seatNumber)?.status;
}

/** Waits for the catalogue to show the seat so (the notice of its change travels asynchronously). */
async function seatShownAs(
  catalog: ReturnType<typeof createCatalogApplication>,
  seatNumber: string,
  status: 'FREE' | 'TAKEN',
): Promise<void> {
  await eventually(
    () => seatStatus(catalog, seatNumber),
    (shown) => shown === status,
    polling,
  );
}

/** Releases the seat's allocation, or makes its latest one active again (`HELD` only for the fixture's held seat). */
async function setSeatState(seatNumber: string, state: 'RELEASED' | 'HELD' | 'BOOKED'): Promise<void> {
  const allocation = database('seat_allocations').where({
    trip_id: network.trips.morning,
    seat_number: seatNumber,
  });
  if (state === 'RELEASED') {
    await allocation.whereIn('state', ['HELD', 'BOOKED']).update({ state, released_at: database.fn.now() });
  } else {
    await database('seat_allocations')
      .where(
        'id',
        database('seat_allocations')
          .where({ trip_id: network.trips.morning, seat_number: seatNumber })
          .orderBy('created_at', 'desc')
          .first('id'),
      )
      .update({ state, released_at: null });
  }
}

test('while changes are heard, a repeated availability read is answered without asking PostgreSQL', async () => {
  // A feed that is heard and never says anything: only the catalogue decides what is kept.
  const silentFeed: RouteAvailabilityChanges = {
    hearing: true,
    subscribe: () => () => undefined,
    close: () => Promise.resolve(),
  };
  const catalog = catalogKeeping(silentFeed);
  const queries = countAvailabilityQueries();
  try {
    const first = await catalog.getRouteAvailability(network.routes.main.id, network.date);
    const again = await catalog.getRouteAvailability(network.routes.main.id, network.date);
    expect(again).toEqual(first);
    expect(queries.count).toBe(1);
    await catalog.getRouteAvailability(network.routes.main.id, network.nextDate);
    expect(queries.count).toBe(2);
  } finally {
    queries.stop();
  }
});

test('without the change notices, seat availability is read afresh every time', async () => {
  const catalog = createCatalogApplication({ database, routeCacheSeconds: 30, now: frozenClock });
  expect(await seatStatus(catalog, network.heldSeat)).toBe('TAKEN');
  await setSeatState(network.heldSeat, 'RELEASED');
  expect(await seatStatus(catalog, network.heldSeat)).toBe('FREE');
  await setSeatState(network.heldSeat, 'HELD');
  expect(await seatStatus(catalog, network.heldSeat)).toBe('TAKEN');
});

test('a seat released or taken again shows at once the notice arrives, long before the time to live', async () => {
  const changes = await listen();
  expect(changes.hearing).toBe(true);
  const catalog = catalogKeeping(changes);
  expect(await seatStatus(catalog, network.bookedSeat)).toBe('TAKEN');

  await setSeatState(network.bookedSeat, 'RELEASED');
  await seatShownAs(catalog, network.bookedSeat, 'FREE');
  await setSeatState(network.bookedSeat, 'BOOKED');
  await seatShownAs(catalog, network.bookedSeat, 'TAKEN');
});

test('a trip added to the route on that date shows once its notice arrives', async () => {
  const changes = await listen();
  const catalog = catalogKeeping(changes);
  const tripsOnDate = async () =>
    (await catalog.getRouteAvailability(network.routes.main.id, network.date)).trips.map(
      (trip) => trip.tripId,
    );
  const before = await tripsOnDate();

  const [morning] = await database('trips')
    .where('id', network.trips.morning)
    .select<{ layout_id: string; departure_time: Date }[]>('layout_id', 'departure_time');
  const departure = new Date(morning.departure_time.getTime() + 2 * 3_600_000);
  const [added] = await database('trips')
    .insert({
      route_id: network.routes.main.id,
      layout_id: morning.layout_id,
      departure_time: departure,
      arrival_time: new Date(departure.getTime() + 3_600_000),
    })
    .returning<{ id: string }[]>('id');
  try {
    await database('trip_fares').insert({
      trip_id: added.id,
      fare_class: 'STANDARD',
      amount_minor: 1500,
      currency: 'EUR',
    });
    await eventually(tripsOnDate, (trips) => trips.includes(added.id), polling);
    expect((await tripsOnDate()).length).toBe(before.length + 1);
  } finally {
    await database('trips').where('id', added.id).delete();
  }
  await eventually(tripsOnDate, (trips) => !trips.includes(added.id), polling);
});

test('a lost listening connection stops the keeping at once, and a new one resumes it', async () => {
  const changes = await listen();
  const heard: string[] = [];
  changes.subscribe((routeId) => heard.push(routeId));
  const catalog = catalogKeeping(changes);
  expect(await seatStatus(catalog, network.bookedSeat)).toBe('TAKEN');

  const [listener] = await database('pg_stat_activity')
    .where({ application_name: listenerApplicationName })
    .whereRaw("query ILIKE 'LISTEN%'")
    .select<{ pid: number }[]>('pid');
  expect(listener).toBeDefined();
  await database.raw('SELECT pg_terminate_backend(?)', [listener.pid]);
  await eventually(
    () => Promise.resolve(changes.hearing),
    (hearing) => !hearing,
    polling,
  );
  expect(heard).toContain(everyRoute);

  // Kept while deaf, this change would go unseen: it is seen because nothing is kept now.
  await setSeatState(network.bookedSeat, 'RELEASED');
  expect(await seatStatus(catalog, network.bookedSeat)).toBe('FREE');

  await eventually(
    () => Promise.resolve(changes.hearing),
    (hearing) => hearing,
    polling,
  );
  await setSeatState(network.bookedSeat, 'BOOKED');
  await seatShownAs(catalog, network.bookedSeat, 'TAKEN');
});

test('a change to one route leaves the kept availability of another alone', async () => {
  const changes = await listen();
  const heard: string[] = [];
  changes.subscribe((routeId) => heard.push(routeId));
  const catalog = catalogKeeping(changes);
  await catalog.getRouteAvailability(network.routes.main.id, network.date);
  const queries = countAvailabilityQueries();
  try {
    await database('trips').where('id', network.trips.branch).update({ status: 'SCHEDULED' });
    await eventually(
      () => Promise.resolve(heard.includes(network.routes.branch.id)),
      (included) => included,
      polling,
    );
    // Other suites may change stops or layouts meanwhile ('*'), which rightly forgets everything: only a read that
    // follows nothing but the branch's notice must come from the cache.
    if (!heard.includes(everyRoute)) {
      await catalog.getRouteAvailability(network.routes.main.id, network.date);
      if (!heard.includes(everyRoute)) expect(queries.count).toBe(0);
    }
  } finally {
    queries.stop();
  }
});

describe('availability reads that reach PostgreSQL together', () => {
  it('go as one query, and each is answered with its own route and date', async () => {
    const catalog = createCatalogApplication({ database });
    const { main, branch, idle } = network.routes;
    const reads: [string, string][] = [
      [main.id, network.date],
      [main.id, network.nextDate],
      [branch.id, network.date],
      [idle.id, network.date],
      [main.id, '2031-12-01'],
    ];
    const oneByOne = [];
    for (const [routeId, date] of reads) oneByOne.push(await catalog.getRouteAvailability(routeId, date));

    const queries = countAvailabilityQueries();
    const together = await Promise.all(
      reads.map(([routeId, date]) => catalog.getRouteAvailability(routeId, date)),
    );
    queries.stop();

    expect(queries.count).toBe(1);
    expect(together).toEqual(oneByOne);
    expect(together.map((availability) => availability.trips.map((trip) => trip.tripId))).toEqual([
      [network.trips.afterMidnight, network.trips.morning, network.trips.evening],
      [network.trips.nextDay],
      [network.trips.branch],
      [],
      [],
    ]);
  });

  it('answers an unknown route NOT_FOUND without failing the reads sent with it', async () => {
    const catalog = createCatalogApplication({ database });
    const unknownRouteId = '00000000-0000-4000-8000-000000000000';
    const queries = countAvailabilityQueries();
    const [before, unknown, after] = await Promise.allSettled([
      catalog.getRouteAvailability(network.routes.main.id, network.date),
      catalog.getRouteAvailability(unknownRouteId, network.date),
      catalog.getRouteAvailability(network.routes.branch.id, network.date),
    ]);
    queries.stop();

    expect(queries.count).toBe(1);
    expect(before).toMatchObject({ status: 'fulfilled', value: { routeId: network.routes.main.id } });
    expect(unknown).toMatchObject({ status: 'rejected', reason: { code: 'NOT_FOUND' } });
    expect(after).toMatchObject({ status: 'fulfilled', value: { routeId: network.routes.branch.id } });
  });
});
