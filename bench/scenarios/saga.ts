// The saga from create to CONFIRMED at a fixed concurrency, against the no-op workflow of the same shape.
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { bookingSearchAttributes } from '../../src/workflows/shared';
import {
  noopConfirmPaymentUpdate,
  noopCreateBookingUpdate,
  noopTaskQueues,
  type NoopBookingInput,
} from '../baselines/noop-workflows';
import {
  alternate,
  figuresOf,
  formatNumber,
  type BenchContext,
  type ScenarioResult,
} from '../lib/measurement';
import { restCreateUntilHeld, restPay, type Account } from '../lib/service-client';
import { median, summariseLatencies } from '../lib/statistics';

const requiredRatio = 0.9;
const goalRatio = 0.95;

/**
 * `concurrency` loops, each starting its next booking as soon as the last one ended, until `total` have been
 * started; throughput is the total over the time until the last one ended. A fixed count in whole rounds, not a
 * fixed time: a booking takes seconds, and a time window would mostly measure the first and the last round.
 * `one` answers 'ok' or why it failed.
 */
export async function drive(
  concurrency: number,
  total: number,
  one: () => Promise<string>,
): Promise<{ operations: number; figures: Record<string, number>; failureReasons: Record<string, number> }> {
  const startedAt = performance.now();
  const latencies: number[] = [];
  const failureReasons: Record<string, number> = {};
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started += 1;
        const began = performance.now();
        const outcome = await one().catch((error: unknown) =>
          error instanceof Error ? error.message : String(error),
        );
        if (outcome === 'ok') latencies.push(performance.now() - began);
        else failureReasons[outcome] = (failureReasons[outcome] ?? 0) + 1;
      }
    }),
  );
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  const summary = summariseLatencies(latencies);
  return {
    operations: latencies.length,
    figures: {
      bookingsPerSecond: latencies.length / elapsedSeconds,
      p50Ms: summary.p50,
      p99Ms: summary.p99,
      failures: total - latencies.length,
    },
    failureReasons,
  };
}

export async function sagaScenario(context: BenchContext): Promise<ScenarioResult> {
  const { stack, options, seats, temporal } = context;
  const queues = noopTaskQueues(stack.noopTaskQueuePrefix);
  let next = 0;
  const nextAccount = (): Account => context.accounts[next++ % context.accounts.length];
  const total = options.sagaConcurrency * options.sagaRounds;

  const serviceBooking = async (): Promise<string> => {
    const account = nextAccount();
    const created = await restCreateUntilHeld(stack.apiUrl, account, seats.next());
    if (!['200', '201'].includes(created.status) || created.bookingId === undefined) {
      return `create ${created.status} ${created.code ?? ''}`.trim();
    }
    const paid = await restPay(stack.apiUrl, account, created.bookingId);
    return paid.status === '200' && paid.body.status === 'CONFIRMED'
      ? 'ok'
      : `pay ${paid.status} ${paid.code ?? paid.body.status ?? ''}`.trim();
  };

  const noopBooking = async (): Promise<string> => {
    const bookingId = randomUUID();
    const input: NoopBookingInput = {
      bookingId,
      routeId: randomUUID(),
      tripId: randomUUID(),
      customerId: randomUUID(),
      departureTime: new Date(Date.now() + 3 * 86_400_000).toISOString(),
      holdDurationMs: 24 * 3600 * 1000,
      taskQueues: queues,
    };
    const workflowId = `bench-noop-${bookingId}`;
    await temporal.workflow.executeUpdateWithStart(noopCreateBookingUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation('noopBookingWorkflow', {
        workflowId,
        taskQueue: queues.bookings,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: bookingSearchAttributes({ ...input, status: 'PENDING_PAYMENT' }),
      }),
    });
    const paid = await temporal.workflow
      .getHandle(workflowId)
      .executeUpdate(noopConfirmPaymentUpdate, { args: [{ paymentToken: 'tok_visa' }] });
    return paid.status === 'CONFIRMED' ? 'ok' : `pay ${paid.status}`;
  };

  // Warm-up: one of each.
  await serviceBooking();
  await noopBooking();
  const runs = await alternate(context, {
    service: () => drive(options.sagaConcurrency, total, serviceBooking),
    baseline: () => drive(options.sagaConcurrency, total, noopBooking),
  });
  const serviceRate = median(figuresOf(runs, 'service', 'bookingsPerSecond'));
  const baselineRate = median(figuresOf(runs, 'baseline', 'bookingsPerSecond'));
  const failures = figuresOf(runs, 'service', 'failures').reduce((sum, value) => sum + value, 0);
  const ratio = serviceRate / baselineRate;
  return {
    id: 'saga',
    title: `saga create → pay → CONFIRMED, concurrency ${options.sagaConcurrency} (${total} per run)`,
    service: `${formatNumber(serviceRate)} bookings/s (p50 ${formatNumber(median(figuresOf(runs, 'service', 'p50Ms')))} ms)${failures > 0 ? `, ${failures} failed` : ''}`,
    baseline: `no-op workflow of the same shape ${formatNumber(baselineRate)}/s`,
    ratio,
    ratioText: ratio.toFixed(2),
    required: `≥ ${requiredRatio}`,
    goal: `≥ ${goalRatio}`,
    met: ratio >= requiredRatio && failures === 0,
    runs,
  };
}
