// The identity_login_throttle table: sign-in attempts counted per subject in fixed windows, shared by every replica.
import type { Knex } from 'knex';

export interface LoginAttemptCount {
  subject: string;
  /** Attempts in the subject's current window, this one included. */
  attempts: number;
  /** Whole seconds, at least 1, until that window ends. */
  retryAfterSeconds: number;
}

/**
 * Counts one attempt for each subject in one statement, so parallel attempts cannot slip past a limit: the first
 * attempt after a window ends starts a new one at 1.
 */
export async function countLoginAttempts(
  database: Knex,
  subjects: readonly [string, string],
  windowSeconds: number,
): Promise<LoginAttemptCount[]> {
  const result = await database.raw<{
    rows: { subject: string; attempts: number; retry_after_seconds: number }[];
  }>(
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
    [subjects[0], subjects[1], windowSeconds, windowSeconds, windowSeconds],
  );
  return result.rows.map((row) => ({
    subject: row.subject,
    attempts: row.attempts,
    retryAfterSeconds: row.retry_after_seconds,
  }));
}

/** Deletes counters whose window ended a whole window ago or more. */
export async function purgeLoginThrottle(database: Knex, windowSeconds: number): Promise<void> {
  await database('identity_login_throttle')
    .where('window_started_at', '<', database.raw('now() - make_interval(secs => ?)', [2 * windowSeconds]))
    .delete();
}

export async function clearLoginAttempts(database: Knex, subject: string): Promise<void> {
  await database('identity_login_throttle').where({ subject }).delete();
}

/** Takes one attempt back from the subject's count, never below zero. */
export async function takeBackLoginAttempt(database: Knex, subject: string): Promise<void> {
  await database('identity_login_throttle')
    .where({ subject })
    .update({ attempts: database.raw('greatest(attempts - 1, 0)') });
}
