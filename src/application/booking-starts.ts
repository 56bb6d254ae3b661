// A booking's workflow start, sealed into its claim before it is sent: whoever finds it unstarted sends it again.
import {
  WorkflowExecutionAlreadyStartedError,
  type Client,
  type WorkflowIdConflictPolicy,
  type WorkflowIdReusePolicy,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { taskQueues } from '../domain/task-queues';
import type { FieldCipher } from '../security/field-encryption';
import type { bookingWorkflow } from '../workflows/booking';
import {
  bookingSearchAttributes,
  bookingSummary,
  bookingWorkflowId,
  bookingWorkflowType,
  createRequestMemoKey,
  requestCancellationSignal,
  type BookingWorkflowInput,
  type CancelBookingRequest,
} from '../workflows/shared';
import type { OpenHoldClaims } from '../db/booking-hold-claims';

/** Everything a booking's start sends: the workflow's input and the fingerprint of the request that made it. */
export interface BookingStart {
  input: BookingWorkflowInput;
  requestFingerprint: string;
}

export interface BookingStartOptions {
  workflowId: string;
  taskQueue: string;
  /** A repeated booking id joins the running workflow; one that has ended is never started again. */
  workflowIdConflictPolicy: WorkflowIdConflictPolicy;
  workflowIdReusePolicy: WorkflowIdReusePolicy;
  args: [BookingWorkflowInput];
  typedSearchAttributes: SearchAttributePair[];
  staticSummary: string;
  memo: Record<string, string>;
}

/** The one way a booking's workflow is started, by its create, a read that finds it unstarted, or the reconciler. */
export function bookingStartOptions(start: BookingStart): BookingStartOptions {
  const { input } = start;
  return {
    workflowId: bookingWorkflowId(input.bookingId),
    taskQueue: (input.taskQueues ?? taskQueues).bookings,
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [input],
    typedSearchAttributes: bookingSearchAttributes({ ...input, status: 'PENDING_PAYMENT' }),
    staticSummary: bookingSummary(input),
    memo: { [createRequestMemoKey]: start.requestFingerprint },
  };
}

/**
 * Whether the booking's workflow runs now, or ran and has ended (it is never started twice); `withdrawn` when its
 * create answered an error and dropped the claim before anyone else could start it, so nothing was started.
 */
export type StartOutcome = 'running' | 'ended' | 'withdrawn';

export interface BookingStarts {
  /** The start as stored with the claim: encrypted, since the input names the passengers. */
  seal(start: BookingStart): string;
  /**
   * Starts the booking's workflow from its sealed start unless it exists, first making the claim a promise no error
   * answer may drop; throws when Temporal cannot be reached.
   */
  ensureStarted(bookingId: string, sealedStart: string): Promise<StartOutcome>;
  /**
   * Records a cancel with the booking's workflow, starting the workflow first when no start reached Temporal:
   * the workflow applies it once the seats are held. 'ended' when the workflow had already ended.
   */
  requestCancellation(
    bookingId: string,
    sealedStart: string,
    request: CancelBookingRequest,
  ): Promise<StartOutcome>;
}

export function createBookingStarts(dependencies: {
  temporal: Client;
  cipher: FieldCipher;
  claims: OpenHoldClaims;
}): BookingStarts {
  const { temporal, cipher, claims } = dependencies;

  function unseal(sealedStart: string): BookingStart {
    return JSON.parse(cipher.decrypt(sealedStart)) as BookingStart;
  }

  async function startedBy(bookingId: string, send: () => Promise<unknown>): Promise<StartOutcome> {
    // The create's error answer and this start are one or the other, never both: one row decides.
    if (!(await claims.promise(bookingId))) return 'withdrawn';
    let outcome: StartOutcome = 'running';
    try {
      await send();
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      outcome = 'ended';
    }
    await claims.markStarted(bookingId);
    return outcome;
  }

  return {
    seal: (start) => cipher.encrypt(JSON.stringify(start)),

    ensureStarted: (bookingId, sealedStart) =>
      startedBy(bookingId, () =>
        temporal.workflow.start<typeof bookingWorkflow>(
          bookingWorkflowType,
          bookingStartOptions(unseal(sealedStart)),
        ),
      ),

    requestCancellation: (bookingId, sealedStart, request) =>
      startedBy(bookingId, () =>
        temporal.workflow.signalWithStart<typeof bookingWorkflow, [CancelBookingRequest]>(
          bookingWorkflowType,
          {
            ...bookingStartOptions(unseal(sealedStart)),
            signal: requestCancellationSignal,
            signalArgs: [request],
          },
        ),
      ),
  };
}
