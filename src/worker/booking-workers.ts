// One Temporal Worker per configured task queue: workflows on `bookings`, each activity family on its own queue.
import {
  bundleWorkflowCode,
  Worker,
  type Logger as TemporalLogger,
  type NativeConnection,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { activitiesForTaskQueue } from '../activities';
import type { BookingActivities } from '../activities/interface';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { createBookingDataConverter } from '../security/temporal-payload-codec';
import { temporalActivityInterceptors, workflowSpanSinks } from '../observability/tracing-temporal';
import { taskQueues as standardTaskQueues, type TaskQueueNames } from '../domain/task-queues';

/** Resolves to src/workflows/index.ts under tsx and jest, and to dist/src/workflows/index.js after a build. */
export const bookingWorkflowsPath = require.resolve('../workflows');

/** Tracing and request-id interceptors, bundled with the workflow whether or not the worker exports spans. */
export const bookingWorkflowInterceptorsPath = require.resolve('../workflows/interceptors');

/**
 * Bundles the workflow code once; tests that start and stop workers repeatedly pass the bundle in and skip
 * the few seconds webpack needs.
 */
export function bundleBookingWorkflows(logger?: TemporalLogger): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: bookingWorkflowsPath,
    workflowInterceptorModules: [bookingWorkflowInterceptorsPath],
    ...(logger === undefined ? {} : { logger }),
  });
}

export interface BookingWorkersOptions {
  config: Pick<Config, 'temporal' | 'worker' | 'encryption'>;
  connection: NativeConnection;
  activities: BookingActivities;
  logger: Logger;
  /** Standard queue names to serve; config.worker.taskQueues by default (one process may serve only payments). */
  taskQueues?: readonly string[];
  /** The actual queue names, when a deployment (or a test) isolates itself from others in the namespace. */
  taskQueueNames?: TaskQueueNames;
  workflowBundle?: WorkflowBundleWithSourceMap;
}

export interface BookingWorkers {
  readonly workers: readonly Worker[];
  /** Polls every queue until shutdown; if one worker fails, the others are stopped and the error is thrown. */
  run(): Promise<void>;
  /** Stops polling, lets tasks in flight finish, and resolves once every worker has stopped. */
  shutdown(): Promise<void>;
}

export async function createBookingWorkers(options: BookingWorkersOptions): Promise<BookingWorkers> {
  const { config, connection, activities, logger } = options;
  const queues = options.taskQueues ?? config.worker.taskQueues;
  const names = options.taskQueueNames ?? standardTaskQueues;
  const logicalNames = Object.keys(standardTaskQueues) as (keyof typeof standardTaskQueues)[];
  const dataConverter = createBookingDataConverter(config);
  const workers = await Promise.all(
    queues.map((queue) => {
      const logicalName = logicalNames.find((name) => standardTaskQueues[name] === queue);
      if (logicalName === undefined) throw new RangeError(`unknown task queue ${queue}`);
      return Worker.create({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: names[logicalName],
        dataConverter,
        activities: activitiesForTaskQueue(activities, queue),
        maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
        maxConcurrentWorkflowTaskExecutions: config.worker.maxConcurrentWorkflowTasks,
        interceptors: {
          activity: temporalActivityInterceptors(),
          // A given bundle was made by bundleBookingWorkflows, interceptors included.
          ...(options.workflowBundle === undefined
            ? { workflowModules: [bookingWorkflowInterceptorsPath] }
            : {}),
        },
        sinks: workflowSpanSinks(),
        ...(queue !== standardTaskQueues.bookings
          ? {}
          : options.workflowBundle !== undefined
            ? { workflowBundle: options.workflowBundle }
            : { workflowsPath: bookingWorkflowsPath }),
      });
    }),
  );

  let running: Promise<void> | undefined;

  function stopRunning(): void {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  }

  return {
    workers,
    run() {
      running ??= Promise.all(
        workers.map((worker) =>
          worker.run().catch((error: unknown) => {
            logger.error({ err: error, taskQueue: worker.options.taskQueue }, 'worker failed');
            stopRunning();
            throw error;
          }),
        ),
      ).then(() => undefined);
      logger.info({ taskQueues: queues }, 'booking workers polling');
      return running;
    },
    async shutdown() {
      stopRunning();
      await running?.catch(() => undefined);
    },
  };
}
