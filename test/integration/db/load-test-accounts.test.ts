// The seed's load-test account pool: created in development and test, never in production or by default.
import { expect } from '@jest/globals';
import { verify } from '@node-rs/argon2';
import type { Knex } from 'knex';
import {
  LOAD_TEST_ACCOUNT_COUNT,
  LOAD_TEST_PASSWORD,
  loadTestEmail,
  loadTestUsers,
  seedDemoData,
} from '../../../dev/seed';
import { emailLookup } from '../../../src/db/user-email';
import type { FieldCipher } from '../../../src/security/field-encryption';
import { isolatedTestCipher, openTestDatabase } from '../../support/database';

// One timetable day far from the dates other suites seed: the network is shared, the accounts are this suite's.
const FIRST_DAY = '2027-09-01';

interface UserRow {
  email: string;
  email_lookup: string;
  password_hash: string;
  roles: string[];
}

let database: Knex;
const ciphers: FieldCipher[] = [];

/** Keys of the test's own, so the accounts it finds can only be the ones its seed run created. */
function freshCipher(): FieldCipher {
  const cipher = isolatedTestCipher(`loadtest${ciphers.length}`);
  ciphers.push(cipher);
  return cipher;
}

async function loadTestAccounts(cipher: FieldCipher): Promise<UserRow[]> {
  return database('users')
    .whereIn(
      'email_lookup',
      loadTestUsers.map((user) => emailLookup(cipher, user.email)),
    )
    .select('email', 'email_lookup', 'password_hash', 'roles');
}

beforeAll(() => {
  database = openTestDatabase({ poolSize: 4, applicationName: 'load-test-account-tests' });
});

afterAll(async () => {
  if (!database) return;
  const lookups = ciphers.flatMap((cipher) => loadTestUsers.map((user) => emailLookup(cipher, user.email)));
  await database('users').whereIn('email_lookup', lookups).delete();
  await database.destroy();
});

describe('seedDemoData load-test accounts', () => {
  it.each(['development', 'test'] as const)(
    'creates the pool of customer accounts with the shared password in %s',
    async (environment) => {
      const cipher = freshCipher();
      await seedDemoData(database, { cipher, today: FIRST_DAY, days: 1, environment });

      const rows = await loadTestAccounts(cipher);
      expect(rows).toHaveLength(LOAD_TEST_ACCOUNT_COUNT);
      expect(rows.map((row) => cipher.decrypt(row.email)).sort()).toEqual(
        Array.from({ length: LOAD_TEST_ACCOUNT_COUNT }, (_, index) => loadTestEmail(index + 1)),
      );
      expect(new Set(rows.flatMap((row) => row.roles))).toEqual(new Set(['customer']));
      const first = rows.find((row) => row.email_lookup === emailLookup(cipher, 'loadtest-001@example.com'));
      const last = rows.find((row) => row.email_lookup === emailLookup(cipher, 'loadtest-100@example.com'));
      await expect(verify(first!.password_hash, LOAD_TEST_PASSWORD)).resolves.toBe(true);
      await expect(verify(last!.password_hash, LOAD_TEST_PASSWORD)).resolves.toBe(true);
    },
  );

  it('hashes nothing again on a second run', async () => {
    const cipher = freshCipher();
    await seedDemoData(database, { cipher, today: FIRST_DAY, days: 1, environment: 'development' });
    const again = await seedDemoData(database, {
      cipher,
      today: FIRST_DAY,
      days: 1,
      environment: 'development',
    });
    expect(again.usersInserted).toBe(0);
    expect(await loadTestAccounts(cipher)).toHaveLength(LOAD_TEST_ACCOUNT_COUNT);
  });

  it.each([
    ['in production', 'production'],
    ['when no environment is given', undefined],
  ] as const)('creates no load-test account %s', async (_label, environment) => {
    const cipher = freshCipher();
    await seedDemoData(database, {
      cipher,
      today: FIRST_DAY,
      days: 1,
      ...(environment === undefined ? {} : { environment }),
    });
    expect(await loadTestAccounts(cipher)).toEqual([]);
  });

  it('numbers the accounts 001 to 100 and refuses any other number', () => {
    expect(loadTestEmail(1)).toBe('loadtest-001@example.com');
    expect(loadTestEmail(LOAD_TEST_ACCOUNT_COUNT)).toBe('loadtest-100@example.com');
    expect(() => loadTestEmail(0)).toThrow(RangeError);
    expect(() => loadTestEmail(LOAD_TEST_ACCOUNT_COUNT + 1)).toThrow(RangeError);
  });
});
