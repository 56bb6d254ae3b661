// Every migration, in order, imported statically so jest, tsx and compiled dist/ all see the same list.
import type { Knex } from 'knex';
import * as initialSchema from './20261122_001_initial_schema';

export interface NamedMigration {
  /** Recorded in knex_migrations; never rename an applied migration. */
  name: string;
  migration: Knex.Migration;
}

export const migrations: readonly NamedMigration[] = [
  { name: '20261122_001_initial_schema', migration: initialSchema },
];
