// Retrying a step whose failure may pass on its own (a deadlock, a server still starting), on exponential-backoff.
import { backOff } from 'exponential-backoff';

export interface RetryPolicy {
  /** Attempts in all, the first included; at least 1. */
  attempts: number;
  /** Whether a failure is worth another attempt; any other surfaces at once, as thrown. */
  retryOn: (error: unknown) => boolean;
  /** Pause before the second attempt (default 0: at once); each later pause doubles it, up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Told of each failure that another attempt follows, with the pause before that attempt. */
  onRetry?: (retry: { error: unknown; attempt: number; delayMs: number }) => void;
  /**
   * What to throw when the last attempt fails with a retryable error (the default throws that error as it is):
   * a caller that names what it tried keeps the last error as the cause.
   */
  exhausted?: (error: unknown, attempts: number) => Error;
}

/** The pause after failed attempt `attempt` (1-based), as exponential-backoff computes it without jitter. */
export function retryDelayMs(
  policy: Pick<RetryPolicy, 'firstDelayMs' | 'maxDelayMs'>,
  attempt: number,
): number {
  return Math.min(policy.maxDelayMs ?? Infinity, (policy.firstDelayMs ?? 0) * 2 ** (attempt - 1));
}

/** Runs `work` (given its attempt number, from 1) until it succeeds, fails for good, or the attempts run out. */
export async function retrying<T>(work: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  if (!Number.isSafeInteger(policy.attempts) || policy.attempts < 1) {
    throw new RangeError(`a retry policy needs at least one attempt, not ${policy.attempts}`);
  }
  let attempt = 0;
  let retryable = false;
  try {
    return await backOff(() => work((attempt += 1)), {
      numOfAttempts: policy.attempts,
      startingDelay: policy.firstDelayMs ?? 0,
      timeMultiple: 2,
      maxDelay: policy.maxDelayMs ?? Infinity,
      jitter: 'none',
      delayFirstAttempt: false,
      retry: (error: unknown) => {
        retryable = false;
        retryable = policy.retryOn(error);
        if (!retryable || attempt >= policy.attempts) return false;
        policy.onRetry?.({ error, attempt, delayMs: retryDelayMs(policy, attempt) });
        return true;
      },
    });
  } catch (error) {
    if (retryable && attempt >= policy.attempts && policy.exhausted !== undefined) {
      throw policy.exhausted(error, attempt);
    }
    throw error;
  }
}
