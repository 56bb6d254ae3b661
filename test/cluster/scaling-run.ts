// Scaling figures: saga throughput (create → pay → CONFIRMED) on the Temporal dev server, then on the cluster with
// 1, 2 and 4 worker processes on the bookings queue, with the CPU each process used per booking.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchLimits, startBenchStack } from '../../bench/lib/bench-stack';
import { seedInventory, SeatSupply } from '../../bench/lib/inventory';
import { ProcessSampler, type WatchedProcess } from '../../bench/lib/process-sampler';
import { restCreateUntilHeld, restPay, type Account } from '../../bench/lib/service-client';
import { drive } from '../../bench/scenarios/saga';
import { createDatabase } from '../../src/db/connection';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import { startClusterStack } from '../../dev/stack/cluster';
import { signInCustomers } from './load/customers';

const usage = `tsx test/cluster/scaling-run.ts [--concurrency 30] [--bookings 150] [--workers 1,2,4] [--no-dev-server]
Run \`npm run build\` first (the cluster stack starts the compiled processes); nothing else may load the machine
while it measures. Ports: the cluster stack's CLUSTER_* variables.`;

interface Measurement {
  name: string;
  bookingsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  failureReasons: Record<string, number>;
  seconds: number;
  processes: { name: string; cpuPercent: number; cpuMsPerBooking: number; rssMaximumMiB: number }[];
}

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

async function measure(
  name: string,
  apiUrls: readonly string[],
  accounts: readonly Account[],
  seats: SeatSupply,
  watched: () => WatchedProcess[],
  concurrency: number,
  bookings: number,
): Promise<Measurement> {
  let next = 0;
  const one = async (): Promise<string> => {
    const index = next++;
    const apiUrl = apiUrls[index % apiUrls.length];
    const account = accounts[index % accounts.length];
    const created = await restCreateUntilHeld(apiUrl, account, seats.next());
    if (!['200', '201'].includes(created.status) || created.bookingId === undefined) {
      return `create ${created.status} ${created.code ?? ''}`.trim();
    }
    const paid = await restPay(apiUrl, account, created.bookingId);
    return paid.status === '200' && paid.body.status === 'CONFIRMED'
      ? 'ok'
      : `pay ${paid.status} ${paid.code ?? paid.body.status ?? ''}`.trim();
  };
  // Warm-up: one round, unmeasured (connections, JIT, the workers' caches).
  await drive(concurrency, concurrency, one);
  const sampler = new ProcessSampler(watched);
  sampler.start();
  const result = await drive(concurrency, bookings, one);
  const usage = sampler.stop();
  return {
    name,
    bookingsPerSecond: result.figures.bookingsPerSecond,
    p50Ms: result.figures.p50Ms,
    p99Ms: result.figures.p99Ms,
    failures: result.figures.failures,
    failureReasons: result.failureReasons,
    seconds: usage.seconds,
    processes: usage.processes.map((process) => ({
      name: process.name,
      cpuPercent: process.cpuPercent,
      cpuMsPerBooking: result.operations > 0 ? (process.cpuSeconds * 1000) / result.operations : 0,
      rssMaximumMiB: process.rssMaximumMiB,
    })),
  };
}

function print(measurement: Measurement): void {
  const failed =
    measurement.failures > 0
      ? `, ${measurement.failures} failed (${Object.entries(measurement.failureReasons)
          .map(([reason, count]) => `${reason} ×${count}`)
          .join(', ')})`
      : '';
  say(
    `${measurement.name}: ${measurement.bookingsPerSecond.toFixed(2)} bookings/s, p50 ${measurement.p50Ms.toFixed(0)} ms, ` +
      `p99 ${measurement.p99Ms.toFixed(0)} ms over ${measurement.seconds.toFixed(1)} s${failed}`,
  );
  const total = measurement.processes.reduce((sum, process) => sum + process.cpuPercent, 0);
  say(
    `  CPU of all processes together: ${total.toFixed(0)} % of one core (the machine has ${os.cpus().length} cores)`,
  );
  for (const process of [...measurement.processes].sort((a, b) => b.cpuPercent - a.cpuPercent)) {
    say(
      `  ${process.name.padEnd(30)} CPU ${process.cpuPercent.toFixed(0).padStart(4)} %, ${process.cpuMsPerBooking.toFixed(1).padStart(7)} ms per booking, peak RSS ${process.rssMaximumMiB.toFixed(0)} MiB`,
    );
  }
}

function postmasterPid(dataDirectory: string): number {
  return Number(fs.readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

async function onDevServer(concurrency: number, bookings: number): Promise<Measurement> {
  const stack = await startBenchStack({
    trips: 200,
    log: (message) => say(`  dev server stack: ${message}`),
  });
  try {
    const accounts = await signInCustomers(stack.apiUrl, 30);
    const watched = () => stack.watchedProcesses().filter((process) => process.name !== 'noop-worker');
    return await measure(
      'dev server (one API, one worker on every queue)',
      [stack.apiUrl],
      accounts,
      new SeatSupply(stack.inventory.tripIds),
      watched,
      concurrency,
      bookings,
    );
  } finally {
    await stack.stop();
  }
}

async function onCluster(
  bookingsWorkers: number,
  concurrency: number,
  bookings: number,
): Promise<Measurement> {
  const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'scaling-run-'));
  // PostgreSQL runs as its own account when started by root: it must reach its folder.
  fs.chmodSync(dataDirectory, 0o755);
  const stack = await startClusterStack({
    settings: { dataDirectory },
    bookingsWorkers,
    environment: { ...benchLimits, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  });
  const database = createDatabase(stack.databaseUrl, { poolSize: 2, applicationName: 'scaling-run' });
  try {
    const inventory = await seedInventory(database, createFieldCipherFromConfig(stack.config), 200);
    const accounts = await signInCustomers(stack.restUrls[0], 30);
    const postgresPid = postmasterPid(stack.postgres.dataDirectory);
    const watched = (): WatchedProcess[] => [
      ...stack.processNames().flatMap((name) => {
        const pid = stack.pid(name);
        return pid === undefined ? [] : [{ name, pid }];
      }),
      { name: 'postgres', pid: postgresPid, includeChildren: true },
      { name: 'driver', pid: process.pid },
    ];
    return await measure(
      `cluster, ${bookingsWorkers} bookings worker${bookingsWorkers === 1 ? '' : 's'} (two APIs, one worker per activity queue)`,
      stack.restUrls,
      accounts,
      new SeatSupply(inventory.tripIds),
      watched,
      concurrency,
      bookings,
    );
  } finally {
    await database.destroy();
    await stack.stop();
    fs.rmSync(dataDirectory, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '30' },
      bookings: { type: 'string', default: '150' },
      workers: { type: 'string', default: '1,2,4' },
      'no-dev-server': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    say(usage);
    return;
  }
  const concurrency = Number(values.concurrency);
  const bookings = Number(values.bookings);
  const workerCounts = values.workers.split(',').map(Number);
  if (![concurrency, bookings, ...workerCounts].every((value) => Number.isInteger(value) && value > 0)) {
    throw new Error(`--concurrency, --bookings and --workers take positive whole numbers\n${usage}`);
  }
  say(
    `saga create → pay → CONFIRMED over REST, ${concurrency} at a time, ${bookings} bookings per configuration`,
  );
  const results: Measurement[] = [];
  if (!values['no-dev-server']) {
    results.push(await onDevServer(concurrency, bookings));
    print(results[results.length - 1]);
  }
  for (const count of workerCounts) {
    results.push(await onCluster(count, concurrency, bookings));
    print(results[results.length - 1]);
  }
  say();
  say('summary:');
  for (const result of results)
    say(`  ${result.bookingsPerSecond.toFixed(2).padStart(7)} bookings/s  ${result.name}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `scaling run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
