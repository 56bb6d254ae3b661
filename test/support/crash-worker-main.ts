// Worker process for the crash tests: serves a test's queues and dies at the crash point it is told.
//
// Started by startCrashWorker (crash-worker.ts), which documents its environment variables.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createWebhookDeliveryStarter } from '../../src/application/webhook-delivery-starter';
import { createBookingDataConverter } from '../../src/security/temporal-payload-codec';
import { createActivities, createActivityDependencies } from '../../src/activities';
import { createLogger } from '../../src/logger';
import type { BookingActivities } from '../../src/activities/interface';
import type { PaymentGateway } from '../../src/ports/payment-gateway';
import { createBookingWorkers } from '../../src/worker/booking-workers';
import type { TaskQueueNames } from '../../src/domain/task-queues';
import {
  crashPoints,
  crashWorkerReadyLine,
  crashWorkerVariables,
  workflowBundleFileName,
  type CrashPoint,
} from './crash-worker';
import { quietTemporalRuntime } from './saga';
import { testConfig } from './database';

function requiredVariable(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

/** SIGKILL: no cleanup, no answer to Temporal — as if the machine lost power mid-activity. */
function dieNow(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: the process was killed');
}

/** The gateway as is, except that the process dies right after an approved charge reached the ledger. */
function dyingAfterCharge(gateway: PaymentGateway): PaymentGateway {
  return {
    async charge(request) {
      const result = await gateway.charge(request);
      if (result.status === 'approved') dieNow();
      return result;
    },
    chargeMadeWith: (idempotencyKey) => gateway.chargeMadeWith(idempotencyKey),
    refund: (request) => gateway.refund(request),
    paymentIntent: (intentId) => gateway.paymentIntent(intentId),
    cancelPayment: (intentId, idempotencyKey) => gateway.cancelPayment(intentId, idempotencyKey),
    recentPayments: (since) => gateway.recentPayments(since),
  };
}

/** The activities as they are, except that the process dies once the reservation creating a booking committed. */
function dyingAfterFirstReservation(activities: BookingActivities): BookingActivities {
  return {
    ...activities,
    async ReserveSeats(input) {
      await activities.ReserveSeats(input);
      if (input.booking !== undefined) dieNow();
    },
  };
}

function crashPoint(): CrashPoint {
  const value = requiredVariable(crashWorkerVariables.killAt);
  const point = crashPoints.find((candidate) => candidate === value);
  if (point === undefined)
    throw new Error(`${crashWorkerVariables.killAt} must be one of ${crashPoints.join(', ')}`);
  return point;
}

async function main(): Promise<void> {
  quietTemporalRuntime();
  const taskQueueNames = JSON.parse(requiredVariable(crashWorkerVariables.taskQueues)) as TaskQueueNames;
  const bundleDirectory = requiredVariable(crashWorkerVariables.bundleDirectory);
  const webhookSettings = Object.entries(process.env).filter(
    (entry): entry is [string, string] => entry[0].startsWith('WEBHOOK_') && entry[1] !== undefined,
  );
  const config = testConfig({
    NOTIFICATIONS_OUTBOX_DIR: requiredVariable(crashWorkerVariables.outboxDirectory),
    ...Object.fromEntries(webhookSettings),
  });
  const logger = createLogger({ level: config.logLevel, name: 'crash-worker' });
  const dependencies = createActivityDependencies(config, logger);
  const killAt = crashPoint();
  const paymentGateway =
    killAt === 'after-charge' ? dyingAfterCharge(dependencies.paymentGateway) : dependencies.paymentGateway;
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const temporal = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: createBookingDataConverter(config),
  });
  const activities = createActivities({
    ...dependencies,
    paymentGateway,
    webhookDeliveries: createWebhookDeliveryStarter(temporal, {
      taskQueues: taskQueueNames,
      retryScheduleSeconds: config.webhooks.retryScheduleSeconds,
    }),
  });
  const workers = await createBookingWorkers({
    config,
    connection,
    activities: killAt === 'after-first-reservation' ? dyingAfterFirstReservation(activities) : activities,
    logger,
    taskQueueNames,
    workflowBundle: {
      code: readFileSync(path.join(bundleDirectory, workflowBundleFileName), 'utf8'),
      sourceMap: readFileSync(path.join(bundleDirectory, `${workflowBundleFileName}.map`), 'utf8'),
    },
  });
  const running = workers.run();
  process.stdout.write(`${crashWorkerReadyLine}\n`);
  await running;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `crash worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
