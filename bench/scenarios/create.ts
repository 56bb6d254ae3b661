// CreateBooking one at a time: REST against a bare update-with-start round trip, and gRPC against REST.
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { bareUpdate, noopTaskQueues } from '../baselines/noop-workflows';
import {
  alternate,
  figuresOf,
  formatNumber,
  type BenchContext,
  type ScenarioResult,
} from '../lib/measurement';
import { grpcCreate, restCreate, type Account, type CallOutcome } from '../lib/service-client';
import { median, summariseLatencies } from '../lib/statistics';

const requiredFactor = 2;
const goalFactor = 1.5;

function rotatingAccounts(accounts: readonly Account[]): () => Account {
  let next = 0;
  return () => accounts[next++ % accounts.length];
}

async function sequential(
  samples: number,
  call: () => Promise<CallOutcome>,
  succeeded: (outcome: CallOutcome) => boolean,
): Promise<{ operations: number; figures: Record<string, number> }> {
  const latencies: number[] = [];
  let failures = 0;
  for (let sample = 0; sample < samples; sample += 1) {
    const outcome = await call();
    if (succeeded(outcome)) latencies.push(outcome.milliseconds);
    else failures += 1;
  }
  const summary = summariseLatencies(latencies);
  return {
    operations: samples,
    figures: { p50Ms: summary.p50, p90Ms: summary.p90, p99Ms: summary.p99, failures },
  };
}

export async function createScenarios(context: BenchContext): Promise<ScenarioResult[]> {
  const { stack, options, seats, temporal } = context;
  const nextAccount = rotatingAccounts(context.accounts);
  const queues = noopTaskQueues(stack.noopTaskQueuePrefix);
  const rest = () =>
    sequential(
      options.createSamples,
      () => restCreate(stack.apiUrl, nextAccount(), seats.next()),
      (outcome) => outcome.status === '201',
    );
  const grpc = () =>
    sequential(
      options.createSamples,
      () => grpcCreate(context.grpc, nextAccount(), seats.next()),
      (outcome) => outcome.status === 'OK',
    );
  const bareCall = async (): Promise<CallOutcome> => {
    const startedAt = performance.now();
    await temporal.workflow.executeUpdateWithStart(bareUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation('bareUpdateWithStartWorkflow', {
        workflowId: `bench-bare-${randomUUID()}`,
        taskQueue: queues.bookings,
        workflowIdConflictPolicy: 'FAIL',
      }),
    });
    return { status: 'OK', milliseconds: performance.now() - startedAt };
  };
  const bareUpdateWithStart = () => sequential(options.createSamples, bareCall, () => true);
  // Warm-up: the first call of each kind pays for connections and compilation.
  await restCreate(stack.apiUrl, nextAccount(), seats.next());
  await grpcCreate(context.grpc, nextAccount(), seats.next());
  await bareCall();

  const runs = await alternate(context, { rest, grpc, 'bare update-with-start': bareUpdateWithStart });
  const restP50 = median(figuresOf(runs, 'rest', 'p50Ms'));
  const grpcP50 = median(figuresOf(runs, 'grpc', 'p50Ms'));
  const bareP50 = median(figuresOf(runs, 'bare update-with-start', 'p50Ms'));
  const restFailures = figuresOf(runs, 'rest', 'failures').reduce((sum, value) => sum + value, 0);
  const grpcFailures = figuresOf(runs, 'grpc', 'failures').reduce((sum, value) => sum + value, 0);
  const restFactor = restP50 / bareP50;
  const grpcFactor = grpcP50 / restP50;
  const failed = (count: number) => (count > 0 ? `, ${count} failed` : '');
  return [
    {
      id: 'create',
      title: 'CreateBooking (REST) at concurrency 1, p50',
      service: `${formatNumber(restP50)} ms (p99 ${formatNumber(median(figuresOf(runs, 'rest', 'p99Ms')))} ms)${failed(restFailures)}`,
      baseline: `bare update-with-start round trip ${formatNumber(bareP50)} ms`,
      ratio: restFactor,
      ratioText: `${restFactor.toFixed(2)}×`,
      required: `≤ ${requiredFactor}×`,
      goal: `≤ ${goalFactor}×`,
      met: restFactor <= requiredFactor && restFailures === 0,
      runs: runs.filter((run) => run.side !== 'grpc'),
    },
    {
      id: 'grpc-create',
      title: 'CreateBooking over gRPC (mutual TLS) against REST, concurrency 1, p50',
      service: `gRPC ${formatNumber(grpcP50)} ms (p99 ${formatNumber(median(figuresOf(runs, 'grpc', 'p99Ms')))} ms)${failed(grpcFailures)}`,
      baseline: `REST ${formatNumber(restP50)} ms`,
      ratio: grpcFactor,
      ratioText: `${grpcFactor.toFixed(2)}×`,
      required: '– (no failures)',
      goal: '–',
      met: grpcFailures === 0,
      runs: runs.filter((run) => run.side !== 'bare update-with-start'),
    },
  ];
}
