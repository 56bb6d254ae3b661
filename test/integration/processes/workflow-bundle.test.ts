// The pre-built workflow bundle: workers start from it while it is current, and bundle from source when it is not.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { NativeConnection } from '@temporalio/worker';
import type { BookingActivities } from '../../../src/activities/interface';
import { createLogger } from '../../../src/logger';
import { createBookingWorkers } from '../../../src/worker/booking-workers';
import {
  findPrebuiltWorkflowBundle,
  workflowBundleManifestName,
  writeWorkflowBundle,
} from '../../../src/worker/workflow-bundle';
import { testConfig } from '../../support/database';
import { isolatedTaskQueues, quietTemporalRuntime } from '../../support/saga';

// webpack bundles the workflow code twice on two shared cores.
jest.setTimeout(240_000);

let directory: string;
let manifest: string;

beforeAll(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'workflow-bundle-'));
  await writeWorkflowBundle(directory);
  manifest = readFileSync(path.join(directory, workflowBundleManifestName), 'utf8');
});

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

afterEach(() => {
  writeFileSync(path.join(directory, workflowBundleManifestName), manifest);
});

/** Log lines a worker writes, as parsed pino objects. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger({ level: 'info', name: 'bundle-test' }, destination), lines };
}

describe('findPrebuiltWorkflowBundle', () => {
  it('finds the bundle the build wrote while every file it was made from is unchanged', () => {
    const manifestFiles = (JSON.parse(manifest) as { files: { path: string }[] }).files.map((file) =>
      path.resolve(directory, file.path),
    );
    expect(manifestFiles).toContain(require.resolve('../../../src/workflows/booking.ts'));
    expect(findPrebuiltWorkflowBundle(directory)).toEqual({
      kind: 'prebuilt',
      codePath: path.join(directory, 'workflow-bundle.js'),
    });
  });

  it('refuses a bundle one of whose source files changed since it was built, naming the file', () => {
    const content = JSON.parse(manifest) as { files: { path: string; sha256: string }[] };
    const changed = content.files.find((file) => file.path.endsWith(path.join('workflows', 'booking.ts')));
    if (changed === undefined) throw new Error('the manifest does not list the booking workflow');
    changed.sha256 = '0'.repeat(64);
    writeFileSync(path.join(directory, workflowBundleManifestName), JSON.stringify(content));

    expect(findPrebuiltWorkflowBundle(directory)).toEqual({
      kind: 'source',
      reason: `${path.resolve(directory, changed.path)} changed since the workflow bundle was built`,
    });
  });

  it('bundles from source where no bundle was built', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'workflow-bundle-none-'));
    try {
      expect(findPrebuiltWorkflowBundle(empty)).toEqual({
        kind: 'source',
        reason: `no pre-built workflow bundle in ${empty}`,
      });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('createBookingWorkers', () => {
  it('loads the workflow code from the pre-built bundle and says so, with the configured workflow cache', async () => {
    quietTemporalRuntime();
    const config = testConfig({ WORKER_TASK_QUEUES: 'bookings', WORKER_MAX_CACHED_WORKFLOWS: '123' });
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const { logger, lines } = capturedLogger();
    try {
      const workers = await createBookingWorkers({
        config,
        connection,
        // The workflow queue's worker registers these two; this test runs no workflow.
        activities: {
          RecordBooking: () => Promise.resolve(),
          ReserveSeats: () => Promise.resolve(),
        } as Partial<BookingActivities> as BookingActivities,
        logger,
        taskQueueNames: isolatedTaskQueues(),
        workflowBundleDirectory: directory,
      });
      const running = workers.run();
      await workers.shutdown();
      await running;
      expect(workers.workers).toHaveLength(1);
      // The cache bound reaches the SDK worker, which would otherwise size it from the heap by its own rule.
      expect(workers.workers[0].options.maxCachedWorkflows).toBe(123);
      expect(lines.find((line) => line.msg === 'workflow code: the pre-built bundle')).toMatchObject({
        workflowBundle: path.join(directory, 'workflow-bundle.js'),
      });
      expect(lines.some((line) => line.msg === 'workflow code: bundled from source at start')).toBe(false);
    } finally {
      await connection.close();
    }
  });
});
