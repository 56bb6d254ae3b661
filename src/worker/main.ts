// Worker process entry point (`npm run worker`): serves the configured task queues until SIGINT or SIGTERM.
// First: tracing must start before the imports below load pg.
import '../observability/tracing-start-worker';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createWebhookDeliveryStarter } from '../application/webhook-delivery-starter';
import { createActivities, createActivityDependencies } from '../activities';
import { loadConfig, type Config } from '../config';
import { createLogger, type Logger } from '../logger';
import { currentTracing, logTracingDiagnostics, withClientSpans } from '../observability/tracing';
import { exitOnceLogged, exitOnStartupFailure, onShutdownSignal } from '../runtime/process';
import { createProcessMetricsRegistry } from '../observability/metrics';
import { retrying } from '../retry';
import { createBookingWorkers, type BookingWorkers } from './booking-workers';
import {
  createWorkerReadinessCheck,
  freeLoopbackAddress,
  sdkMetricsExporter,
  startWorkerMetricsServer,
} from './metrics-server';
import { ensurePaymentReconciliationSchedule } from './payment-reconciliation-schedule';
import { installTemporalRuntime } from './temporal-logger';
import { taskQueues } from '../domain/task-queues';
import { describeTemporalConnection, temporalConnectionOptions } from '../security/temporal-connection';
import { createBookingDataConverter } from '../security/temporal-payload-codec';

const connectAttempts = 30;

/** The Temporal frontend may start after the worker (compose, the embedded stack): retry with backoff. */
function connectWithRetry(config: Config, logger: Logger): Promise<NativeConnection> {
  return retrying(() => NativeConnection.connect(temporalConnectionOptions(config.temporal)), {
    attempts: connectAttempts,
    retryOn: () => true,
    firstDelayMs: 250,
    maxDelayMs: 5000,
    onRetry: ({ error, attempt, delayMs }) =>
      logger.warn(
        { attempt, delayMs, ...describeTemporalConnection(config.temporal), err: error },
        'Temporal not reachable yet, retrying',
      ),
    exhausted: (error, attempts) =>
      new Error(
        `cannot reach Temporal at ${config.temporal.address} (TEMPORAL_ADDRESS) after ${attempts} attempts`,
        { cause: error },
      ),
  });
}

/** Connects and registers the workers; returns their run, which settles only when they stop. */
async function start(logger: Logger, config: Config): Promise<{ running: Promise<void> }> {
  const sdkMetricsAddress = await freeLoopbackAddress();
  installTemporalRuntime(logger, sdkMetricsExporter(sdkMetricsAddress));
  // Listening before Temporal is reached: /healthz answers, /readyz says what is missing while it connects.
  const observed: { connection?: NativeConnection; workers?: BookingWorkers } = {};
  const metricsRegistry = createProcessMetricsRegistry();
  const metricsServer = await startWorkerMetricsServer({
    ...config.metrics.worker,
    registry: metricsRegistry,
    sdkMetricsAddress,
    checkReadiness: createWorkerReadinessCheck({
      workers: () => observed.workers?.workers ?? [],
      temporal: () => observed.connection,
    }),
    logger,
  });
  logTracingDiagnostics(logger);
  // Installed first, so a signal while Temporal is still unreachable stops the process too.
  let stopEverything = async (): Promise<void> => {};
  onShutdownSignal(logger, () => stopEverything());
  const connection = await connectWithRetry(config, logger);
  observed.connection = connection;
  const dependencies = createActivityDependencies(config, logger, metricsRegistry);
  // RecordBooking wakes the partner webhook deliveries of the events it records, as the API's writes do.
  const temporal = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: createBookingDataConverter(config),
  });
  const workers = await createBookingWorkers({
    config,
    connection,
    activities: createActivities({
      ...dependencies,
      webhookDeliveries: createWebhookDeliveryStarter(temporal, {
        retryScheduleSeconds: config.webhooks.retryScheduleSeconds,
      }),
      // Neither the gateway simulator nor SMTP makes an HTTP call a span would cover.
      paymentGateway: withClientSpans(dependencies.paymentGateway, 'PaymentGateway', ['charge', 'refund']),
      emailSender: withClientSpans(dependencies.emailSender, 'EmailSender', ['send']),
      smsSender: withClientSpans(dependencies.smsSender, 'SmsSender', ['send']),
    }),
    logger,
    requirePrebuiltWorkflowBundle: config.environment === 'production',
  });
  observed.workers = workers;
  // The workers that run the reconciliation's workflow keep its schedule as configured.
  if (config.worker.taskQueues.includes(taskQueues.bookings)) {
    await ensurePaymentReconciliationSchedule({ connection, config }).then(
      ({ scheduleId, created }) =>
        logger.info(
          { scheduleId, everyMinutes: config.paymentReconciliation.intervalMinutes, created },
          'payment reconciliation scheduled',
        ),
      // The bookings do not depend on it: the worker serves them, and the next start tries again.
      (error: unknown) =>
        logger.error({ err: error }, 'the payment reconciliation schedule could not be kept'),
    );
  }
  stopEverything = async () => {
    await workers.shutdown();
    await metricsServer.close();
    await dependencies.close();
    await connection.close();
    await currentTracing().shutdown();
  };
  // Wrapped: an async function returning the promise itself would wait for the workers to stop.
  return { running: workers.run() };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, name: 'worker', format: config.logFormat });
  const { running } = await start(logger, config);
  await running.catch((error: unknown) => {
    logger.fatal({ err: error }, 'a booking worker stopped unexpectedly');
    exitOnceLogged(1);
  });
}

main().catch(exitOnStartupFailure(createLogger({ level: 'info', name: 'worker' })));
