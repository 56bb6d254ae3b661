// The one database and key set-up of the integration tests: the run's PostgreSQL, its keyring, its configuration.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { loadConfig, type Config } from '../../src/config';
import { createDatabase } from '../../src/db/connection';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import { createFieldCipher, type FieldCipher } from '../../src/security/field-encryption';

/**
 * One keyring for every test file and every process a test starts: rows written by any file can be read by any
 * other (staff listings), a worker or API process decrypts what the test wrote, and the codec endpoint decodes
 * what the workflows encoded.
 */
export const testSecrets = {
  ENCRYPTION_KEYS: `saga:${Buffer.alloc(32, 'saga-test-encryption-key').toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'saga',
  BLIND_INDEX_KEY: Buffer.alloc(32, 'saga-test-blind-index-key').toString('base64'),
};

/** What a column encrypted with the run's keyring starts with: the envelope version and the active key's id. */
export const testEnvelopePattern = new RegExp(`^enc:v1:${testSecrets.ENCRYPTION_ACTIVE_KEY_ID}:`);

/** The URL global-setup exported: the run's PostgreSQL, migrated. */
export function testDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '')
    throw new Error('DATABASE_URL is not set: run integration tests with jest');
  return url;
}

/** Configuration as the worker and API processes would load it, pointed at the run's servers. */
export function testConfig(environment: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: testDatabaseUrl(),
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.SAGA_TEST_LOG_LEVEL ?? 'silent',
    DATABASE_POOL_SIZE: '20',
    // Every test signs in from 127.0.0.1 under this one keyring, so all share one failed-login counter per address.
    IDP_LOGIN_MAX_FAILURES_PER_IP: '100000',
    ...testSecrets,
    ...environment,
  });
}

/** A connection pool of the test's own; `applicationName` shows in pg_stat_activity when a test leaks one. */
export function openTestDatabase(options: { poolSize?: number; applicationName?: string } = {}): Knex {
  return createDatabase(testDatabaseUrl(), {
    poolSize: options.poolSize ?? 5,
    applicationName: options.applicationName ?? 'integration-tests',
  });
}

/**
 * An empty database of its own on the run's server for `use` (given its URL and a one-connection pool), dropped
 * afterwards: for tests that migrate a schema from nothing.
 */
export async function withScratchDatabase<T>(
  admin: Knex,
  prefix: string,
  use: (scratch: Knex, url: string) => Promise<T>,
): Promise<T> {
  const scratch = await openScratchDatabase(admin, prefix);
  try {
    return await use(scratch.database, scratch.url);
  } finally {
    await scratch.drop();
  }
}

/** A database of its own for a whole file, whose rows no other file's process can see: dropped by `drop`. */
export async function openScratchDatabase(
  admin: Knex,
  prefix: string,
): Promise<{ database: Knex; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await admin.raw('CREATE DATABASE ??', [name]);
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  const database = createDatabase(url.toString(), { poolSize: 1 });
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.destroy();
      await admin.raw('DROP DATABASE ?? WITH (FORCE)', [name]);
    },
  };
}

/** The field cipher of the run's keyring (`testSecrets`), as the processes under test build it. */
export function testCipher(): FieldCipher {
  return createFieldCipherFromConfig({
    encryption: {
      keyring: testSecrets.ENCRYPTION_KEYS,
      activeKeyId: testSecrets.ENCRYPTION_ACTIVE_KEY_ID,
      blindIndexKey: testSecrets.BLIND_INDEX_KEY,
    },
  });
}

/**
 * A cipher with keys no other test shares, where blind indexes must not meet other suites': well-known emails
 * (the demo accounts) a test deletes again, or login-throttle counters keyed by the blind index of 127.0.0.1.
 */
export function isolatedTestCipher(keyId: string): FieldCipher {
  return createFieldCipher({
    keys: { [keyId]: randomBytes(32) },
    activeKeyId: keyId,
    blindIndexKey: randomBytes(32),
  });
}

/** The same for a saga environment or API a test composes: its configuration's keys, no other suite's. */
export function isolatedEncryptionEnvironment(keyId: string): Record<string, string> {
  return {
    ENCRYPTION_KEYS: `${keyId}:${randomBytes(32).toString('base64')}`,
    ENCRYPTION_ACTIVE_KEY_ID: keyId,
    BLIND_INDEX_KEY: randomBytes(32).toString('base64'),
  };
}
