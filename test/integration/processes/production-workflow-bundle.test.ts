// A production worker starts from the image's pre-built workflow bundle only: without a current one it refuses to start.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { BookingActivities } from '../../../src/activities/interface';
import { createLogger } from '../../../src/logger';
import { createBookingWorkers } from '../../../src/worker/booking-workers';
import { testConfig } from '../../support/database';
import { isolatedTaskQueues, quietTemporalRuntime } from '../../support/saga';

jest.setTimeout(60_000);

it('refuses to bundle the workflow code at start when the pre-built bundle is required and missing, saying why', async () => {
  quietTemporalRuntime();
  const config = testConfig({ WORKER_TASK_QUEUES: 'bookings' });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const empty = mkdtempSync(path.join(os.tmpdir(), 'workflow-bundle-required-'));
  try {
    const starting = createBookingWorkers({
      config,
      connection,
      // The workflow queue's worker registers these two; no worker gets far enough to run them.
      activities: {
        RecordBooking: () => Promise.resolve(),
        ReserveSeats: () => Promise.resolve(),
      } as Partial<BookingActivities> as BookingActivities,
      logger: createLogger({ level: 'silent', name: 'bundle-required-test' }),
      taskQueueNames: isolatedTaskQueues(),
      workflowBundleDirectory: empty,
      requirePrebuiltWorkflowBundle: true,
    });
    await expect(starting).rejects.toThrow(
      `workflow code: no pre-built workflow bundle in ${empty}; a production worker runs only the bundle`,
    );
  } finally {
    rmSync(empty, { recursive: true, force: true });
    await connection.close();
  }
});
