// grpc.health.v1 statuses kept in step with readiness: SERVING only while PostgreSQL and Temporal both answer.
import { HealthImplementation, service as healthService, type ServingStatus } from 'grpc-health-check';
import type { ReadinessCheck } from '../../application/readiness';
import type { Logger } from '../../logger';

/** Fully qualified name of the health service, as reflection lists it. */
export const healthServiceName = healthService.Check.path.split('/')[1];

export interface HealthReporter {
  readonly implementation: HealthImplementation;
  /** Runs one readiness check now and publishes its outcome. */
  refresh(): Promise<void>;
  /** Stops polling and reports NOT_SERVING from now on, so balancers drain this server before it stops. */
  stop(): void;
}

/**
 * Polls readiness every `intervalMs` and reports the result for the whole server (the '' service) and for each
 * named service. Starts NOT_SERVING until the first check has answered.
 */
export function startHealthReporting(options: {
  checkReadiness: ReadinessCheck;
  intervalMs: number;
  serviceNames: readonly string[];
  logger: Logger;
}): HealthReporter {
  const names = ['', ...options.serviceNames];
  const implementation = new HealthImplementation(
    Object.fromEntries(names.map((name) => [name, 'NOT_SERVING'])),
  );
  let current: ServingStatus = 'NOT_SERVING';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const publish = (next: ServingStatus) => {
    for (const name of names) implementation.setStatus(name, next);
    current = next;
  };

  const refresh = async () => {
    const readiness = await options.checkReadiness();
    if (stopped) return;
    const next: ServingStatus = readiness.ready ? 'SERVING' : 'NOT_SERVING';
    if (next !== current)
      options.logger.info({ status: next, checks: readiness.checks }, 'gRPC health changed');
    publish(next);
  };

  const poll = () => {
    timer = undefined;
    refresh()
      .catch((error: unknown) => {
        options.logger.error({ err: error }, 'readiness check failed');
        if (!stopped) publish('NOT_SERVING');
      })
      .finally(() => {
        // Chained timers, not an interval: a slow check never overlaps the next one.
        if (!stopped) timer = setTimeout(poll, options.intervalMs).unref();
      });
  };
  poll();

  return {
    implementation,
    refresh,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      publish('NOT_SERVING');
    },
  };
}
