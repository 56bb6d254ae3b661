// Everything a bench run measures, started in a temporary folder on free ports: PostgreSQL, the Temporal dev
// server, the real API and worker processes from dist/, and the baselines (bare Koa, the no-op saga's worker).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { loadConfig, plaintextTemporalEnvironment } from '../../src/config';
import { createDatabase } from '../../src/db/connection';
import { migrateWithDatabase } from '../../src/db/migrate';
import { seedDemoData } from '../../dev/seed';
import { projectRoot } from '../../src/project-root';
import { nodeFlagsOf } from '../../src/runtime/node-flags';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import type { FieldCipher } from '../../src/security/field-encryption';
import { stopChild, stopWithParent } from '../../dev/stack/child-processes';
import {
  loadOrCreateDevelopmentCertificates,
  type DevelopmentCertificates,
} from '../../dev/stack/development-certificates';
import { loadOrCreateDevelopmentSecrets } from '../../dev/stack/development-secrets';
import { startEmbeddedPostgres, type RunningPostgres } from '../../dev/stack/embedded-postgres';
import { startTemporalDevServer, type RunningTemporal } from '../../dev/stack/temporal-dev-server';
import { seedInventory, type Inventory } from './inventory';
import type { WatchedProcess } from './process-sampler';

/** The service's limits lifted, so none of them is what a measurement measures (no rate limit, day-long holds). */
export const benchLimits: Readonly<Record<string, string>> = {
  RATE_LIMIT_PER_USER: '0',
  RATE_LIMIT_PER_IP: '0',
  IDP_LOGIN_MAX_FAILURES_PER_IP: '100000',
  IDP_ACCESS_TOKEN_TTL_SECONDS: String(24 * 3600),
  BOOKING_HOLD_SECONDS: String(24 * 3600),
  BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '1000',
};

export interface BenchStackOptions {
  trips: number;
  log: (message: string) => void;
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Seconds from spawn until it said it was ready. */
  startSeconds: number;
}

export interface BenchStack {
  directory: string;
  apiUrl: string;
  /** The worker's Prometheus endpoint (the SDK's sticky cache size among its figures). */
  workerMetricsUrl: string;
  grpcAddress: string;
  certificates: DevelopmentCertificates;
  temporalAddress: string;
  namespace: string;
  noopTaskQueuePrefix: string;
  database: Knex;
  cipher: FieldCipher;
  inventory: Inventory;
  api: ServiceProcess;
  worker: ServiceProcess;
  noopWorker: ServiceProcess;
  /** Started once the service's own bodies are known (startBareKoa). */
  bareKoa?: ServiceProcess & { url: string; loginPassword: string };
  startBareKoa(bodies: Record<string, string>): Promise<void>;
  /** Processes of the run that have exited, each with the last error its log shows. */
  exitedProcesses(): { name: string; reason: string }[];
  watchedProcesses(): WatchedProcess[];
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The pid of the process whose command line contains `marker`: the dev server is found by its database file. */
function findPidByCommandLine(marker: string): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (commandLine.includes(marker) && !commandLine.includes('bench/run')) return Number(entry);
    } catch {
      // Gone already.
    }
  }
  return undefined;
}

/** The postmaster's pid: line 1 of postmaster.pid in the cluster folder. */
function postmasterPid(postgres: RunningPostgres): number {
  const firstLine = fs
    .readFileSync(path.join(postgres.dataDirectory, 'postmaster.pid'), 'utf8')
    .split('\n')[0];
  return Number(firstLine);
}

/** A file's bytes from `offset` on. */
function bytesFrom(file: string, offset: number): Buffer {
  const descriptor = fs.openSync(file, 'r');
  try {
    const unread = Buffer.alloc(Math.max(0, fs.fstatSync(descriptor).size - offset));
    fs.readSync(descriptor, unread, 0, unread.length, offset);
    return unread;
  } finally {
    fs.closeSync(descriptor);
  }
}

/** How often a starting process's log is read for its ready line. */
const readyLinePollMs = 100;

/**
 * Spawns a process writing its output straight into `<directory>/logs/<name>.log` and waits for a line there that
 * `isReady` accepts; a process that exits first fails the start with the end of its log. The bench never reads the
 * output through a pipe: at full load the API logs a line per request, and passing thousands of lines a second
 * through this process took CPU from the cores the measured processes share.
 */
async function spawnService(
  name: string,
  args: string[],
  environment: NodeJS.ProcessEnv,
  logDirectory: string,
  /** Without one, the process counts as started at once (the caller checks readiness its own way). */
  isReady: ((line: string) => boolean) | undefined,
  timeoutMs: number,
): Promise<ServiceProcess & { readyLine: string }> {
  const logFile = path.join(logDirectory, `${name}.log`);
  const logDescriptor = fs.openSync(logFile, 'a');
  const startedAt = performance.now();
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, {
      cwd: projectRoot,
      env: environment,
      stdio: ['ignore', logDescriptor, logDescriptor],
    });
  } finally {
    // The child holds its own copy of the descriptor.
    fs.closeSync(logDescriptor);
  }
  stopWithParent(child);
  const started = { name, child, pid: child.pid! };
  if (isReady === undefined) return { ...started, startSeconds: 0, readyLine: '' };
  const ready = isReady;
  return new Promise((resolve, reject) => {
    let settled = false;
    let readBytes = 0;
    const poll = setInterval(readNewLines, readyLinePollMs);
    const timer = setTimeout(() => fail(`did not become ready within ${timeoutMs / 1000} s`), timeoutMs);
    function settle(): boolean {
      if (settled) return false;
      settled = true;
      clearInterval(poll);
      clearTimeout(timer);
      return true;
    }
    function readNewLines() {
      if (settled) return;
      const unread = bytesFrom(logFile, readBytes);
      // Whole lines only: the rest is read again once its line is complete.
      const wholeLinesLength = unread.lastIndexOf('\n') + 1;
      readBytes += wholeLinesLength;
      const lines = unread.subarray(0, wholeLinesLength).toString('utf8').split('\n');
      const readyLine = lines.find(ready);
      if (readyLine === undefined || !settle()) return;
      resolve({ ...started, startSeconds: (performance.now() - startedAt) / 1000, readyLine });
    }
    function fail(reason: string) {
      if (!settle()) return;
      const tail = fs.readFileSync(logFile, 'utf8').slice(-3000);
      child.kill('SIGKILL');
      reject(new Error(`${name} ${reason}; the end of ${logFile}:\n${tail}`));
    }
    child.once('exit', (code, signal) => {
      // Its last lines may have been the ready one.
      readNewLines();
      fail(`exited (${signal ?? code}) before it was ready`);
    });
    child.once('error', (error) => fail(`could not start: ${error.message}`));
  });
}

async function waitForHttp(url: string, timeoutMs: number, service: ServiceProcess): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const startedAt = performance.now();
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) throw new Error(`${service.name} exited while starting`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return (performance.now() - startedAt) / 1000;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
}

/** The message of the last error-level line (pino level 50 or more) in a process's log, or its last line. */
function lastError(logFile: string): string {
  const lines = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').trim().split('\n') : [];
  for (const line of lines.reverse()) {
    const entry = parseJsonLine(line);
    if (entry !== undefined && typeof entry.level === 'number' && entry.level >= 50) return String(entry.msg);
  }
  return lines[0]?.slice(0, 300) ?? 'no output';
}

function temporalCliPath(): string {
  const { ensureTemporalCli } = require(path.join(projectRoot, 'scripts', 'temporal-cli.cjs')) as {
    ensureTemporalCli: () => string;
  };
  return ensureTemporalCli();
}

function parseJsonLine(line: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function startBenchStack(options: BenchStackOptions): Promise<BenchStack> {
  const { log } = options;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bus-booking-bench-'));
  const logDirectory = path.join(directory, 'logs');
  fs.mkdirSync(logDirectory, { recursive: true });
  const [postgresPort, temporalPort, temporalUiPort, httpPort, grpcPort, metricsPort, workerMetricsPort] =
    await Promise.all(Array.from({ length: 7 }, () => freePort()));
  const namespace = 'default';
  const stoppers: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    stoppers.length = 0;
  };

  try {
    log(`starting PostgreSQL and the Temporal dev server in ${directory}`);
    const temporalDatabase = path.join(directory, 'temporal.sqlite');
    const [postgres, temporal]: [RunningPostgres, RunningTemporal] = await Promise.all([
      startEmbeddedPostgres({
        dataDirectory: path.join(directory, 'postgres'),
        port: postgresPort,
        databaseName: 'bookings',
        persistent: false,
        logFile: path.join(logDirectory, 'postgres.log'),
        log,
      }).then((started) => (stoppers.push(() => started.stop()), started)),
      startTemporalDevServer({
        executable: temporalCliPath(),
        databaseFile: temporalDatabase,
        logFile: path.join(logDirectory, 'temporal.log'),
        port: temporalPort,
        uiPort: temporalUiPort,
        namespace,
      }).then((started) => (stoppers.push(() => started.stop()), started)),
    ]);
    const temporalPid = findPidByCommandLine(temporalDatabase);
    const postgresPid = postmasterPid(postgres);

    const secrets = loadOrCreateDevelopmentSecrets(directory);
    const certificates = loadOrCreateDevelopmentCertificates(directory);
    const environment: NodeJS.ProcessEnv = {
      ...process.env,
      ...secrets,
      ...plaintextTemporalEnvironment,
      // Production settings, as a deployment runs them; the limits below are raised so that they are not what is
      // measured: rate limits off, holds that outlast the run, enough open holds per load-test account.
      NODE_ENV: 'production',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: namespace,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(grpcPort),
      GRPC_TLS_CA: certificates.certificateAuthority,
      GRPC_TLS_CERT: certificates.server.certificate,
      GRPC_TLS_KEY: certificates.server.privateKey,
      GRPC_ALLOWED_CLIENTS: certificates.clientIdentity,
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      WORKER_METRICS_HOST: '127.0.0.1',
      WORKER_METRICS_PORT: String(workerMetricsPort),
      NOTIFICATIONS_OUTBOX_DIR: path.join(directory, 'outbox'),
      ...benchLimits,
    };
    const config = loadConfig(environment);
    const cipher = createFieldCipherFromConfig(config);
    const database = createDatabase(postgres.url, { poolSize: 4, applicationName: 'bench' });
    stoppers.push(() => database.destroy());

    log('migrations, demo data with the load-test accounts, and the bench inventory');
    await migrateWithDatabase(database);
    await seedDemoData(database, { cipher, today: new Date(), environment: 'test' });
    const seedStartedAt = performance.now();
    const inventory = await seedInventory(database, cipher, options.trips);
    log(
      `inventory: ${inventory.trips} trips × ${inventory.seatsPerTrip} seats (${inventory.bookedSeatsPerTrip} booked each) in ${((performance.now() - seedStartedAt) / 1000).toFixed(1)} s`,
    );

    log('starting the worker, the API and the no-op baseline worker');
    const noopTaskQueuePrefix = 'bench-noop';
    const distEntry = (entry: string) => path.join(projectRoot, 'dist', 'src', entry);
    const [worker, api, noopWorker] = await Promise.all([
      spawnService(
        'worker',
        [...nodeFlagsOf('worker/main.js'), distEntry('worker/main.js')],
        environment,
        logDirectory,
        (line) => parseJsonLine(line)?.msg === 'booking workers polling',
        180_000,
      ),
      spawnService(
        'api',
        [...nodeFlagsOf('api/main.js'), distEntry('api/main.js')],
        environment,
        logDirectory,
        undefined,
        120_000,
      ).then(async (started) => ({
        ...started,
        startSeconds: await waitForHttp(`http://127.0.0.1:${httpPort}/readyz`, 120_000, started),
      })),
      spawnService(
        'noop-worker',
        ['--import', 'tsx', path.join(projectRoot, 'bench', 'baselines', 'noop-worker.ts')],
        {
          ...process.env,
          ...plaintextTemporalEnvironment,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_NAMESPACE: namespace,
          NOOP_TASK_QUEUE_PREFIX: noopTaskQueuePrefix,
        },
        logDirectory,
        (line) => parseJsonLine(line)?.ready === true,
        180_000,
      ),
    ]);
    for (const service of [worker, api, noopWorker]) stoppers.push(() => stopChild(service.child, 15_000));
    const apiUrl = `http://127.0.0.1:${httpPort}`;
    log(
      `ready: api ${api.startSeconds.toFixed(1)} s, worker ${worker.startSeconds.toFixed(1)} s, no-op worker ${noopWorker.startSeconds.toFixed(1)} s`,
    );

    const stack: BenchStack = {
      directory,
      apiUrl,
      workerMetricsUrl: `http://127.0.0.1:${workerMetricsPort}/metrics`,
      grpcAddress: `127.0.0.1:${grpcPort}`,
      certificates,
      temporalAddress: temporal.address,
      namespace,
      noopTaskQueuePrefix,
      database,
      cipher,
      inventory,
      api,
      worker,
      noopWorker,
      async startBareKoa(bodies) {
        const bodiesFile = path.join(directory, 'bare-koa-bodies.json');
        fs.writeFileSync(bodiesFile, JSON.stringify(bodies));
        const bareKoa = await spawnService(
          'bare-koa',
          ['--import', 'tsx', path.join(projectRoot, 'bench', 'baselines', 'bare-koa.ts')],
          { ...process.env, BARE_KOA_PORT: '0', BARE_KOA_BODIES: bodiesFile },
          logDirectory,
          (line) => parseJsonLine(line)?.ready === true,
          60_000,
        );
        stoppers.push(() => stopChild(bareKoa.child, 5000));
        const ready = parseJsonLine(bareKoa.readyLine)!;
        stack.bareKoa = {
          ...bareKoa,
          url: `http://127.0.0.1:${Number(ready.port)}`,
          loginPassword: String(ready.loginPassword),
        };
      },
      exitedProcesses() {
        const services = [api, worker, noopWorker, ...(stack.bareKoa === undefined ? [] : [stack.bareKoa])];
        return services
          .filter((service) => service.child.exitCode !== null || service.child.signalCode !== null)
          .map((service) => ({
            name: service.name,
            reason: lastError(path.join(logDirectory, `${service.name}.log`)),
          }));
      },
      watchedProcesses() {
        const watched: WatchedProcess[] = [
          { name: 'api', pid: api.pid },
          { name: 'worker', pid: worker.pid },
          ...(temporalPid === undefined ? [] : [{ name: 'temporal', pid: temporalPid }]),
          { name: 'postgres', pid: postgresPid, includeChildren: true },
          { name: 'noop-worker', pid: noopWorker.pid },
          ...(stack.bareKoa === undefined ? [] : [{ name: 'bare-koa', pid: stack.bareKoa.pid }]),
          // The bench process (gRPC and saga clients) and the HTTP load driver it runs for each HTTP load.
          { name: 'driver', pid: process.pid, includeExitedChildren: true },
        ];
        return watched;
      },
      async stop() {
        await stopAll();
        if (!process.env.BENCH_KEEP_DIRECTORY) fs.rmSync(directory, { recursive: true, force: true });
      },
    };
    return stack;
  } catch (error) {
    await stopAll();
    throw Object.assign(error instanceof Error ? error : new Error(String(error)), {
      message: `${error instanceof Error ? error.message : String(error)} (logs in ${logDirectory})`,
    });
  }
}
