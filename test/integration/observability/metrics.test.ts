// A create → pay → cancel flow on the real stack, then both /metrics endpoints: the API's request histograms, the
// worker's business counters and the Temporal SDK's own metrics; the worker's /healthz and /readyz.
import { randomUUID } from 'node:crypto';
import { startApi, type RunningApi } from '../../../src/api/composition';
import { createBookingClient } from '../../../src/api/grpc/client';
import { createLogger } from '../../../src/logger';
import { createProcessMetricsRegistry } from '../../../src/observability/metrics';
import {
  createWorkerReadinessCheck,
  freeLoopbackAddress,
  sdkMetricsExporter,
  startWorkerMetricsServer,
  type RunningWorkerMetricsServer,
} from '../../../src/worker/metrics-server';
import { installTemporalRuntime } from '../../../src/worker/temporal-logger';
import { metricValue, scrapeMetrics } from '../../support/metrics';
import { eventually } from '../../support/outcomes';
import { fetchJson } from '../../support/responses';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, restBookingBody, standardPriceMinor, type TestTrip } from '../../support/trips';
import { insertLoginUser, type LoginUser } from '../../support/users';

jest.setTimeout(180_000);

const logger = createLogger({ level: 'silent', name: 'metrics-test' });

let saga: SagaEnvironment | undefined;
let api: RunningApi | undefined;
let workerMetrics: RunningWorkerMetricsServer | undefined;
let trip: TestTrip;
let customer: LoginUser;
let restBaseUrl: string;
let apiMetricsUrl: string;
let workerMetricsUrl: string;

beforeAll(async () => {
  // As the worker process does, before any connection: the SDK's runtime exports its metrics on loopback.
  const sdkMetricsAddress = await freeLoopbackAddress();
  installTemporalRuntime(logger, sdkMetricsExporter(sdkMetricsAddress));
  const workerRegistry = createProcessMetricsRegistry();
  saga = await startSagaEnvironment({ metricsRegistry: workerRegistry });
  const environment = saga;
  workerMetrics = await startWorkerMetricsServer({
    host: '127.0.0.1',
    port: 0,
    registry: workerRegistry,
    sdkMetricsAddress,
    checkReadiness: createWorkerReadinessCheck({
      workers: () => environment.workers()?.workers ?? [],
      temporal: () => environment.connection,
    }),
    logger,
  });
  workerMetricsUrl = `http://127.0.0.1:${workerMetrics.port}`;

  api = await startApi(
    saga.configWith({
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      // Room for a slow first workflow task on a busy machine: the create answers within 80% of this.
      HTTP_REQUEST_TIMEOUT_MS: '30000',
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      GRPC_INSECURE: 'true',
      GRPC_SHUTDOWN_GRACE_MS: '1000',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: '0',
      IDP_ISSUER: `https://metrics-${randomUUID()}.tests.example`,
    }),
    logger,
    { taskQueues: saga.taskQueueNames, timings: saga.timings },
  );
  restBaseUrl = `http://127.0.0.1:${api.httpPort}`;
  apiMetricsUrl = `http://127.0.0.1:${api.metricsPort}/metrics`;
  trip = await createTrip(saga.database);
  customer = await insertLoginUser(saga.database, saga.cipher, { roles: ['customer'] });
});

afterAll(async () => {
  await api?.stop();
  await workerMetrics?.close();
  await saga?.stop();
});

interface BookingJson {
  id: string;
  status: string;
  amount_refunded: { amount_minor: number; currency: string };
}

function call<Body>(method: string, pathname: string, options: { token?: string; body?: unknown } = {}) {
  return fetchJson<Body>(restBaseUrl, method, pathname, {
    ...options,
    headers: { 'idempotency-key': randomUUID() },
  });
}

it('counts a create → pay → cancel flow on the API and worker metrics endpoints', async () => {
  const login = await call<{ access_token: string }>('POST', '/api/auth/login', {
    body: { email: customer.email, password: customer.password },
  });
  expect(login.status).toBe(200);
  const token = login.body.access_token;

  const created = await call<BookingJson>('POST', '/v1/bookings', {
    token,
    body: restBookingBody(trip, trip.seatNumbers[0]),
  });
  // 202 only if the worker took longer than the create's answer deadline; the booking then follows by itself.
  expect([201, 202]).toContain(created.status);
  const bookingId = created.body.id;
  await eventually(
    () => call<BookingJson>('GET', `/v1/bookings/${bookingId}`, { token }),
    (answer) => answer.body.status === 'PENDING_PAYMENT',
    { timeoutMs: 60_000 },
  );
  const paid = await call<BookingJson>('POST', `/v1/bookings/${bookingId}/payment`, {
    token,
    body: { payment_token: 'tok_visa' },
  });
  expect([paid.status, paid.body.status]).toEqual([200, 'CONFIRMED']);
  const cancelled = await call<BookingJson>('PUT', `/v1/bookings/${bookingId}/cancel`, {
    token,
    body: { reason: 'plans changed' },
  });
  expect([cancelled.status, cancelled.body.status]).toEqual([200, 'CANCELLED']);
  const refunded = cancelled.body.amount_refunded;
  expect(refunded).toEqual({ amount_minor: standardPriceMinor, currency: 'EUR' });

  // The same booking read over gRPC, and one that does not exist: the gRPC histogram's codes.
  const grpc = createBookingClient({ address: `127.0.0.1:${api?.grpcPort}`, insecure: true, token });
  try {
    await grpc.getBooking({ bookingId });
    await expect(grpc.getBooking({ bookingId: randomUUID() })).rejects.toMatchObject({ code: 5 });
  } finally {
    grpc.close();
  }

  const apiMetrics = await scrapeMetrics(apiMetricsUrl);
  // The API listens for availability changes, so it may keep availability answers.
  expect(metricValue(apiMetrics.samples, 'bus_booking_availability_changes_heard', {})).toBe(1);
  const requests = 'bus_booking_http_request_duration_seconds_count';
  const createsAnswered =
    metricValue(apiMetrics.samples, requests, { method: 'POST', route: '/v1/bookings', status: '201' }) +
    metricValue(apiMetrics.samples, requests, { method: 'POST', route: '/v1/bookings', status: '202' });
  expect(createsAnswered).toBe(1);
  expect(
    metricValue(apiMetrics.samples, requests, {
      method: 'GET',
      route: '/v1/bookings/:booking_id',
      status: '200',
    }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    metricValue(apiMetrics.samples, requests, {
      method: 'POST',
      route: '/v1/bookings/:booking_id/payment',
      status: '200',
    }),
  ).toBe(1);
  expect(
    metricValue(apiMetrics.samples, requests, {
      method: 'PUT',
      route: '/v1/bookings/:booking_id/cancel',
      status: '200',
    }),
  ).toBe(1);
  expect(
    metricValue(apiMetrics.samples, requests, { method: 'POST', route: '/api/auth/login', status: '200' }),
  ).toBe(1);
  const grpcCalls = 'bus_booking_grpc_request_duration_seconds_count';
  expect(metricValue(apiMetrics.samples, grpcCalls, { method: 'GetBooking', code: 'OK' })).toBe(1);
  expect(metricValue(apiMetrics.samples, grpcCalls, { method: 'GetBooking', code: 'NOT_FOUND' })).toBe(1);
  expect(metricValue(apiMetrics.samples, 'bus_booking_http_requests_in_flight')).toBe(0);
  expect(metricValue(apiMetrics.samples, 'bus_booking_grpc_requests_in_flight')).toBe(0);
  expect(apiMetrics.samples.some((sample) => sample.name === 'process_cpu_seconds_total')).toBe(true);
  // Route templates only: no booking id becomes a label value.
  expect(apiMetrics.text).not.toContain(bookingId);

  const transitions = 'bus_booking_booking_transitions_total';
  const workerSamples = (
    await eventually(
      () => scrapeMetrics(`${workerMetricsUrl}/metrics`),
      ({ samples }) => metricValue(samples, transitions, { transition: 'cancelled' }) >= 1,
      { timeoutMs: 30_000 },
    )
  ).samples;
  expect({
    created: metricValue(workerSamples, transitions, { transition: 'created' }),
    confirmed: metricValue(workerSamples, transitions, { transition: 'confirmed' }),
    cancelled: metricValue(workerSamples, transitions, { transition: 'cancelled' }),
    notBooked: metricValue(workerSamples, transitions, { transition: 'not_booked' }),
    paymentsApproved: metricValue(workerSamples, 'bus_booking_payments_total', { outcome: 'approved' }),
    refundsSucceeded: metricValue(workerSamples, 'bus_booking_refunds_total', { outcome: 'succeeded' }),
    refundsFailed: metricValue(workerSamples, 'bus_booking_refunds_total', { outcome: 'failed' }),
    refundedAmount: metricValue(workerSamples, 'bus_booking_refunded_amount_minor_total', {
      currency: refunded.currency,
    }),
    seatsHeld: metricValue(workerSamples, 'bus_booking_seats_held_total'),
    seatsReleased: metricValue(workerSamples, 'bus_booking_seats_released_total'),
    seatReleases: metricValue(workerSamples, 'bus_booking_compensations_total', {
      step: 'release_seats',
      outcome: 'succeeded',
    }),
    refundCompensations: metricValue(workerSamples, 'bus_booking_compensations_total', {
      step: 'refund_payment',
      outcome: 'succeeded',
    }),
  }).toEqual({
    created: 1,
    confirmed: 1,
    cancelled: 1,
    notBooked: 0,
    paymentsApproved: 1,
    refundsSucceeded: 1,
    refundsFailed: 0,
    refundedAmount: refunded.amount_minor,
    seatsHeld: 1,
    seatsReleased: 1,
    seatReleases: 1,
    refundCompensations: 1,
  });
  // Confirmation and cancellation emails (no phone was given, so no SMS).
  expect(
    metricValue(workerSamples, 'bus_booking_notifications_total', { channel: 'email', outcome: 'sent' }),
  ).toBe(2);
  expect(workerSamples.some((sample) => sample.name === 'bus_booking_pending_payment_overdue_bookings')).toBe(
    true,
  );
  // The Temporal SDK's own metrics, on the same endpoint, labelled with this test's task queues.
  const sdkMetricNames = new Set(
    workerSamples.filter((sample) => sample.name.startsWith('temporal_')).map((sample) => sample.name),
  );
  expect([...sdkMetricNames]).toEqual(
    expect.arrayContaining([
      'temporal_num_pollers',
      'temporal_worker_task_slots_available',
      'temporal_activity_schedule_to_start_latency_bucket',
      'temporal_workflow_task_schedule_to_start_latency_bucket',
    ]),
  );
  expect(
    workerSamples.some(
      (sample) =>
        sample.name === 'temporal_num_pollers' && sample.labels.task_queue === saga?.taskQueueNames.payments,
    ),
  ).toBe(true);
  expect(workerSamples.some((sample) => sample.name === 'process_resident_memory_bytes')).toBe(true);
});

it("answers the worker's /healthz and /readyz, and only GET on the API's metrics listener", async () => {
  expect((await fetch(`${workerMetricsUrl}/healthz`)).status).toBe(200);
  const readiness = await fetch(`${workerMetricsUrl}/readyz`);
  expect(readiness.status).toBe(200);
  expect(await readiness.json()).toEqual({ status: 'ok', checks: { workers: 'running', temporal: 'ok' } });
  expect((await fetch(apiMetricsUrl, { method: 'POST' })).status).toBe(405);
  // The public REST port does not serve the metrics.
  expect((await fetch(`${restBaseUrl}/metrics`)).status).toBe(404);
});
