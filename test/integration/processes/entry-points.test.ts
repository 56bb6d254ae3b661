// The compiled API and worker entry points, started as `npm run api` and `npm run worker` start them, book a trip.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { paymentLedger } from '../../support/booking-records';
import { openTestDatabase, testCipher, testSecrets } from '../../support/database';
import {
  compileProject,
  startEntryPoint,
  type CompiledProject,
  type EntryPointProcess,
} from '../../support/entry-points';
import { eventually } from '../../support/outcomes';
import { fetchJson } from '../../support/responses';
import { holdExclusive } from '../../support/exclusive';
import { findFreePort } from '../../support/ports';
import { createTrip, restBookingBody, standardPriceMinor, type TestTrip } from '../../support/trips';
import { insertLoginUser, type LoginUser } from '../../support/users';

// The build (tsc over src/) and webpack's workflow bundle in the worker take most of this on two busy cores.
jest.setTimeout(420_000);

const buildTimeoutMs = 300_000;
const startTimeoutMs = 120_000;
const stopTimeoutMs = 30_000;

let project: CompiledProject | undefined;
let database: Knex;
let customer: LoginUser;
let trip: TestTrip;
let outboxDirectory: string;
let restBaseUrl: string;
let apiMetricsUrl: string;
let workerMetricsUrl: string;
let api: EntryPointProcess | undefined;
let worker: EntryPointProcess | undefined;
let releaseTaskQueues: (() => void) | undefined;

beforeAll(async () => {
  // Its worker process serves the standard task queues, as does one other suite's: never both at once.
  releaseTaskQueues = await holdExclusive('standard-task-queues');
  database = openTestDatabase({ poolSize: 2, applicationName: 'entry-point-tests' });
  [project, customer, trip] = await Promise.all([
    compileProject({ timeoutMs: buildTimeoutMs }),
    insertLoginUser(database, testCipher(), { roles: ['customer'] }),
    createTrip(database),
  ]);
  outboxDirectory = mkdtempSync(path.join(os.tmpdir(), 'entry-points-outbox-'));
  const [httpPort, grpcPort] = [await findFreePort(), await findFreePort()];
  const [metricsPort, workerMetricsPort] = [await findFreePort(), await findFreePort()];
  restBaseUrl = `http://127.0.0.1:${httpPort}`;
  apiMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  workerMetricsUrl = `http://127.0.0.1:${workerMetricsPort}`;
  // Only variables of the configuration table (docs/configuration.md). The workers serve the standard task queues: no other
  // test of a run polls them (each saga test has queues of its own), so this booking runs on these processes.
  const environment = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    DATABASE_POOL_SIZE: '4',
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? '',
    ...testSecrets,
    // Other suites' failed logins from 127.0.0.1 count under the same keyring; this one must not be throttled.
    IDP_LOGIN_MAX_FAILURES_PER_IP: '100000',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(httpPort),
    // Room for a slow first workflow task on a busy machine: the create answers within 80% of this.
    HTTP_REQUEST_TIMEOUT_MS: '30000',
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    GRPC_INSECURE: 'true',
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: String(metricsPort),
    WORKER_METRICS_HOST: '127.0.0.1',
    WORKER_METRICS_PORT: String(workerMetricsPort),
    NOTIFICATIONS_OUTBOX_DIR: outboxDirectory,
  };
  worker = startEntryPoint(project.entryPoint('worker'), environment);
  api = startEntryPoint(project.entryPoint('api'), environment);
  await Promise.all([
    worker.waitForLog('booking workers polling', startTimeoutMs),
    api.waitForLog('gRPC API listening', startTimeoutMs),
  ]);
});

it('starts the compiled worker from the workflow bundle the build wrote, without bundling at start', async () => {
  if (worker === undefined || project === undefined) throw new Error('the worker was not started');
  const used = await worker.waitForLog('workflow code: the pre-built bundle', startTimeoutMs);
  expect(used.workflowBundle).toBe(path.join(project.outputDirectory, 'workflow-bundle.js'));
  expect(worker.output()).not.toContain('workflow code: bundled from source at start');
});

afterAll(async () => {
  await Promise.allSettled([api?.kill(), worker?.kill()]);
  project?.remove();
  if (outboxDirectory !== undefined) rmSync(outboxDirectory, { recursive: true, force: true });
  await database?.destroy();
  releaseTaskQueues?.();
});

interface BookingJson {
  id: string;
  status: string;
  payment: { status: string };
}

function call<Body>(
  method: string,
  pathname: string,
  options: { token?: string; body?: unknown; idempotencyKey?: string } = {},
) {
  const { idempotencyKey, ...request } = options;
  return fetchJson<Body>(restBaseUrl, method, pathname, {
    ...request,
    ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }),
  });
}

it('books a trip through the compiled API and worker processes, which then stop cleanly on SIGTERM', async () => {
  const login = await call<{ access_token: string }>('POST', '/api/auth/login', {
    body: { email: customer.email, password: customer.password },
  });
  expect(login.status).toBe(200);
  const token = login.body.access_token;

  const created = await call<BookingJson>('POST', '/v1/bookings', {
    token,
    idempotencyKey: randomUUID(),
    body: restBookingBody(trip, trip.seatNumbers[0]),
  });
  // 202 only if the worker took longer than the create's answer deadline; the booking then follows by itself.
  expect([201, 202]).toContain(created.status);
  const bookingId = created.body.id;
  const read = () => call<BookingJson>('GET', `/v1/bookings/${bookingId}`, { token });
  await eventually(read, (answer) => answer.body.status === 'PENDING_PAYMENT', { timeoutMs: 60_000 });

  const paid = await call<BookingJson>('POST', `/v1/bookings/${bookingId}/payment`, {
    token,
    idempotencyKey: randomUUID(),
    body: { payment_token: 'tok_visa' },
  });
  expect([paid.status, paid.body.status]).toEqual([200, 'CONFIRMED']);

  const confirmed = await read();
  expect(confirmed).toMatchObject({
    status: 200,
    body: { id: bookingId, status: 'CONFIRMED', payment: { status: 'CAPTURED' } },
  });
  expect(await paymentLedger(database, bookingId)).toMatchObject({
    charges: [standardPriceMinor],
    refunds: [],
  });
  // The worker process's notification activity wrote the confirmation to its outbox.
  const emailDirectory = path.join(outboxDirectory, 'email');
  const emailCount = () =>
    Promise.resolve(existsSync(emailDirectory) ? readdirSync(emailDirectory).length : 0);
  await eventually(emailCount, (emails) => emails >= 1, { timeoutMs: 30_000 });

  // Each process's metrics listener, as its main.ts wires it: the API's requests, the worker's facts and the SDK's.
  const apiMetrics = await (await fetch(apiMetricsUrl)).text();
  expect(apiMetrics).toMatch(
    /^bus_booking_http_request_duration_seconds_count\{method="POST",route="\/v1\/bookings\/:booking_id\/payment",status="200"\} 1$/m,
  );
  const workerMetrics = await eventually(
    async () => (await fetch(`${workerMetricsUrl}/metrics`)).text(),
    (text) => /^bus_booking_booking_transitions_total\{transition="confirmed",reason=""\} 1$/m.test(text),
    { timeoutMs: 30_000 },
  );
  expect(workerMetrics).toMatch(/^temporal_num_pollers\{/m);
  expect((await fetch(`${workerMetricsUrl}/readyz`)).status).toBe(200);

  if (api === undefined || worker === undefined) throw new Error('the processes were not started');
  const [apiExit, workerExit] = await Promise.all([api.stop(stopTimeoutMs), worker.stop(stopTimeoutMs)]);
  expect({ api: apiExit, worker: workerExit }).toEqual({
    api: { code: 0, signal: null },
    worker: { code: 0, signal: null },
  });
});
