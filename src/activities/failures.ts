// How activities report other outcomes to Temporal (business errors: businessFailure in ./interface): transient ones
// retry, permanent ones do not, each with a stable type.
import { ApplicationFailure } from '@temporalio/common';

/** Something that may work on the next attempt (gateway timeout, provider 503); the type names the cause. */
export function transientFailure(type: string, message: string, cause?: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: false,
    cause: cause instanceof Error ? cause : undefined,
  });
}

/** A failure no retry can fix that is not a business outcome (a refund larger than the charge). */
export function permanentFailure(type: string, message: string, cause?: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: true,
    cause: cause instanceof Error ? cause : undefined,
  });
}
