// Which bookings a scan or a settle looks at, and the Temporal visibility query naming their workflows.
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { bookingWorkflowId, bookingWorkflowType } from '../../../src/workflows/shared';

/**
 * The bookings on these trips, plus these booking ids (a booking a client was told of, which may not exist).
 * A stack of its own scans everything; a test sharing its database with others scopes to its own trips.
 */
export interface InvariantScope {
  tripIds?: readonly string[];
  bookingIds?: readonly string[];
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A list of quoted values made from UUIDs: only UUIDs reach the query text, so nothing in it needs escaping. */
function quotedList(ids: readonly string[], valueOf: (id: string) => string = (id) => id): string {
  for (const id of ids) {
    if (!uuidPattern.test(id)) throw new TypeError(`not a UUID: ${id}`);
  }
  return ids.map((id) => `'${valueOf(id)}'`).join(', ');
}

/** The list query for the booking workflows in scope, optionally of one execution status (`Running`). */
export function bookingWorkflowQuery(scope: InvariantScope | undefined, executionStatus?: string): string {
  const clauses = [`WorkflowType = '${bookingWorkflowType}'`];
  if (executionStatus !== undefined) clauses.push(`ExecutionStatus = '${executionStatus}'`);
  if (scope !== undefined) {
    const alternatives: string[] = [];
    if (scope.tripIds?.length) alternatives.push(`TripId IN (${quotedList(scope.tripIds)})`);
    if (scope.bookingIds?.length) {
      alternatives.push(`WorkflowId IN (${quotedList(scope.bookingIds, bookingWorkflowId)})`);
    }
    // An empty scope names no workflow at all.
    clauses.push(alternatives.length > 0 ? `(${alternatives.join(' OR ')})` : `WorkflowId = ''`);
  }
  return clauses.join(' AND ');
}

/** Runs `work` over `items` with at most `limit` at once. */
export async function forEachLimited<Item>(
  items: readonly Item[],
  limit: number,
  work: (item: Item) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next];
        next += 1;
        await work(item);
      }
    }),
  );
}

export interface SettleOutcome {
  settled: boolean;
  /** Running booking workflows with an activity or a workflow task pending when the wait ended. */
  busyWorkflows: number;
  runningWorkflows: number;
  waitedMs: number;
}

/**
 * What a workflow has still in flight, e.g. `2 activities pending`, or undefined when nothing is. A workflow task
 * pending counts as much as an activity: an activity's result (seats released for a cancel) is in history before
 * the workflow task that applies it (the booking marked CANCELLED), and a killed or frozen worker leaves that task
 * waiting, so a booking reads half done while no activity is pending.
 */
export function workInFlight(description: WorkflowExecutionDescription): string | undefined {
  const activities = description.raw.pendingActivities?.length ?? 0;
  const task = description.raw.pendingWorkflowTask;
  const parts = [
    ...(activities > 0 ? [`${activities} activities pending`] : []),
    ...(task == null ? [] : [`a workflow task pending (attempt ${task.attempt ?? 1})`]),
  ];
  return parts.length === 0 ? undefined : parts.join(' and ');
}

/**
 * Waits until no running booking workflow in scope has work in flight (compensations, refunds and notifications
 * retried after a kill have finished, and their results are applied), or until `timeoutMs` has passed.
 */
export async function waitForSettledWorkflows(
  temporal: Client,
  scope: InvariantScope | undefined,
  timeoutMs: number,
  pollMs = 2000,
): Promise<SettleOutcome> {
  const startedAt = Date.now();
  for (;;) {
    const running: string[] = [];
    for await (const execution of temporal.workflow.list({ query: bookingWorkflowQuery(scope, 'Running') })) {
      running.push(execution.workflowId);
    }
    let busy = 0;
    await forEachLimited(running, 8, async (workflowId) => {
      const description = await temporal.workflow
        .getHandle(workflowId)
        .describe()
        .catch(() => undefined);
      if (description !== undefined && workInFlight(description) !== undefined) busy += 1;
    });
    const waitedMs = Date.now() - startedAt;
    if (busy === 0 || waitedMs >= timeoutMs) {
      return { settled: busy === 0, busyWorkflows: busy, runningWorkflows: running.length, waitedMs };
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
