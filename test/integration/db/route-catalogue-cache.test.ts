// The route catalogue answers a repeated search from its cache for CATALOG_ROUTE_CACHE_SECONDS.
import type { Knex } from 'knex';
import { createCatalogApplication } from '../../../src/application/catalog';
import { createNetworkFixture, type NetworkFixture } from '../../support/route-network';
import { openTestDatabase, testCipher } from '../../support/database';
import { insertUser } from '../../support/users';

let database: Knex;
let network: NetworkFixture;
const clock = { now: Date.now() };

beforeAll(async () => {
  database = openTestDatabase({ poolSize: 2, applicationName: 'route-catalogue-cache-tests' });
  const cipher = testCipher();
  const customer = await insertUser(database, cipher, { roles: ['customer'] });
  network = await createNetworkFixture(database, {
    cipher,
    customerId: customer.id,
    date: '2031-12-09',
    nextDate: '2031-12-10',
  });
});

afterAll(async () => {
  await network?.remove();
  await database?.destroy();
});

async function operatorOfMainRoute(catalog: ReturnType<typeof createCatalogApplication>, origin: string) {
  const page = await catalog.listRoutes({ origin });
  return page.items.find((route) => route.id === network.routes.main.id)?.operatorName;
}

async function renameOperator(name: string): Promise<void> {
  await database('routes').where('id', network.routes.main.id).update({ operator_name: name });
}

test('a repeated route search is answered from the cache until CATALOG_ROUTE_CACHE_SECONDS pass', async () => {
  const catalog = createCatalogApplication({ database, routeCacheSeconds: 30, now: () => clock.now });
  await renameOperator('Before Lines');
  expect(await operatorOfMainRoute(catalog, network.stops.origin)).toBe('Before Lines');

  await renameOperator('After Lines');
  // The same search in other letter case is the same search.
  expect(await operatorOfMainRoute(catalog, network.stops.origin.toLowerCase())).toBe('Before Lines');
  clock.now += 29_999;
  expect(await operatorOfMainRoute(catalog, network.stops.origin)).toBe('Before Lines');
  clock.now += 1;
  expect(await operatorOfMainRoute(catalog, network.stops.origin)).toBe('After Lines');
});

test('with CATALOG_ROUTE_CACHE_SECONDS 0 every route search reads PostgreSQL', async () => {
  const catalog = createCatalogApplication({ database, routeCacheSeconds: 0, now: () => clock.now });
  await renameOperator('First Lines');
  expect(await operatorOfMainRoute(catalog, network.stops.origin)).toBe('First Lines');
  await renameOperator('Second Lines');
  expect(await operatorOfMainRoute(catalog, network.stops.origin)).toBe('Second Lines');
});
