// Applies the schema migrations from migrations/index.ts through a static knex migration source.
import type { Knex } from 'knex';
import { migrations, type NamedMigration } from '../../migrations';
import { createDatabase } from './connection';

class StaticMigrationSource implements Knex.MigrationSource<NamedMigration> {
  getMigrations(): Promise<NamedMigration[]> {
    return Promise.resolve([...migrations]);
  }

  getMigrationName(migration: NamedMigration): string {
    return migration.name;
  }

  getMigration(migration: NamedMigration): Promise<Knex.Migration> {
    return Promise.resolve(migration.migration);
  }
}

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource: new StaticMigrationSource(),
  tableName: 'knex_migrations',
};

/** Runs every pending migration; knex's lock table makes concurrent callers (API and worker) safe. Returns the names applied. */
export async function migrateWithDatabase(database: Knex): Promise<string[]> {
  const [, appliedNames] = (await database.migrate.latest(migrationConfig)) as [number, string[]];
  return appliedNames;
}

export async function migrateToLatest(databaseUrl: string): Promise<void> {
  const database = createDatabase(databaseUrl, { poolSize: 2, applicationName: 'bookings-migrate' });
  try {
    await migrateWithDatabase(database);
  } finally {
    await database.destroy();
  }
}
