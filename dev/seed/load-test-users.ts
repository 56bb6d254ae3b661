// Load-test accounts: a pool of customers the load scenarios sign in as (development and test seeds only).
import type { DemoUser } from './demo-users';

/**
 * Enough accounts that no single one carries much of a load run: the per-account login throttle and the per-user
 * rate limit and open-hold cap are then never what a load scenario measures.
 */
export const LOAD_TEST_ACCOUNT_COUNT = 100;

/** Every load-test account shares this password; the accounts exist only where the seed runs outside production. */
export const LOAD_TEST_PASSWORD = 'loadtest-password';

/** `loadtest-001@example.com` … `loadtest-100@example.com`. */
export function loadTestEmail(accountNumber: number): string {
  if (!Number.isInteger(accountNumber) || accountNumber < 1 || accountNumber > LOAD_TEST_ACCOUNT_COUNT) {
    throw new RangeError(
      `load-test accounts are numbered 1 to ${LOAD_TEST_ACCOUNT_COUNT}, got ${accountNumber}`,
    );
  }
  return `loadtest-${String(accountNumber).padStart(3, '0')}@example.com`;
}

export const loadTestUsers: readonly DemoUser[] = Array.from(
  { length: LOAD_TEST_ACCOUNT_COUNT },
  (_, index) => ({
    email: loadTestEmail(index + 1),
    password: LOAD_TEST_PASSWORD,
    displayName: `Load Test ${String(index + 1).padStart(3, '0')}`,
    phone: null,
    role: 'customer' as const,
  }),
);

/** Known passwords must never reach a production database: only development and test seeds add the pool. */
export function seedsLoadTestUsers(environment: 'development' | 'production' | 'test' | undefined): boolean {
  return environment === 'development' || environment === 'test';
}
