// Runs the booking saga in-process for integration tests: real activities, workers on queues of their own, the application.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  type LogLevel,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { Knex } from 'knex';
import type { DestinationStream } from 'pino';
import type { Registry } from 'prom-client';
import {
  createActivities,
  createActivityDependencies,
  type OwnedActivityDependencies,
} from '../../src/activities';
import { createBookingApplication } from '../../src/application/bookings';
import { createWebhookDeliveryStarter } from '../../src/application/webhook-delivery-starter';
import type { BookingApplication } from '../../src/application/interface';
import type { Actor } from '../../src/domain/actor';
import type { Config } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createFieldCipherFromConfig } from '../../src/security/field-cipher-from-config';
import type { FieldCipher } from '../../src/security/field-encryption';
import { createBookingDataConverter } from '../../src/security/temporal-payload-codec';
import {
  bundleBookingWorkflows,
  createBookingWorkers,
  type BookingWorkers,
} from '../../src/worker/booking-workers';
import { taskQueues, type TaskQueueNames } from '../../src/domain/task-queues';
import type { BookingTimings } from '../../src/workflows/shared';
import { openTestDatabase, testConfig } from './database';
import { createCustomer } from './users';
import { createTrip, type TestTrip, type TripOptions } from './trips';

/** Retries a few hundred milliseconds apart, so transient-failure tests take about a second, not minutes. */
export const fastSagaTimings: Partial<BookingTimings> = {
  activityStartToCloseMs: 10_000,
  activityRetryInitialIntervalMs: 200,
  activityRetryMaximumIntervalMs: 2000,
};

/** Queue names no other test file polls: workers of parallel files never pick up each other's tasks. */
export function isolatedTaskQueues(): TaskQueueNames {
  const suffix = randomBytes(4).toString('hex');
  return {
    bookings: `${taskQueues.bookings}-${suffix}`,
    seats: `${taskQueues.seats}-${suffix}`,
    payments: `${taskQueues.payments}-${suffix}`,
    notifications: `${taskQueues.notifications}-${suffix}`,
  };
}

const temporalLogLevel = (process.env.SAGA_TEST_TEMPORAL_LOG_LEVEL as LogLevel | undefined) ?? 'ERROR';

/** The workflow bundle every saga test needs, built quietly (webpack's report is noise in test output). */
export function bundleSagaWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleBookingWorkflows(new DefaultLogger(temporalLogLevel));
}

/**
 * The SDK runtime is process-wide and logs worker state changes at INFO, and business failures of activities
 * at WARN; tests want errors only (SAGA_TEST_TEMPORAL_LOG_LEVEL=INFO to see everything).
 */
export function quietTemporalRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger(temporalLogLevel) });
  } catch {
    // Already installed by an earlier environment of this test file.
  }
}

export interface SagaEnvironmentOptions {
  /** Extra environment variables for loadConfig, e.g. `BOOKING_HOLD_SECONDS`. */
  environment?: Record<string, string>;
  timings?: Partial<BookingTimings>;
  /** Reuse a bundle across environments to skip webpack. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Start with no workers polling (a test that starts them later, or in another process). */
  startWorkers?: boolean;
  /** Where the workers' and activities' logger writes (stdout by default); its level is LOG_LEVEL's. */
  logDestination?: DestinationStream;
  /** Where the activities count business facts, as the worker process's registry does (unexported otherwise). */
  metricsRegistry?: Registry;
}

export interface SagaEnvironment {
  config: Config;
  /** The test's own connection pool, for fixtures and assertions. */
  database: Knex;
  cipher: FieldCipher;
  client: Client;
  /** The client's connection, which readiness checks ask for Temporal's health. */
  connection: Connection;
  application: BookingApplication;
  taskQueueNames: TaskQueueNames;
  workflowBundle: WorkflowBundleWithSourceMap;
  /** Where the local outbox senders write emails and SMS. */
  outboxDirectory: string;
  /** The workers now running, if any. */
  workers(): BookingWorkers | undefined;
  startWorkers(): Promise<BookingWorkers>;
  stopWorkers(): Promise<void>;
  /** The saga's configuration with some variables changed, e.g. for an API composed over this environment. */
  configWith(environment: Record<string, string>): Config;
  /** The workflow timings the applications of this environment start bookings with. */
  timings: Partial<BookingTimings>;
  /** Another application over the same workers, e.g. with a short hold: `{ BOOKING_HOLD_SECONDS: '3' }`. */
  applicationWith(environment: Record<string, string>): BookingApplication;
  stop(): Promise<void>;
}

export async function startSagaEnvironment(options: SagaEnvironmentOptions = {}): Promise<SagaEnvironment> {
  quietTemporalRuntime();
  const outboxDirectory = mkdtempSync(path.join(os.tmpdir(), 'saga-outbox-'));
  const configFor = (environment: Record<string, string>) =>
    testConfig({ NOTIFICATIONS_OUTBOX_DIR: outboxDirectory, ...options.environment, ...environment });
  const config = configFor({});
  const logger = createLogger({ level: config.logLevel, name: 'saga-test' }, options.logDestination);
  const database = openTestDatabase({ poolSize: 10, applicationName: 'saga-tests' });
  const cipher = createFieldCipherFromConfig(config);
  const clientConnection = await Connection.connect({ address: config.temporal.address });
  // The workers (createBookingWorkers) encrypt with the same data converter: no plaintext reaches Temporal.
  const client = new Client({
    connection: clientConnection,
    namespace: config.temporal.namespace,
    dataConverter: createBookingDataConverter(config),
  });
  const workerConnection = await NativeConnection.connect({ address: config.temporal.address });
  const taskQueueNames = isolatedTaskQueues();
  const workflowBundle = options.workflowBundle ?? (await bundleSagaWorkflows());
  const timings = { ...fastSagaTimings, ...options.timings };

  let activityDependencies: OwnedActivityDependencies | undefined;
  let workers: BookingWorkers | undefined;
  let running: Promise<void> | undefined;

  const webhookDeliveries = createWebhookDeliveryStarter(client, {
    taskQueues: taskQueueNames,
    retryScheduleSeconds: config.webhooks.retryScheduleSeconds,
  });
  const applicationWith = (environment: Record<string, string>) =>
    createBookingApplication({
      config: configFor(environment),
      database,
      temporal: client,
      cipher,
      timings,
      taskQueues: taskQueueNames,
      webhookDeliveries,
    });

  const environment: SagaEnvironment = {
    config,
    database,
    cipher,
    client,
    connection: clientConnection,
    application: applicationWith({}),
    taskQueueNames,
    workflowBundle,
    outboxDirectory,
    workers: () => workers,
    configWith: configFor,
    timings,
    async startWorkers() {
      if (workers !== undefined) return workers;
      activityDependencies = createActivityDependencies(config, logger, options.metricsRegistry);
      workers = await createBookingWorkers({
        config,
        connection: workerConnection,
        activities: createActivities({
          ...activityDependencies,
          webhookDeliveries,
        }),
        logger,
        taskQueueNames,
        workflowBundle,
      });
      running = workers.run();
      return workers;
    },
    async stopWorkers() {
      await workers?.shutdown();
      await running?.catch(() => undefined);
      await activityDependencies?.close();
      workers = undefined;
      running = undefined;
      activityDependencies = undefined;
    },
    applicationWith,
    async stop() {
      await environment.stopWorkers();
      await workerConnection.close();
      await clientConnection.close();
      await database.destroy();
      rmSync(outboxDirectory, { recursive: true, force: true });
    },
  };
  if (options.startWorkers !== false) await environment.startWorkers();
  return environment;
}

/** What most saga test files start from: the environment, one trip of their own and one customer. */
export interface SagaTestBed {
  saga: SagaEnvironment;
  trip: TestTrip;
  customer: Actor;
}

/**
 * Starts a saga environment, a trip and a customer in the calling file's beforeAll and stops the environment in
 * its afterAll; the returned object's fields can be read from the tests on, once beforeAll has run.
 */
export function useSagaTestBed(tripOptions: TripOptions, options: SagaEnvironmentOptions = {}): SagaTestBed {
  let saga: SagaEnvironment | undefined;
  let started: SagaTestBed | undefined;
  const startedTestBed = (): SagaTestBed => {
    if (started === undefined) throw new Error('the saga test bed is read before its beforeAll has run');
    return started;
  };

  beforeAll(async () => {
    saga = await startSagaEnvironment(options);
    const trip = await createTrip(saga.database, tripOptions);
    const customer = await createCustomer(saga.database, saga.cipher);
    started = { saga, trip, customer };
  });

  afterAll(async () => {
    await saga?.stop();
  });

  return {
    get saga() {
      return startedTestBed().saga;
    },
    get trip() {
      return startedTestBed().trip;
    },
    get customer() {
      return startedTestBed().customer;
    },
  };
}
