// Availability priced for a party from the caches: once warm no query at all, and a seat change still seen.
import type { Knex } from 'knex';
import { createCatalogApplication } from '../../../src/application/catalog';
import {
  listenForRouteAvailabilityChanges,
  type RouteAvailabilityChanges,
} from '../../../src/db/route-availability-changes';
import { createLogger } from '../../../src/logger';
import { createNetworkFixture, type NetworkFixture } from '../../support/route-network';
import { openTestDatabase, testCipher, testDatabaseUrl } from '../../support/database';
import { eventually } from '../../support/outcomes';
import { insertUser } from '../../support/users';

let database: Knex;
let network: NetworkFixture;
let changes: RouteAvailabilityChanges;
const logger = createLogger({ level: 'silent', name: 'party-availability-cache-tests' });
const frozenClock = () => Date.UTC(2031, 0, 1);

beforeAll(async () => {
  database = openTestDatabase({ poolSize: 3, applicationName: 'party-availability-cache-tests' });
  const cipher = testCipher();
  const customer = await insertUser(database, cipher, { roles: ['customer'] });
  network = await createNetworkFixture(database, {
    cipher,
    customerId: customer.id,
    date: '2032-05-11',
    nextDate: '2032-05-12',
  });
  changes = await listenForRouteAvailabilityChanges({
    databaseUrl: testDatabaseUrl(),
    logger,
    applicationName: `party-availability-cache-tests-${process.pid}`,
    firstReconnectDelayMs: 50,
    maximumReconnectDelayMs: 200,
  });
});

afterAll(async () => {
  await changes?.close();
  await network?.remove();
  await database?.destroy();
});

function countQueries(): { count: number; stop(): void } {
  const counter = { count: 0, stop: () => database.off('query', onQuery) };
  const onQuery = () => {
    counter.count += 1;
  };
  database.on('query', onQuery);
  return counter;
}

function standardFreeSeats(
  view: Awaited<ReturnType<ReturnType<typeof createCatalogApplication>['getRouteAvailability']>>,
) {
  const morning = view.trips.find((trip) => trip.tripId === network.trips.morning);
  return morning?.partyFares?.find((fare) => fare.fareClass === 'STANDARD')?.seatsFree;
}

it('answers a warm party read without asking PostgreSQL, the same answer each time', async () => {
  const catalog = createCatalogApplication({
    database,
    availabilityCache: { changes, timeToLiveSeconds: 3600, maximumEntries: 100 },
    now: frozenClock,
  });
  const read = () =>
    catalog.getRouteAvailability(network.routes.main.id, network.date, {}, 'ADULT:2,CHILD:1');
  const first = await read();
  expect(standardFreeSeats(first)).toBe(3);
  const queries = countQueries();
  try {
    const again = await Promise.all([read(), read(), read()]);
    expect(queries.count).toBe(0);
    for (const answer of again) expect(answer).toBe(first);
    // Another party is priced from the same kept answer and types: still nothing asked.
    await catalog.getRouteAvailability(network.routes.main.id, network.date, {}, 'ADULT:1');
    await catalog.listPassengerTypes(network.routes.main.id);
    expect(queries.count).toBe(0);
  } finally {
    queries.stop();
  }
});

it('prices a party afresh once the route’s seats change', async () => {
  const catalog = createCatalogApplication({
    database,
    availabilityCache: { changes, timeToLiveSeconds: 3600, maximumEntries: 100 },
    now: frozenClock,
  });
  const read = () =>
    catalog.getRouteAvailability(network.routes.main.id, network.date, {}, 'ADULT:2,CHILD:1');
  expect(standardFreeSeats(await read())).toBe(3);
  const booked = database('seat_allocations').where({
    trip_id: network.trips.morning,
    seat_number: network.bookedSeat,
  });
  await booked.clone().update({ state: 'RELEASED', released_at: database.fn.now() });
  try {
    await eventually(
      async () => standardFreeSeats(await read()),
      (free) => free === 4,
      { timeoutMs: 10_000, intervalMs: 20 },
    );
  } finally {
    await booked.clone().update({ state: 'BOOKED', released_at: null });
  }
});
