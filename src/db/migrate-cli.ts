// Command line entry point: `node dist/src/db/migrate-cli.js` migrates the database named by DATABASE_URL.
import { createDatabase } from './connection';
import { migrateWithDatabase } from './migrate';

async function main(): Promise<number> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write('DATABASE_URL is not set; set it to postgres://user:password@host:port/database\n');
    return 1;
  }
  const database = createDatabase(databaseUrl, { poolSize: 2, applicationName: 'bookings-migrate' });
  try {
    const applied = await migrateWithDatabase(database);
    process.stdout.write(
      applied.length === 0
        ? 'database schema is up to date\n'
        : `applied migrations: ${applied.join(', ')}\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await database.destroy();
  }
}

main().then(
  (exitCode) => {
    process.exitCode = exitCode;
  },
  (error: unknown) => {
    process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
