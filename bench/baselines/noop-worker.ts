// Baseline worker process: the no-op saga and the bare update-with-start, on task queues of their own.
// Run as `node --import tsx bench/baselines/noop-worker.ts`; prints one JSON line when polling.
import { NativeConnection, Worker } from '@temporalio/worker';
import type { NoopActivities } from './noop-workflows';
import { noopTaskQueues } from './noop-workflows';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const prefix = process.env.NOOP_TASK_QUEUE_PREFIX ?? 'bench-noop';
// The booking worker's own defaults (WORKER_MAX_CONCURRENT_*), so both get the same slots.
const maxConcurrentActivityTaskExecutions = Number(process.env.WORKER_MAX_CONCURRENT_ACTIVITIES ?? 50);
const maxConcurrentWorkflowTaskExecutions = Number(process.env.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS ?? 40);

const activities: NoopActivities = {
  ReserveSeats: () => Promise.resolve(),
  ConfirmSeats: () => Promise.resolve(),
  ProcessPayment: ({ bookingId }) => Promise.resolve({ transactionId: `noop-${bookingId}` }),
  RecordBooking: () => Promise.resolve(),
  SendEmailNotification: () => Promise.resolve(),
};

async function main(): Promise<void> {
  const startedAt = performance.now();
  const connection = await NativeConnection.connect({ address });
  const queues = noopTaskQueues(prefix);
  const shared = {
    connection,
    namespace,
    maxConcurrentActivityTaskExecutions,
    maxConcurrentWorkflowTaskExecutions,
  };
  // One worker per queue, as the booking worker process runs them: workflows on one, each activity family on its own.
  const workers = await Promise.all([
    Worker.create({
      ...shared,
      taskQueue: queues.bookings,
      workflowsPath: require.resolve('./noop-workflows'),
      activities: { RecordBooking: activities.RecordBooking },
    }),
    Worker.create({
      ...shared,
      taskQueue: queues.seats,
      activities: { ReserveSeats: activities.ReserveSeats, ConfirmSeats: activities.ConfirmSeats },
    }),
    Worker.create({
      ...shared,
      taskQueue: queues.payments,
      activities: { ProcessPayment: activities.ProcessPayment },
    }),
    Worker.create({
      ...shared,
      taskQueue: queues.notifications,
      activities: { SendEmailNotification: activities.SendEmailNotification },
    }),
  ]);
  const stop = () => workers.forEach((worker) => worker.shutdown());
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const running = Promise.all(workers.map((worker) => worker.run()));
  process.stdout.write(
    `${JSON.stringify({ ready: true, startSeconds: (performance.now() - startedAt) / 1000 })}\n`,
  );
  await running;
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(
    `noop worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
