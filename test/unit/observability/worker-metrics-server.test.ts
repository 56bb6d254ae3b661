// The worker's metrics listener: one /metrics with the SDK's text and ours, /healthz, /readyz, GET only, its port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { createBusinessMetrics } from '../../../src/observability/metrics';
import { createLogger } from '../../../src/logger';
import {
  createWorkerReadinessCheck,
  freeLoopbackAddress,
  startWorkerMetricsServer,
  type RunningWorkerMetricsServer,
  type WorkerReadiness,
} from '../../../src/worker/metrics-server';

const logger = createLogger({ level: 'silent', name: 'worker-metrics-test' });
const sdkText =
  '# HELP temporal_num_pollers Current number of active pollers\n# TYPE temporal_num_pollers gauge\ntemporal_num_pollers{poller_type="workflow_task"} 2\n';

let sdkExporter: http.Server;
let sdkAddress: string;
const running: RunningWorkerMetricsServer[] = [];

beforeAll(async () => {
  sdkExporter = http.createServer((request, response) => {
    response.writeHead(request.url === '/metrics' ? 200 : 404, { 'content-type': 'text/plain' });
    response.end(request.url === '/metrics' ? sdkText : '');
  });
  await new Promise<void>((resolve) => sdkExporter.listen(0, '127.0.0.1', resolve));
  sdkAddress = `127.0.0.1:${(sdkExporter.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all(running.map((server) => server.close()));
  await new Promise<void>((resolve) => sdkExporter.close(() => resolve()));
});

const ready: WorkerReadiness = { ready: true, checks: { workers: 'running', temporal: 'ok' } };

async function serve(
  options: { sdkMetricsAddress?: string; port?: number; readiness?: () => Promise<WorkerReadiness> } = {},
): Promise<{ url: string; registry: Registry }> {
  const registry = new Registry();
  createBusinessMetrics(registry).payment('approved');
  const server = await startWorkerMetricsServer({
    host: '127.0.0.1',
    port: options.port ?? 0,
    registry,
    sdkMetricsAddress: options.sdkMetricsAddress ?? sdkAddress,
    checkReadiness: options.readiness ?? (() => Promise.resolve(ready)),
    logger,
  });
  running.push(server);
  return { url: `http://127.0.0.1:${server.port}`, registry };
}

describe('the worker metrics server', () => {
  it("serves the Temporal SDK's metrics and ours on one /metrics", async () => {
    const { url } = await serve();
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const body = await response.text();
    expect(body).toContain('bus_booking_payments_total{outcome="approved"} 1');
    expect(body).toContain('temporal_num_pollers{poller_type="workflow_task"} 2');
  });

  it("still serves ours when the SDK's exporter does not answer", async () => {
    const { url } = await serve({ sdkMetricsAddress: await freeLoopbackAddress() });
    const body = await (await fetch(`${url}/metrics`)).text();
    expect(body).toContain('bus_booking_payments_total{outcome="approved"} 1');
    expect(body).not.toContain('temporal_num_pollers');
  });

  it('answers /healthz while alive and /readyz by the readiness check', async () => {
    let readiness: WorkerReadiness = { ready: false, checks: { workers: 'not running', temporal: 'ok' } };
    const { url } = await serve({ readiness: () => Promise.resolve(readiness) });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: 'unavailable', checks: readiness.checks });
    readiness = ready;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it('answers GET only, and nothing but its three paths', async () => {
    const { url } = await serve();
    const posted = await fetch(`${url}/metrics`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET');
    expect((await fetch(`${url}/`)).status).toBe(404);
  });

  it('refuses a busy port naming WORKER_METRICS_PORT', async () => {
    const { url } = await serve();
    const busyPort = Number(new URL(url).port);
    await expect(serve({ port: busyPort })).rejects.toThrow(/WORKER_METRICS_PORT/);
  });
});

describe('createWorkerReadinessCheck', () => {
  const healthy = { healthService: { check: () => Promise.resolve({}) } };

  it('is ready when every worker runs and Temporal answers', async () => {
    const check = createWorkerReadinessCheck({
      workers: () => [{ getState: () => 'RUNNING' }, { getState: () => 'RUNNING' }],
      temporal: () => healthy,
    });
    expect(await check()).toEqual(ready);
  });

  it('is not ready while connecting, with a stopped worker, or with Temporal unreachable', async () => {
    const connecting = createWorkerReadinessCheck({ workers: () => [], temporal: () => undefined });
    expect(await connecting()).toEqual({
      ready: false,
      checks: { workers: 'not running', temporal: 'unavailable' },
    });
    const oneStopped = createWorkerReadinessCheck({
      workers: () => [{ getState: () => 'RUNNING' }, { getState: () => 'FAILED' }],
      temporal: () => healthy,
    });
    expect((await oneStopped()).ready).toBe(false);
    const unreachable = createWorkerReadinessCheck({
      workers: () => [{ getState: () => 'RUNNING' }],
      temporal: () => ({ healthService: { check: () => Promise.reject(new Error('UNAVAILABLE')) } }),
    });
    expect(await unreachable()).toEqual({
      ready: false,
      checks: { workers: 'running', temporal: 'unavailable' },
    });
  });
});
