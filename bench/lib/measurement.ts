// What every scenario reports, and the one way a measured run is taken: the processes sampled around it.
import type { Client } from '@temporalio/client';
import type { BookingClient } from '../../src/api/grpc/client';
import type { BenchOptions } from './options';
import type { BenchStack } from './bench-stack';
import type { SeatSupply } from './inventory';
import type { ProcessSampler, UsageWindow } from './process-sampler';
import type { Account } from './service-client';

export interface BenchContext {
  stack: BenchStack;
  options: BenchOptions;
  accounts: Account[];
  seats: SeatSupply;
  sampler: ProcessSampler;
  temporal: Client;
  grpc: BookingClient;
  log: (message: string) => void;
}

/** One measured run of one side (the service or its baseline). */
export interface RunMeasurement {
  side: string;
  repeat: number;
  /** How many operations the run completed: requests, bookings. CPU per operation is divided by it. */
  operations: number;
  figures: Record<string, number>;
  /** What failed operations answered, and how often: '409 SEAT_UNAVAILABLE': 3. */
  failureReasons?: Record<string, number>;
  usage: UsageWindow;
}

export interface WorkOutcome {
  operations: number;
  figures: Record<string, number>;
  failureReasons?: Record<string, number>;
}

export interface ScenarioResult {
  id: string;
  title: string;
  service: string;
  baseline: string;
  /** service ÷ baseline for throughput, service ÷ baseline for latency (then lower is better). */
  ratio?: number;
  ratioText: string;
  required: string;
  goal: string;
  /** Whether "required now" is met; undefined where the issue sets no requirement. */
  met?: boolean;
  runs: RunMeasurement[];
  details?: Record<string, unknown>;
}

/** Runs `work` with every process sampled around it. */
export async function measured(
  context: BenchContext,
  side: string,
  repeat: number,
  work: () => Promise<WorkOutcome>,
): Promise<RunMeasurement> {
  context.sampler.start();
  let outcome: WorkOutcome;
  let usage: UsageWindow;
  try {
    outcome = await work();
  } finally {
    // The window closes even when the work fails, so the next run starts a fresh one.
    usage = context.sampler.stop();
  }
  context.log(
    `  ${side} #${repeat}: ${Object.entries(outcome.figures)
      .map(([name, value]) => `${name} ${formatNumber(value)}`)
      .join(', ')}`,
  );
  const reasons = Object.entries(outcome.failureReasons ?? {});
  if (reasons.length > 0)
    context.log(`    failed: ${reasons.map(([reason, count]) => `${count}× ${reason}`).join(', ')}`);
  return {
    side,
    repeat,
    operations: outcome.operations,
    figures: outcome.figures,
    ...(reasons.length === 0 ? {} : { failureReasons: outcome.failureReasons }),
    usage,
  };
}

/**
 * Alternates the sides, each `repeats` times, switching which goes first on every repeat so that neither always
 * runs on a machine the other has just warmed (or heated).
 */
export async function alternate(
  context: BenchContext,
  sides: Record<string, (repeat: number) => Promise<WorkOutcome>>,
): Promise<RunMeasurement[]> {
  const names = Object.keys(sides);
  const runs: RunMeasurement[] = [];
  for (let repeat = 1; repeat <= context.options.repeats; repeat += 1) {
    const order = repeat % 2 === 1 ? names : [...names].reverse();
    for (const name of order) runs.push(await measured(context, name, repeat, () => sides[name](repeat)));
  }
  return runs;
}

export function figuresOf(runs: readonly RunMeasurement[], side: string, figure: string): number[] {
  return runs.filter((run) => run.side === side).map((run) => run.figures[figure] ?? Number.NaN);
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}
