// Login throttling per account and per client address, counted in PostgreSQL so every API replica shares it.
import type { Knex } from 'knex';
import {
  clearLoginAttempts,
  countLoginAttempts,
  purgeLoginThrottle,
  takeBackLoginAttempt,
} from '../db/login-throttle';

export interface LoginThrottleOptions {
  database: Knex;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  windowSeconds: number;
}

export type LoginAttemptVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface LoginThrottle {
  /**
   * Counts an attempt before the password is checked, atomically, so parallel guesses cannot slip past the
   * limit. Keys are blind indexes (HMACs), never a plaintext email or address.
   */
  recordAttempt(subjects: { accountKey: string; addressKey: string }): Promise<LoginAttemptVerdict>;
  /** A correct password clears the account's count and takes this attempt back from the address. */
  recordSuccess(subjects: { accountKey: string; addressKey: string }): Promise<void>;
}

const accountSubject = (key: string) => `account:${key}`;
const addressSubject = (key: string) => `address:${key}`;

export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { database, windowSeconds } = options;

  async function recordAttempt(subjects: {
    accountKey: string;
    addressKey: string;
  }): Promise<LoginAttemptVerdict> {
    const account = accountSubject(subjects.accountKey);
    const address = addressSubject(subjects.addressKey);
    const counts = await countLoginAttempts(database, [account, address], windowSeconds);
    await purgeLoginThrottle(database, windowSeconds);
    const limits = new Map([
      [account, options.maxFailuresPerAccount],
      [address, options.maxFailuresPerAddress],
    ]);
    const exceeded = counts.filter((count) => count.attempts > (limits.get(count.subject) ?? 0));
    if (exceeded.length === 0) return { allowed: true };
    return {
      allowed: false,
      retryAfterSeconds: Math.max(...exceeded.map((count) => count.retryAfterSeconds)),
    };
  }

  async function recordSuccess(subjects: { accountKey: string; addressKey: string }): Promise<void> {
    await clearLoginAttempts(database, accountSubject(subjects.accountKey));
    await takeBackLoginAttempt(database, addressSubject(subjects.addressKey));
  }

  return { recordAttempt, recordSuccess };
}
