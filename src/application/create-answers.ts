// What a create answers when its answer comes late, its workflow has ended, or its start fails.
import { WorkflowUpdateFailedError, type WithStartWorkflowOperation } from '@temporalio/client';
import type { BookingState } from '../domain/booking';
import { bookingProcessing, idempotencyKeyReused } from '../domain/errors';
import type { bookingWorkflow } from '../workflows/booking';
import { bookingWorkflowId, createRequestMemoKey } from '../workflows/shared';
import { processingRetryAfterSeconds, type BookingContext } from './booking-context';
import { isSameRequest, type RequestFingerprints } from './request-fingerprints';
import { domainErrorFromTemporal, isWorkflowGone } from './temporal-outcomes';

/** The update-with-start on its way; its outcome never rejects (it carries the error). */
export interface StartedCreate {
  sealedStart: string;
  operation: WithStartWorkflowOperation<typeof bookingWorkflow>;
  outcome: Promise<{ booking: BookingState } | { error: unknown }>;
}

/** The promise's value, or undefined when `deadline` (epoch milliseconds on the `now` clock) comes first. */
export async function settledBy<T>(
  promise: Promise<T>,
  deadline: number,
  now: () => Date = () => new Date(),
): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - now().getTime()), undefined);
  });
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether the update-with-start reached Temporal's start: its workflow handle resolves once a start answer came
 * back (started, or joined a running one), and rejects when the call failed before that.
 */
export function reachedStart(
  operation: WithStartWorkflowOperation<typeof bookingWorkflow>,
): Promise<boolean> {
  return operation.workflowHandle().then(
    () => true,
    () => false,
  );
}

/**
 * A start that failed before the answer fell due may still have happened. With no workflow, the error is the
 * answer and the claim goes, unless an earlier create of the id was answered with it: then the booking goes on.
 */
export async function answerFailedStart(
  context: BookingContext,
  bookingId: string,
  failure: unknown,
): Promise<never> {
  // A workflow Temporal cannot be asked about counts as not started: the error answer is the safer one.
  const started = await context.temporal.workflow
    .getHandle(bookingWorkflowId(bookingId))
    .describe()
    .then(
      () => true,
      () => false,
    );
  if (!started && (await context.holdClaims.withdraw(bookingId))) {
    throw domainErrorFromTemporal(failure);
  }
  throw bookingProcessing(bookingId, processingRetryAfterSeconds);
}

/**
 * After the answer deadline nobody is left to tell; whoever reads the booking later hears the outcome from the
 * workflow. A create that ends without a booking frees its slot; a start that failed is sent again at once (the
 * reconciler and the booking's readers send it too, should this fail as well).
 */
export function settleLateCreate(context: BookingContext, bookingId: string, started: StartedCreate): void {
  void started.outcome
    .then(async (late) => {
      if (!('error' in late)) return;
      if (late.error instanceof WorkflowUpdateFailedError) {
        if (domainErrorFromTemporal(late.error).code !== 'IDEMPOTENCY_KEY_REUSED') {
          await context.holdClaims.release(bookingId);
        }
      } else if (!(await reachedStart(started.operation))) {
        await context.starts.ensureStarted(bookingId, started.sealedStart);
      }
    })
    // The reconciler sends a lost start again, and the slot of a claim whose booking never came lapses.
    .catch((error: unknown) => context.reportFailure('settle_late_create', error));
}

/**
 * The fingerprint a booking's workflow was started with, asked of Temporal, for a create that cannot hear it from
 * the create update's validator (its workflow has ended, or its answer came too late): another request's booking
 * id is refused, not joined.
 */
export async function assertStartedBySameRequest(
  context: BookingContext,
  bookingId: string,
  fingerprints: RequestFingerprints,
  options: { notStartedYet?: 'fine' } = {},
): Promise<void> {
  let memo: Record<string, unknown> | undefined;
  try {
    ({ memo } = await context.temporal.workflow.getHandle(bookingWorkflowId(bookingId)).describe());
  } catch (error) {
    if (options.notStartedYet === 'fine' && isWorkflowGone(error)) return;
    throw domainErrorFromTemporal(error);
  }
  const recorded = memo?.[createRequestMemoKey];
  if (typeof recorded === 'string' && !isSameRequest(recorded, fingerprints)) throw idempotencyKeyReused();
}

/**
 * Whether a create the update's validator refused as another request is this one after all: its workflow was
 * started with the fingerprint of the earlier scheme, which the validator compares as it stands.
 */
export async function startedUnderEarlierFingerprint(
  context: BookingContext,
  bookingId: string,
  fingerprints: RequestFingerprints,
): Promise<boolean> {
  if (fingerprints.earlierFingerprint === fingerprints.fingerprint) return false;
  try {
    const { memo } = await context.temporal.workflow.getHandle(bookingWorkflowId(bookingId)).describe();
    return memo?.[createRequestMemoKey] === fingerprints.earlierFingerprint;
  } catch (error) {
    throw domainErrorFromTemporal(error);
  }
}
