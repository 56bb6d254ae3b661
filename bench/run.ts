// `npm run bench`: starts everything it measures, runs every scenario against its baseline, prints the table with
// the ratios and the CPU and memory of each process, and writes bench/results/<time>.{json,svg} and latest.*.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { projectRoot } from '../src/project-root';
import { startBenchStack, type BenchStack } from './lib/bench-stack';
import { buildHttpDriver } from './lib/http-load';
import { SeatSupply } from './lib/inventory';
import type { BenchContext, ScenarioResult } from './lib/measurement';
import { parseBenchOptions, usage, type BenchOptions } from './lib/options';
import { ProcessSampler } from './lib/process-sampler';
import { resultsTable, startupLine, usageTable, writeReport, type BenchReport } from './lib/report';
import { createGrpcClient, signInPool } from './lib/service-client';
import { burstScenario } from './scenarios/burst';
import { createScenarios } from './scenarios/create';
import { loginScenario } from './scenarios/login';
import {
  availabilityScenario,
  bareBodies,
  partyAvailabilityScenario,
  routesScenario,
} from './scenarios/read-path';
import { sagaScenario } from './scenarios/saga';
import { soakScenario } from './scenarios/soak';

const benchStartedAt = performance.now();
function log(message: string): void {
  const elapsed = ((performance.now() - benchStartedAt) / 1000).toFixed(0).padStart(4);
  process.stdout.write(`[bench ${elapsed}s] ${message}\n`);
}

/** The production build the worker and API processes run from (`npm run build`). */
function build(): void {
  log('building dist/ (npm run build)');
  const result = spawnSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('npm run build failed');
}

const scenarios: Record<
  BenchOptions['scenarios'][number],
  (context: BenchContext) => Promise<ScenarioResult[]>
> = {
  routes: async (context) => [await routesScenario(context)],
  availability: async (context) => [await availabilityScenario(context)],
  'availability-party': async (context) => [await partyAvailabilityScenario(context)],
  login: async (context) => [await loginScenario(context)],
  create: (context) => createScenarios(context),
  saga: async (context) => [await sagaScenario(context)],
  burst: async (context) => [await burstScenario(context)],
  soak: async (context) => [await soakScenario(context)],
};

function failedScenario(id: string, why: string): ScenarioResult {
  return {
    id,
    title: id,
    service: why,
    baseline: '–',
    ratioText: '–',
    required: '–',
    goal: '–',
    met: false,
    runs: [],
  };
}

async function main(): Promise<void> {
  let options: BenchOptions;
  try {
    options = parseBenchOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exit(2);
  }
  const startedAt = new Date().toISOString();
  if (options.build) build();
  buildHttpDriver(log);

  let stack: BenchStack | undefined;
  let connection: Connection | undefined;
  let context: BenchContext | undefined;
  const failures: string[] = [];
  const stopEverything = async () => {
    context?.grpc.close();
    await connection?.close().catch(() => undefined);
    await stack?.stop();
  };
  process.once('SIGINT', () => void stopEverything().finally(() => process.exit(130)));
  try {
    stack = await startBenchStack({ trips: options.trips, log });
    const started = stack;
    log('signing the load-test accounts in');
    const accounts = await signInPool(stack.apiUrl);
    connection = await Connection.connect({ address: stack.temporalAddress });
    context = {
      stack,
      options,
      accounts,
      seats: new SeatSupply(stack.inventory.tripIds),
      sampler: new ProcessSampler(() => started.watchedProcesses()),
      temporal: new Client({ connection, namespace: stack.namespace }),
      grpc: createGrpcClient(stack.grpcAddress, stack.certificates),
      log,
    };
    await stack.startBareKoa(await bareBodies(context));

    const results: ScenarioResult[] = [];
    for (const id of options.scenarios) {
      const exited = stack.exitedProcesses();
      if (exited.length > 0) {
        // Nothing after a process of the run died would measure what it says.
        const why = exited.map((process) => `${process.name} exited: ${process.reason}`).join('; ');
        log(`scenario ${id} skipped: ${why}`);
        results.push(failedScenario(id, `skipped: ${why}`));
        continue;
      }
      log(`scenario ${id}`);
      try {
        results.push(...(await scenarios[id](context)));
      } catch (error) {
        // The bench itself broke here: the others still run and the report is still written, then the run fails.
        const message = error instanceof Error ? error.message : String(error);
        log(`scenario ${id} failed: ${message}`);
        failures.push(`${id}: ${message}`);
        results.push(failedScenario(id, `the scenario failed: ${message}`));
      }
    }

    const report: BenchReport = {
      startedAt,
      finishedAt: new Date().toISOString(),
      quick: options.quick,
      options: { ...options },
      machine: { cpus: os.cpus().length, loadAverage: os.loadavg(), node: process.version },
      startup: {
        api: stack.api.startSeconds,
        worker: stack.worker.startSeconds,
        'no-op worker': stack.noopWorker.startSeconds,
      },
      inventory: {
        trips: stack.inventory.trips,
        seatsPerTrip: stack.inventory.seatsPerTrip,
        bookedSeatsPerTrip: stack.inventory.bookedSeatsPerTrip,
      },
      results,
    };
    const written = writeReport(path.resolve(projectRoot, options.resultsDirectory), report);
    process.stdout.write(
      [
        '',
        `Bench${options.quick ? ' (quick: small figures, for the bench not to rot; not comparable with a full run)' : ''}, ${os.cpus().length} cores, load average ${os
          .loadavg()
          .map((value) => value.toFixed(2))
          .join(' ')}`,
        '',
        resultsTable(results),
        '',
        'CPU and memory per process over each side of each scenario: "CPU % of one core, CPU ms per operation, peak RSS MiB"',
        '',
        usageTable(results),
        '',
        startupLine(report.startup),
        `written: ${written.map((file) => path.relative(projectRoot, file)).join(', ')}`,
        '',
      ].join('\n'),
    );
    if (!fs.existsSync(written[0])) throw new Error('the report was not written');
  } finally {
    log('stopping');
    if (stack !== undefined && (failures.length > 0 || stack.exitedProcesses().length > 0)) {
      // The temporary folder goes away with the stack: the processes' logs are kept for whoever looks into it.
      const kept = path.resolve(
        projectRoot,
        options.resultsDirectory,
        `logs-${startedAt.replace(/[:.]/g, '-')}`,
      );
      fs.cpSync(path.join(stack.directory, 'logs'), kept, { recursive: true });
      log(`the processes' logs are kept in ${path.relative(projectRoot, kept)}`);
    }
    await stopEverything();
  }
  if (failures.length > 0) throw new Error(`scenarios failed: ${failures.join('; ')}`);
  log('done');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
