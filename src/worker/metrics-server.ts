// The worker process's metrics listener: one /metrics with the Temporal SDK's metrics and ours, /healthz, /readyz.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { MetricsExporterConfig } from '@temporalio/worker';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger';
import { metricsContentType } from '../observability/metrics';
import { createPlainHttpServer, type PlainAnswer } from '../observability/metrics-http';
import { listen } from '../runtime/process';

/**
 * The SDK's Prometheus exporter, on a loopback address only this process reads: durations in seconds like
 * every other histogram here, names as the SDK makes them (`temporal_` prefix, no unit suffix).
 */
export function sdkMetricsExporter(bindAddress: string): MetricsExporterConfig {
  return { prometheus: { bindAddress, useSecondsForDurations: true } };
}

/**
 * A loopback address for the SDK's exporter, which needs a port number up front (it cannot report the one a
 * port 0 gets): one the system just handed out and took back.
 */
export async function freeLoopbackAddress(): Promise<string> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

export interface WorkerReadiness {
  ready: boolean;
  checks: { workers: 'running' | 'not running'; temporal: 'ok' | 'unavailable' };
}

const temporalCheckTimeoutMs = 2000;

/** Ready when every worker polls and the Temporal frontend answers its health check. */
export function createWorkerReadinessCheck(dependencies: {
  /** The workers of this process; none yet while it still connects. */
  workers: () => readonly { getState(): string }[];
  /** The worker's connection to Temporal; undefined while it still connects. */
  temporal: () => { healthService: { check(request: object): Promise<unknown> } } | undefined;
}): () => Promise<WorkerReadiness> {
  return async () => {
    const workers = dependencies.workers();
    const running = workers.length > 0 && workers.every((worker) => worker.getState() === 'RUNNING');
    const connection = dependencies.temporal();
    let timer: NodeJS.Timeout | undefined;
    const temporal = await Promise.race([
      connection === undefined
        ? Promise.resolve('unavailable' as const)
        : connection.healthService.check({}).then(() => 'ok' as const),
      new Promise<'unavailable'>((resolve) => {
        timer = setTimeout(() => resolve('unavailable'), temporalCheckTimeoutMs);
      }),
    ])
      .catch(() => 'unavailable' as const)
      .finally(() => clearTimeout(timer));
    return {
      ready: running && temporal === 'ok',
      checks: { workers: running ? 'running' : 'not running', temporal },
    };
  };
}

export interface WorkerMetricsServerOptions {
  host: string;
  /** 0 picks a free port; the running server says which. */
  port: number;
  /** Our metrics: business counters, process metrics. */
  registry: Registry;
  /** Where the SDK's exporter answers (sdkMetricsExporter's bind address), appended to ours. */
  sdkMetricsAddress: string;
  checkReadiness: () => Promise<WorkerReadiness>;
  logger: Logger;
}

export interface RunningWorkerMetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

const json = (status: number, body: unknown): PlainAnswer => ({
  status,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

/** Listens on WORKER_METRICS_HOST:WORKER_METRICS_PORT; a busy port fails naming WORKER_METRICS_PORT. */
export async function startWorkerMetricsServer(
  options: WorkerMetricsServerOptions,
): Promise<RunningWorkerMetricsServer> {
  const { registry, logger } = options;
  const sdkMetricsUrl = `http://${options.sdkMetricsAddress}/metrics`;

  /** The SDK's text; without it our own metrics are still served, and the log says why theirs are missing. */
  async function sdkMetrics(): Promise<string> {
    try {
      const response = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2000) });
      if (!response.ok) throw new Error(`the SDK's exporter answered ${response.status}`);
      return await response.text();
    } catch (error) {
      logger.warn({ err: error, sdkMetricsUrl }, "the Temporal SDK's metrics could not be read");
      return '';
    }
  }

  const server = createPlainHttpServer(
    {
      '/metrics': async () => {
        const [ours, theirs] = await Promise.all([registry.metrics(), sdkMetrics()]);
        // Both are Prometheus text; the names never meet (temporal_ against bus_booking_, process_, nodejs_).
        const body = theirs === '' ? ours : `${ours.trimEnd()}\n${theirs}`;
        return { status: 200, contentType: metricsContentType, body };
      },
      '/healthz': () => Promise.resolve(json(200, { status: 'ok' })),
      '/readyz': async () => {
        const readiness = await options.checkReadiness();
        return json(readiness.ready ? 200 : 503, {
          status: readiness.ready ? 'ok' : 'unavailable',
          checks: readiness.checks,
        });
      },
    },
    (error) => logger.warn({ err: error }, 'answering a metrics or probe request failed'),
  );
  await listen(server, { host: options.host, port: options.port, variable: 'WORKER_METRICS_PORT' });
  const { port } = server.address() as AddressInfo;
  logger.info({ host: options.host, port }, 'worker metrics listening on /metrics, /healthz, /readyz');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
