// Login throttling per account and per client address, counted in PostgreSQL so every API replica shares it.
import type { Knex } from 'knex';

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

interface CounterRow {
  subject: string;
  attempts: number;
  retry_after_seconds: number;
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
    // A fixed window per subject: the first attempt after a window ends starts a new one at 1.
    const result = await database.raw<{ rows: CounterRow[] }>(
      `INSERT INTO identity_login_throttle AS counter (subject, window_started_at, attempts)
       VALUES (?, now(), 1), (?, now(), 1)
       ON CONFLICT (subject) DO UPDATE SET
         attempts = CASE WHEN counter.window_started_at <= now() - make_interval(secs => ?)
                         THEN 1 ELSE counter.attempts + 1 END,
         window_started_at = CASE WHEN counter.window_started_at <= now() - make_interval(secs => ?)
                                  THEN now() ELSE counter.window_started_at END
       RETURNING subject, attempts,
         greatest(1, ceil(extract(epoch FROM window_started_at + make_interval(secs => ?) - now())))::integer
           AS retry_after_seconds`,
      [account, address, windowSeconds, windowSeconds, windowSeconds],
    );
    await database('identity_login_throttle')
      .where('window_started_at', '<', database.raw('now() - make_interval(secs => ?)', [2 * windowSeconds]))
      .delete();
    const limits = new Map([
      [account, options.maxFailuresPerAccount],
      [address, options.maxFailuresPerAddress],
    ]);
    const exceeded = result.rows.filter((row) => row.attempts > (limits.get(row.subject) ?? 0));
    if (exceeded.length === 0) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(...exceeded.map((row) => row.retry_after_seconds)) };
  }

  async function recordSuccess(subjects: { accountKey: string; addressKey: string }): Promise<void> {
    await database('identity_login_throttle')
      .where({ subject: accountSubject(subjects.accountKey) })
      .delete();
    await database('identity_login_throttle')
      .where({ subject: addressSubject(subjects.addressKey) })
      .update({ attempts: database.raw('greatest(attempts - 1, 0)') });
  }

  return { recordAttempt, recordSuccess };
}
