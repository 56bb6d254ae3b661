// Schema behaviour the code relies on: migrations up and down, type parsing, encrypted-only columns, key expiry.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { UnsafeNumberError } from '../../../src/db/connection';
import { migrateToLatest, migrateWithDatabase, migrationConfig } from '../../../src/db/migrate';
import { migrations } from '../../../migrations';
import { openTestDatabase, testCipher, withScratchDatabase } from '../../support/database';

const cipher = testCipher();

let database: Knex;

beforeAll(() => {
  database = openTestDatabase({ poolSize: 2, applicationName: 'schema-tests' });
});

afterAll(async () => {
  await database?.destroy();
});

describe('migrations', () => {
  it('apply to an empty database, roll back completely and apply again', async () => {
    await withScratchDatabase(database, 'bookings_migration', async (scratch, scratchUrl) => {
      await migrateToLatest(scratchUrl);
      const tables = async () =>
        (
          await scratch('information_schema.tables')
            .where({ table_schema: 'public' })
            .whereNotIn('table_name', ['knex_migrations', 'knex_migrations_lock'])
            .pluck<string[]>('table_name')
        ).sort();
      expect(await tables()).toEqual(
        [
          'booking_hold_claim_moves',
          'booking_hold_claims',
          'bookings',
          'discount_codes',
          'discount_redemptions',
          'external_identities',
          'idempotency_keys',
          'identity_login_throttle',
          'identity_oauth_artifacts',
          'identity_refresh_tokens',
          'identity_signing_keys',
          'notifications',
          'partner_events',
          'passenger_types',
          'passengers',
          'payment_events',
          'payments',
          'refund_quotes',
          'refunds',
          'route_stops',
          'routes',
          'seat_allocations',
          'seat_layouts',
          'seats',
          'stops',
          'tickets',
          'trip_cancellation_bookings',
          'trip_fares',
          'trips',
          'users',
          'webhook_attempts',
          'webhook_deliveries',
          'webhook_endpoints',
        ].sort(),
      );
      expect(await migrateWithDatabase(scratch)).toEqual([]);

      await scratch.migrate.rollback(migrationConfig, true);
      expect(await tables()).toEqual([]);

      expect(await migrateWithDatabase(scratch)).toEqual(migrations.map((migration) => migration.name));
    });
  });
});

describe('type parsing', () => {
  it('reads bigint and numeric as numbers, date as text and timestamptz as Date', async () => {
    const {
      rows: [row],
    } = await database.raw<{ rows: Record<string, unknown>[] }>(
      `SELECT 9007199254740991::bigint AS largest_safe, (SELECT sum(value) FROM (VALUES (1590::bigint), (2990::bigint)) AS amounts(value)) AS total,
              12.5::numeric AS ratio, DATE '2026-12-01' AS day, TIMESTAMPTZ '2026-12-01T08:00:00Z' AS instant`,
    );
    expect(row).toEqual({
      largest_safe: Number.MAX_SAFE_INTEGER,
      total: 4580,
      ratio: 12.5,
      day: '2026-12-01',
      instant: new Date('2026-12-01T08:00:00Z'),
    });
  });

  it('refuses to round a bigint beyond the safe integer range', async () => {
    await expect(database.raw('SELECT 9007199254740993::bigint AS too_large')).rejects.toBeInstanceOf(
      UnsafeNumberError,
    );
  });
});

describe('constraints', () => {
  it('rejects plaintext in an encrypted column', async () => {
    await expect(
      database('users').insert({
        email: 'plain@example.com',
        email_lookup: cipher.blindIndex(`plain-${randomBytes(4).toString('hex')}`),
        password_hash: 'unused',
        display_name: cipher.encrypt('Plain Text'),
      }),
    ).rejects.toMatchObject({ code: '23514', constraint: 'users_email_encrypted' });
  });

  it('rejects unknown roles and idempotency keys kept less than a day', async () => {
    const email = `schema-${randomBytes(4).toString('hex')}@example.com`;
    await expect(
      database('users').insert({
        email: cipher.encrypt(email),
        email_lookup: cipher.blindIndex(email),
        password_hash: 'unused',
        display_name: cipher.encrypt('Role Tester'),
        roles: ['customer', 'root'],
      }),
    ).rejects.toMatchObject({ code: '23514', constraint: 'users_roles_valid' });

    const [{ id: customerId }] = await database('users')
      .insert({
        email: cipher.encrypt(email),
        email_lookup: cipher.blindIndex(email),
        password_hash: 'unused',
        display_name: cipher.encrypt('Key Tester'),
      })
      .returning<{ id: string }[]>('id');
    try {
      await expect(
        database('idempotency_keys').insert({
          customer_id: customerId,
          key: 'short-lived',
          operation: 'CreateBooking',
          request_hash: 'hash',
          expires_at: database.raw(`now() + interval '1 hour'`),
        }),
      ).rejects.toMatchObject({ code: '23514', constraint: 'idempotency_keys_kept_a_day' });

      const [stored] = await database('idempotency_keys')
        .insert({
          customer_id: customerId,
          key: 'default-expiry',
          operation: 'CreateBooking',
          request_hash: 'hash',
        })
        .returning<{ state: string; created_at: Date; expires_at: Date }[]>([
          'state',
          'created_at',
          'expires_at',
        ]);
      expect(stored.state).toBe('IN_FLIGHT');
      expect(stored.expires_at.getTime() - stored.created_at.getTime()).toBe(24 * 3_600_000);
    } finally {
      await database('users').where({ id: customerId }).delete();
    }
  });
});
