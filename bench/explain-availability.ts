// `npm run bench:explain`: EXPLAIN ANALYZE of the statements availability reads send (whole route, one segment).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startEmbeddedPostgres } from '../dev/stack/embedded-postgres';
import { loadOrCreateDevelopmentSecrets } from '../dev/stack/development-secrets';
import { createCatalogApplication } from '../src/application/catalog';
import { loadConfig } from '../src/config';
import { createDatabase } from '../src/db/connection';
import { migrateWithDatabase } from '../src/db/migrate';
import { createFieldCipherFromConfig } from '../src/security/field-cipher-from-config';
import { freePort } from './lib/bench-stack';
import { seedInventory } from './lib/inventory';

const trips = Number(process.argv.find((argument) => argument.startsWith('--trips='))?.slice(8) ?? 20_000);

async function main(): Promise<void> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bus-booking-explain-'));
  fs.chmodSync(directory, 0o755);
  const postgres = await startEmbeddedPostgres({
    dataDirectory: path.join(directory, 'postgres'),
    port: await freePort(),
    databaseName: 'bookings',
    persistent: false,
    log: () => undefined,
  });
  const database = createDatabase(postgres.url, { poolSize: 2, applicationName: 'bench-explain' });
  try {
    const config = loadConfig({ ...loadOrCreateDevelopmentSecrets(directory), DATABASE_URL: postgres.url });
    await migrateWithDatabase(database);
    const inventory = await seedInventory(database, createFieldCipherFromConfig(config), trips);
    const [target] = inventory.availabilityTargets;
    const statements: { sql: string; bindings: readonly unknown[] }[] = [];
    database.on('query', (query: { sql: string; bindings?: readonly unknown[] }) =>
      statements.push({ sql: query.sql, bindings: query.bindings ?? [] }),
    );
    const catalog = createCatalogApplication({ database });
    await catalog.getRouteAvailability(target.routeId, target.date);
    // The same read for the route's inner leg: a segment's seats are those free on every leg it covers.
    await catalog.getRouteAvailability(target.routeId, target.date, {
      boardingStopCode: target.innerSegment.boarding,
      alightingStopCode: target.innerSegment.alighting,
    });
    database.removeAllListeners('query');
    console.log(
      `inventory: ${inventory.trips} trips × ${inventory.seatsPerTrip} seats; reads: route ${target.routeId} on ${target.date}, whole, then ${target.innerSegment.boarding} → ${target.innerSegment.alighting}`,
    );
    // A pg client of its own takes the values as they are (arrays as PostgreSQL arrays), which knex.raw would spread.
    const connection = new PgClient({ connectionString: postgres.url });
    await connection.connect();
    try {
      for (const statement of statements) {
        let position = 0;
        const text = statement.sql.replace(/\?/g, () => `$${(position += 1)}`);
        const plan = await connection.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, [
          ...statement.bindings,
        ]);
        console.log(`\n${statement.sql.replace(/\s+/g, ' ').slice(0, 160)}…`);
        for (const row of plan.rows) console.log(row['QUERY PLAN']);
      }
    } finally {
      await connection.end();
    }
  } finally {
    await database.destroy();
    await postgres.stop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
