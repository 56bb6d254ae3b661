// One Temporal Worker per configured task queue: workflows on `bookings`, each activity family on its own queue.
import {
  Worker,
  type NativeConnection,
  type WorkflowBundleOption,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { activitiesForTaskQueue } from '../activities';
import type { BookingActivities } from '../activities/interface';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { createBookingDataConverter } from '../security/temporal-payload-codec';
import { temporalActivityInterceptors, workflowSpanSinks } from '../observability/tracing-temporal';
import { taskQueues as standardTaskQueues, type TaskQueueNames } from '../domain/task-queues';
import {
  bundleBookingWorkflows,
  defaultWorkflowBundleDirectory,
  findPrebuiltWorkflowBundle,
} from './workflow-bundle';

export {
  bookingWorkflowInterceptorsPath,
  bookingWorkflowsPath,
  bundleBookingWorkflows,
} from './workflow-bundle';

export interface BookingWorkersOptions {
  config: Pick<Config, 'temporal' | 'worker' | 'encryption'>;
  connection: NativeConnection;
  activities: BookingActivities;
  logger: Logger;
  /** Standard queue names to serve; config.worker.taskQueues by default (one process may serve only payments). */
  taskQueues?: readonly string[];
  /** The actual queue names, when a deployment (or a test) isolates itself from others in the namespace. */
  taskQueueNames?: TaskQueueNames;
  /** Workflow code bundled already (tests reuse one); otherwise the pre-built bundle, or bundled at start. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Where `npm run build` wrote the pre-built bundle; the build output folder by default. */
  workflowBundleDirectory?: string;
  /**
   * Refuse to start rather than bundle from source (production): the image carries the bundle its build made, so
   * a missing or stale one means a broken image, and bundling would cost every new pod seconds of CPU at start.
   */
  requirePrebuiltWorkflowBundle?: boolean;
}

export interface BookingWorkers {
  readonly workers: readonly Worker[];
  /** Polls every queue until shutdown; if one worker fails, the others are stopped and the error is thrown. */
  run(): Promise<void>;
  /** Stops polling, lets tasks in flight finish, and resolves once every worker has stopped. */
  shutdown(): Promise<void>;
}

/**
 * The bundle a production worker starts from (`npm run build` wrote it; loading takes milliseconds), else the
 * workflow code bundled now with webpack (seconds), which is what development and a stale bundle get.
 */
async function workflowCode(options: BookingWorkersOptions): Promise<WorkflowBundleOption> {
  if (options.workflowBundle !== undefined) return options.workflowBundle;
  const started = Date.now();
  const found = findPrebuiltWorkflowBundle(options.workflowBundleDirectory ?? defaultWorkflowBundleDirectory);
  if (found.kind === 'prebuilt') {
    options.logger.info(
      { workflowBundle: found.codePath, checkedInMs: Date.now() - started },
      'workflow code: the pre-built bundle',
    );
    return { codePath: found.codePath };
  }
  if (options.requirePrebuiltWorkflowBundle === true) {
    throw new Error(
      `workflow code: ${found.reason}; a production worker runs only the bundle \`npm run build\` wrote and does not bundle at start`,
    );
  }
  const bundle = await bundleBookingWorkflows();
  options.logger.info(
    { reason: found.reason, bundledInMs: Date.now() - started },
    'workflow code: bundled from source at start',
  );
  return bundle;
}

export async function createBookingWorkers(options: BookingWorkersOptions): Promise<BookingWorkers> {
  const { config, connection, activities, logger } = options;
  const queues = options.taskQueues ?? config.worker.taskQueues;
  const workflowBundle = queues.includes(standardTaskQueues.bookings)
    ? await workflowCode(options)
    : undefined;
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
        maxConcurrentLocalActivityExecutions: config.worker.maxConcurrentLocalActivities,
        maxConcurrentWorkflowTaskExecutions: config.worker.maxConcurrentWorkflowTasks,
        interceptors: { activity: temporalActivityInterceptors() },
        sinks: workflowSpanSinks(),
        // Every open booking stays open until departure; a bounded cache keeps the worker's memory flat, and a
        // booking that was evicted is replayed from its short history when it next has work.
        maxCachedWorkflows: config.worker.maxCachedWorkflows,
        ...(queue === standardTaskQueues.bookings && workflowBundle !== undefined ? { workflowBundle } : {}),
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
